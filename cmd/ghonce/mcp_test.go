package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/fakegithub"
	"github.com/ghonce/ghonce/tests/harness"
)

// mcpServer is one `ghonce mcp` process with a client session over its
// stdin and stdout.
type mcpServer struct {
	w      *world
	cmd    *exec.Cmd
	cs     *sdk.ClientSession
	stderr *harness.SyncBuffer
}

// startMCP starts `ghonce mcp` with w's ledger and task ISSUE-42, and
// connects the Go SDK's client to it.
func (w *world) startMCP() *mcpServer {
	w.t.Helper()
	return w.connectMCP(w.ledger, w.env)
}

// connectMCP starts `ghonce mcp --ledger loc --task ISSUE-42` with env and
// connects the Go SDK's client to it.
func (w *world) connectMCP(loc string, env []string) *mcpServer {
	w.t.Helper()
	cmd := exec.Command(bin, "mcp", "--ledger", loc, "--task", "ISSUE-42")
	cmd.Env = env
	m := &mcpServer{w: w, cmd: cmd, stderr: &harness.SyncBuffer{}}
	cmd.Stderr = m.stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Close waits this long for the server to exit on its own once its
	// input is closed; a server that does not hangs the test, never passes.
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "crash-test", Version: "1"}, nil).
		Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 10 * time.Minute}, nil)
	if err != nil {
		w.t.Fatalf("start ghonce mcp: %v\nstderr: %s", err, m.stderr)
	}
	m.cs = cs
	w.t.Cleanup(func() { _ = cs.Close(); recordOutput(w.t, cmd.Args[1:], "", m.stderr.String()) })
	return m
}

// call calls tool; err is a protocol or transport error (the process died).
func (m *mcpServer) call(tool string, args map[string]any) (*sdk.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := m.cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err == nil {
		b, _ := json.Marshal(res)
		recordOutput(m.w.t, []string{"mcp", tool}, string(b), "")
	}
	return res, err
}

// ok calls tool, wants a result that is not an error and returns its
// structuredContent as the CLI's --json result.
func (m *mcpServer) ok(tool string, args map[string]any) (result, string) {
	m.w.t.Helper()
	res, err := m.call(tool, args)
	if err != nil {
		m.w.t.Fatalf("%s: %v\nstderr: %s", tool, err, m.stderr)
	}
	var txt []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			txt = append(txt, tc.Text)
		}
	}
	if res.IsError {
		m.w.t.Fatalf("%s: isError: %s", tool, strings.Join(txt, "\n"))
	}
	var r result
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &r); err != nil {
		m.w.t.Fatalf("%s: structuredContent %s: %v", tool, b, err)
	}
	return r, strings.Join(txt, "\n")
}

func mcpArgs(kv ...any) map[string]any {
	m := map[string]any{"owner": owner, "repo": name}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// The real binary over stdio, for every kind: killed right after GitHub
// committed the write, restarted, the same call with reworded arguments
// finds it (one artifact, outcome found, no write but a PR's missing
// labels); a third call returns the stored result with no request at all.
func TestMCPKilledAtCommitThenTheSameCallFindsIt(t *testing.T) {
	byName := map[string]kindCase{}
	for _, c := range kindCases() {
		byName[c.name] = c
	}
	cases := []struct {
		kind            string // a kindCases name: its setup, mine and same
		tool            string
		first, reworded func(w *world) map[string]any
	}{
		{"pr create", "create_pull_request",
			func(*world) map[string]any {
				return mcpArgs("title", "Fix #42", "head", "fix-42", "base", "main", "body", "Generated fix.")
			},
			func(*world) map[string]any {
				return mcpArgs("title", "Fix issue 42", "head", "fix-42", "base", "main", "body", "A reworded body.")
			}},
		{"issue create", "create_issue",
			func(*world) map[string]any {
				return mcpArgs("title", "Follow-up: flaky test", "body", "Seen twice today.")
			},
			func(*world) map[string]any { return mcpArgs("title", "Flaky test, follow-up", "body", "Seen again.") }},
		{"issue comment", "add_issue_comment",
			func(w *world) map[string]any { return mcpArgs("issue_number", w.number, "body", "Opened a fix.") },
			func(w *world) map[string]any {
				return mcpArgs("issue_number", w.number, "body", "I have opened a fix.")
			}},
		{"branch create", "create_branch",
			func(*world) map[string]any { return mcpArgs("branch", "release-prep") },
			func(*world) map[string]any { return mcpArgs("branch", "release-prep", "from_branch", "main") }},
		{"file put", "create_or_update_file",
			func(*world) map[string]any {
				return mcpArgs("path", "docs/CHANGELOG.md", "content", fileContent, "message", "changelog", "branch", "main")
			},
			func(*world) map[string]any {
				return mcpArgs("path", "docs/CHANGELOG.md", "content", fileContent+"- and more\n", "message", "changelog, reworded", "branch", "main")
			}},
	}
	for _, tc := range cases {
		t.Run(tc.tool, func(t *testing.T) {
			t.Parallel()
			c := byName[tc.kind]
			w := newWorld(t)
			c.setup(w) // the world the CLI case needs; its command line is not used

			first := w.startMCP()
			var killed atomic.Bool
			w.fake.OnCommit(func(cm *fixtures.Commit) {
				if cm.Kind == c.kill && killed.CompareAndSwap(false, true) {
					harness.KillAndWaitDead(first.cmd.Process)
				}
			})
			if _, err := first.call(tc.tool, tc.first(w)); err == nil || !killed.Load() {
				t.Fatalf("first call: err %v, killed %v; want the server killed at the %s commit", err, killed.Load(), c.kill)
			}
			w.fake.OnCommit(nil)
			made := c.mine(w)
			if len(made) != 1 {
				t.Fatalf("after the kill: %d artifacts of ours, want the 1 GitHub committed", len(made))
			}

			second := w.startMCP()
			writes, before := w.counts()
			r, msg := second.ok(tc.tool, tc.reworded(w))
			if r.Outcome != "found" || !strings.HasPrefix(msg, "already done in an earlier attempt") {
				t.Fatalf("call after the restart: %+v %q, want found, 'already done in an earlier attempt'", r, msg)
			}
			after := c.mine(w)
			if len(after) != 1 || after[0].Desc != made[0].Desc || !c.same(r, after[0]) {
				t.Fatalf("after the restart: our artifacts %+v (result %+v), want exactly the one made before %+v", after, r, made)
			}
			mended := 0
			for _, q := range w.fake.Requests()[before:] {
				if q.Method != "GET" {
					// Mending creates the key label (its colour and
					// description), then adds the labels.
					if c.kill == fakegithub.KindPull && q.Method == "POST" && (q.Path == fmt.Sprintf("/repos/%s/issues/%d/labels", repo, r.Number) || q.Path == fmt.Sprintf("/repos/%s/labels", repo)) {
						mended++
						continue
					}
					t.Fatalf("the call that found it sent %s %s, want no write but mending a PR's labels", q.Method, q.Path)
				}
			}
			if w2, _ := w.counts(); w2-writes > 2*mended {
				t.Fatalf("the call that found it made %d writes, want none but the label mend", w2-writes)
			}

			_, reqs := w.counts()
			again, msg := second.ok(tc.tool, tc.first(w))
			if again.Outcome != "skipped" || again.Key != r.Key || !c.same(again, after[0]) || !strings.Contains(msg, "already done") {
				t.Fatalf("third call: %+v %q, want skipped with the same key and artifact", again, msg)
			}
			if _, r2 := w.counts(); r2 != reqs {
				t.Fatalf("third call sent %d requests to GitHub, want 0", r2-reqs)
			}
			if n := len(c.mine(w)); n != 1 {
				t.Fatalf("after three calls: %d artifacts of ours, want 1", n)
			}
			// The server exits by itself, with status 0, when its input closes.
			if err := second.cs.Close(); err != nil {
				t.Fatalf("ghonce mcp after stdin closed: %v, want exit 0\nstderr: %s", err, second.stderr)
			}
		})
	}
}

// Without a token, `ghonce mcp` refuses to start (exit 2), saying why.
func TestMCPWithoutTokenOrOnANonLoopbackAddress(t *testing.T) {
	w := newWorld(t)
	o := w.execEnv(nil, w.envWithout([]string{"GH_TOKEN"}), "mcp", "--ledger", w.ledger)
	wantExit(t, o, 2, "ghonce mcp without a token")
	if !strings.Contains(o.Stderr, "GH_TOKEN") {
		t.Fatalf("stderr %q does not say which variable to set", o.Stderr)
	}
	o = w.exec(nil, nil, "mcp", "--ledger", w.ledger, "--http", "0.0.0.0:0")
	wantExit(t, o, 2, "ghonce mcp --http 0.0.0.0:0")
	if !strings.Contains(o.Stderr, "loopback") {
		t.Fatalf("stderr %q does not say the address must be loopback", o.Stderr)
	}
}
