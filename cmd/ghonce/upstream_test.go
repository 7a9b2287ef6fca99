package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/fakegithub"
	"github.com/ghonce/ghonce/kinds"
	_ "github.com/ghonce/ghonce/reconcile" // registers the kinds whose tools the proxy guards
	"github.com/ghonce/ghonce/tests/harness"
)

// The real github-mcp-server (v1.9.0, pinned in tools/github-mcp-server)
// is the upstream of the proxy tests. Its GITHUB_HOST setting keeps only
// the host name (GitHub Enterprise at http://HOST/api/v3/, any port
// dropped), so its fake GitHub listens on port 80 of a loopback address of
// its own (127.0.0.2 and up), which needs root; CI runs as root.

// githubMCPServer returns the pinned github-mcp-server binary: the file
// GHONCE_GITHUB_MCP_SERVER names, else bin/github-mcp-server at the module
// root (`make github-mcp-server`). Without it the test is skipped, loudly;
// under CI=true it fails.
func githubMCPServer(t testing.TB) string {
	t.Helper()
	path, err := harness.GitHubMCPServer()
	if err != nil {
		skipOrFail(t, "%v", err)
	}
	return path
}

func skipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; CI=true, so the tests against the real github-mcp-server must run", msg)
	}
	t.Skipf("SKIPPED: %s; the tests against the real github-mcp-server did not run (CI runs them)", msg)
}

// loopback80 is harness.Loopback80, or the test skipped (failed under
// CI=true) where it cannot listen.
func loopback80(t testing.TB) (net.Listener, string) {
	t.Helper()
	l, host, err := harness.Loopback80()
	if err != nil {
		skipOrFail(t, "%v", err)
	}
	return l, host
}

// newUpstreamWorld is newWorld with its fake GitHub where github-mcp-server
// can reach it: env carries GITHUB_HOST and GITHUB_PERSONAL_ACCESS_TOKEN
// beside ghonce's GH_TOKEN and GITHUB_API_URL (the same fake, the same
// token).
func newUpstreamWorld(t *testing.T) (*world, string) {
	t.Helper()
	ghmcp := githubMCPServer(t)
	l, host := loopback80(t)
	w := newWorldWith(t, fixtures.Options{Listener: l})
	w.env = append(w.env, "GITHUB_HOST=http://"+host, "GITHUB_PERSONAL_ACCESS_TOKEN="+token)
	return w, ghmcp
}

// connect starts cmd and connects the Go SDK's client to it over stdio.
func connect(t *testing.T, cmd *exec.Cmd) (*sdk.ClientSession, *harness.SyncBuffer) {
	t.Helper()
	stderr := &harness.SyncBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "ghonce-test", Version: "1"}, nil).
		Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: time.Minute}, nil)
	if err != nil {
		t.Fatalf("start %s: %v\nstderr: %s", strings.Join(cmd.Args, " "), err, stderr)
	}
	t.Cleanup(func() { _ = cs.Close(); recordOutput(t, cmd.Args, "", stderr.String()) })
	return cs, stderr
}

func callTool(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	b, _ := json.Marshal(res)
	recordOutput(t, []string{"mcp", tool}, string(b), "")
	return res
}

func resultText(res *sdk.CallToolResult) string {
	var txt []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			txt = append(txt, tc.Text)
		}
	}
	return strings.Join(txt, "\n")
}

// The component itself: github-mcp-server, alone, against the fake, reads
// and writes the fake's repository. What the proxy tests build on.
func TestGitHubMCPServerAgainstTheFake(t *testing.T) {
	w, ghmcp := newUpstreamWorld(t)
	cmd := exec.Command(ghmcp, "stdio")
	cmd.Env = w.env
	cs, stderr := connect(t, cmd)

	res := callTool(t, cs, "get_me", map[string]any{})
	if res.IsError || !strings.Contains(resultText(res), login) {
		t.Fatalf("get_me: isError %v: %s, want %s\nstderr: %s", res.IsError, resultText(res), login, stderr)
	}
	w.push("fix-42")
	res = callTool(t, cs, "create_pull_request", map[string]any{"owner": owner, "repo": name, "title": "Fix #42", "head": "fix-42", "base": "main"})
	if res.IsError {
		t.Fatalf("create_pull_request: %s\nstderr: %s", resultText(res), stderr)
	}
	if prs := w.fake.PullRequests(owner, name); len(prs) != 1 || prs[0].Title != "Fix #42" {
		t.Fatalf("the fake's PRs after create_pull_request: %+v, want the one", prs)
	}
}

// startProxy starts `ghonce mcp --upstream -- github-mcp-server stdio`
// with w's ledger (task from GHONCE_TASK when task is not empty).
func (w *world) startProxy(ghmcp, task string, extra ...string) (*sdk.ClientSession, *harness.SyncBuffer, *exec.Cmd) {
	w.t.Helper()
	args := append([]string{"mcp", "--ledger", w.ledger}, extra...)
	args = append(args, "--upstream", "--", ghmcp, "stdio")
	cmd := exec.Command(bin, args...)
	cmd.Env = w.env
	if task != "" {
		cmd.Env = append(cmd.Env, "GHONCE_TASK="+task)
	}
	cs, stderr := connect(w.t, cmd)
	return cs, stderr, cmd
}

func listTools(t *testing.T, cs *sdk.ClientSession) []*sdk.Tool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out []*sdk.Tool
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		out = append(out, tool)
	}
	return out
}

// jsonOf is v as a generic JSON value, for comparisons.
func jsonOf(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// guardedTools are the tools the kinds' Faces name, which the proxy guards.
var guardedTools = func() []string {
	var out []string
	for _, k := range kinds.All() {
		f, _ := kinds.FaceOf(k)
		out = append(out, f.MCP...)
	}
	return out
}()

// tools/list through the proxy is github-mcp-server's own list: the same
// tools in the same order, each the same but the guarded write tools,
// which keep upstream's arguments (names, types, required) exactly, add
// only optional task and step, and say idempotentHint: true.
func TestMCPProxyListsUpstreamsTools(t *testing.T) {
	w, ghmcp := newUpstreamWorld(t)
	direct := exec.Command(ghmcp, "stdio")
	direct.Env = w.env
	dcs, _ := connect(t, direct)
	want := listTools(t, dcs)
	pcs, _, _ := w.startProxy(ghmcp, "ISSUE-42")
	got := listTools(t, pcs)

	if len(got) != len(want) {
		t.Fatalf("the proxy lists %d tools, github-mcp-server %d", len(got), len(want))
	}
	guarded := 0
	for i, g := range got {
		u := want[i]
		if g.Name != u.Name {
			t.Fatalf("tool %d: %s through the proxy, %s upstream: want upstream's order", i, g.Name, u.Name)
		}
		if !slices.Contains(guardedTools, u.Name) {
			if gj, uj := jsonOf(t, g), jsonOf(t, u); !reflect.DeepEqual(gj, uj) {
				t.Errorf("%s through the proxy:\n%v\nupstream:\n%v\nwant it untouched", g.Name, gj, uj)
			}
			continue
		}
		guarded++
		gs, us := jsonOf(t, g.InputSchema).(map[string]any), jsonOf(t, u.InputSchema).(map[string]any)
		gp, up := gs["properties"].(map[string]any), us["properties"].(map[string]any)
		for name, p := range up {
			if !reflect.DeepEqual(gp[name], p) {
				t.Errorf("%s.%s: %v through the proxy, %v upstream", g.Name, name, gp[name], p)
			}
		}
		for name := range gp {
			if _, ok := up[name]; !ok && name != "task" && name != "step" {
				t.Errorf("%s: argument %s added; want only task and step", g.Name, name)
			}
		}
		for _, name := range []string{"task", "step"} {
			if p, _ := gp[name].(map[string]any); p["type"] != "string" {
				t.Errorf("%s.%s: %v, want an optional string", g.Name, name, gp[name])
			}
		}
		if !reflect.DeepEqual(gs["required"], us["required"]) {
			t.Errorf("%s: required %v through the proxy, %v upstream", g.Name, gs["required"], us["required"])
		}
		if g.Annotations == nil || !g.Annotations.IdempotentHint || g.Annotations.ReadOnlyHint || g.Annotations.Title != u.Annotations.Title {
			t.Errorf("%s: annotations %+v, want upstream's %+v with idempotentHint true", g.Name, g.Annotations, u.Annotations)
		}
		if g.Title != u.Title {
			t.Errorf("%s: title %q, want upstream's %q", g.Name, g.Title, u.Title)
		}
	}
	// create_issue is of the granular issue tools, which the default
	// toolsets leave out: every other guarded tool is in the list.
	if listed := len(guardedTools) - 1; guarded != listed {
		t.Fatalf("%d of the %d guarded tools (create_issue aside) are in github-mcp-server's list", guarded, listed)
	}
}

// Through the proxy: a read tool answers as github-mcp-server does; a
// guarded write happens once per (task, step) even when re-issued with
// reworded text; issue_write's update passes through.
func TestMCPProxyReadsPassAndWritesHappenOnce(t *testing.T) {
	w, ghmcp := newUpstreamWorld(t)
	cs, stderr, _ := w.startProxy(ghmcp, "ISSUE-42")

	me := callTool(t, cs, "get_me", map[string]any{})
	if me.IsError || !strings.Contains(resultText(me), login) {
		t.Fatalf("get_me through the proxy: %s", resultText(me))
	}

	first := callTool(t, cs, "issue_write", mcpArgs("method", "create", "title", "Flaky test", "body", "Seen twice."))
	if first.IsError {
		t.Fatalf("issue_write create: %s\nstderr: %s", resultText(first), stderr)
	}
	again := callTool(t, cs, "issue_write", mcpArgs("method", "create", "title", "Flaky test", "body", "Seen again."))
	if again.IsError || !strings.Contains(resultText(again), "already done") {
		t.Fatalf("issue_write create again: %s", resultText(again))
	}
	issues := w.fake.Issues(owner, name)
	if len(issues) != 1 {
		t.Fatalf("after two issue_write creates: %d issues, want 1", len(issues))
	}
	upd := callTool(t, cs, "issue_write", mcpArgs("method", "update", "issue_number", issues[0].Number, "title", "Renamed"))
	if upd.IsError {
		t.Fatalf("issue_write update through the proxy: %s", resultText(upd))
	}
	if got := w.fake.Issues(owner, name); len(got) != 1 || got[0].Title != "Renamed" {
		t.Fatalf("after issue_write update: %+v, want the one issue renamed by upstream", got)
	}
	bad := callTool(t, cs, "issue_write", mcpArgs("method", "create", "title", "x", "assignees", []string{"a"}))
	if !bad.IsError || !strings.Contains(resultText(bad), "assignees") {
		t.Fatalf("issue_write create with assignees: %s, want a tool error naming assignees", resultText(bad))
	}
}

// An upstream that is not found, exits at once or does not speak MCP is a
// clear error naming the command, never a hang.
func TestMCPProxyBadUpstream(t *testing.T) {
	w := newWorld(t)
	for _, c := range []struct {
		name    string
		command []string
		exit    int
		want    string
	}{
		{"not found", []string{"/nonexistent/github-mcp-server", "stdio"}, 2, "not found"},
		{"exits at once", []string{"false"}, 1, "exited (exit status 1) before completing MCP's initialize"},
		{"not MCP", []string{"sh", "-c", "echo hello; exec sleep 60"}, 1, "is it an MCP server on stdio"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"mcp", "--ledger", w.ledger, "--upstream-timeout", "2s", "--upstream", "--"}, c.command...)
			o := w.exec(nil, nil, args...)
			wantExit(t, o, c.exit, "ghonce mcp --upstream -- "+strings.Join(c.command, " "))
			if !strings.Contains(o.Stderr, c.want) || !strings.Contains(o.Stderr, c.command[0]) {
				t.Fatalf("stderr %q: want it to name %s and say %q", o.Stderr, c.command[0], c.want)
			}
		})
	}
	o := w.exec(nil, nil, "mcp", "--ledger", w.ledger, "--upstream")
	wantExit(t, o, 2, "ghonce mcp --upstream with no command")
	o = w.exec(nil, nil, "mcp", "--ledger", w.ledger, "github-mcp-server")
	wantExit(t, o, 2, "ghonce mcp with a command but no --upstream")
}

// childOf returns the pid of the one child of pid (started by any of its
// threads).
func childOf(t *testing.T, pid int) int {
	t.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	if err != nil || len(tasks) == 0 {
		t.Skipf("SKIPPED: cannot read the children of a process here: %v", err)
	}
	var f []string
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err == nil {
			f = append(f, strings.Fields(string(b))...)
		}
	}
	if len(f) != 1 {
		t.Fatalf("process %d has children %q, want one (the upstream)", pid, f)
	}
	var child int
	fmt.Sscan(f[0], &child)
	return child
}

// The upstream's stderr reaches ghonce's, prefixed; when the upstream
// dies, ghonce restarts it and the next call works.
func TestMCPProxyRestartsTheUpstream(t *testing.T) {
	w, ghmcp := newUpstreamWorld(t)
	cs, stderr, cmd := w.startProxy(ghmcp, "ISSUE-42")
	if res := callTool(t, cs, "get_me", map[string]any{}); res.IsError {
		t.Fatalf("get_me: %s", resultText(res))
	}
	if !strings.Contains(stderr.String(), "upstream: GitHub MCP Server running on stdio") {
		t.Fatalf("ghonce's stderr %q: want github-mcp-server's own lines, prefixed upstream: ", stderr)
	}
	first := childOf(t, cmd.Process.Pid)
	if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The call waits for the restart; a read-only call that raced the
	// death is sent again to the new child.
	res := callTool(t, cs, "get_me", map[string]any{})
	if res.IsError || !strings.Contains(resultText(res), login) {
		t.Fatalf("get_me after the upstream was killed: %s\nstderr: %s", resultText(res), stderr)
	}
	if second := childOf(t, cmd.Process.Pid); second == first {
		t.Fatalf("the upstream's pid is still %d after it was killed", first)
	}
	if !strings.Contains(stderr.String(), "exited; restarting") {
		t.Fatalf("ghonce's stderr %q: want it to say it restarted the upstream", stderr)
	}
}

// creates counts the fake's requests to a tool's create endpoint (method
// and path) that created: answered 2xx, or committed and never answered
// (status 0: the server was killed at the commit).
func creates(w *world, method, path string) int {
	w.fake.WaitIdle()
	n := 0
	for _, q := range w.fake.Requests() {
		if q.Method == method && q.Path == path && q.Fault == nil && (q.Status == 0 || q.Status >= 200 && q.Status < 300) {
			n++
		}
	}
	return n
}

// The evidence, per guarded tool: the server is killed right after GitHub
// commits the create, restarted, and the call re-issued (a new session, so
// a new request id) with reworded text. Through ghonce: one artifact, and
// the result names it. github-mcp-server alone: the duplicate (or, for a
// branch, which GitHub itself keeps unique, an error for a create that
// happened).
func TestMCPProxyKilledAtCommitThenReissued(t *testing.T) {
	cases := []struct {
		tool            string
		kill            fixtures.CommitKind
		setup           func(w *world)
		method, path    func(w *world) string
		first, reworded func(w *world) map[string]any
		// unique: GitHub itself refuses the second (a branch).
		unique bool
	}{
		{tool: "create_pull_request", kill: fakegithub.KindPull,
			setup:  func(w *world) { w.push("fix-42"); w.push("fix-42-retry") },
			method: func(*world) string { return "POST" }, path: func(*world) string { return "/repos/" + repo + "/pulls" },
			first: func(*world) map[string]any {
				return mcpArgs("title", "Fix #42", "head", "fix-42", "base", "main", "body", "Generated fix.")
			},
			reworded: func(*world) map[string]any {
				return mcpArgs("title", "Fix issue 42", "head", "fix-42-retry", "base", "main", "body", "A reworded body.")
			}},
		{tool: "issue_write", kill: fakegithub.KindIssue,
			setup:  func(*world) {},
			method: func(*world) string { return "POST" }, path: func(*world) string { return "/repos/" + repo + "/issues" },
			first: func(*world) map[string]any {
				return mcpArgs("method", "create", "title", "Follow-up: flaky test", "body", "Seen twice today.")
			},
			reworded: func(*world) map[string]any {
				return mcpArgs("method", "create", "title", "Flaky test, follow-up", "body", "Seen again.")
			}},
		{tool: "add_issue_comment", kill: fakegithub.KindComment,
			setup: func(w *world) {
				w.number = w.fake.SeedIssue(owner, name, stranger, fixtures.SeedIssue{Title: "It crashes", Body: "On start."})
			},
			method: func(*world) string { return "POST" },
			path:   func(w *world) string { return fmt.Sprintf("/repos/%s/issues/%d/comments", repo, w.number) },
			first:  func(w *world) map[string]any { return mcpArgs("issue_number", w.number, "body", "Opened a fix.") },
			reworded: func(w *world) map[string]any {
				return mcpArgs("issue_number", w.number, "body", "I have opened a fix.")
			}},
		{tool: "create_branch", kill: fakegithub.KindRef, unique: true,
			setup:  func(*world) {},
			method: func(*world) string { return "POST" }, path: func(*world) string { return "/repos/" + repo + "/git/refs" },
			first: func(*world) map[string]any { return mcpArgs("branch", "release-prep") },
			reworded: func(*world) map[string]any {
				return mcpArgs("branch", "release-prep", "from_branch", "main")
			}},
		{tool: "create_or_update_file", kill: fakegithub.KindContent,
			setup:  func(*world) {},
			method: func(*world) string { return "PUT" }, path: func(*world) string { return "/repos/" + repo + "/contents/docs/CHANGELOG.md" },
			first: func(*world) map[string]any {
				return mcpArgs("path", "docs/CHANGELOG.md", "content", fileContent, "message", "changelog", "branch", "main")
			},
			reworded: func(w *world) map[string]any {
				// Alone, a retry that knows the file is there passes its sha.
				a := mcpArgs("path", "docs/CHANGELOG.md", "content", fileContent+"- and more\n", "message", "changelog, reworded", "branch", "main")
				if b, ok := w.fake.FileContent(owner, name, "main", "docs/CHANGELOG.md"); ok {
					a["sha"] = ghcheck.BlobSHA(b)
				}
				return a
			}},
	}
	for _, tc := range cases {
		for _, through := range []string{"ghonce", "alone"} {
			t.Run(tc.tool+"/"+through, func(t *testing.T) {
				t.Parallel()
				w, ghmcp := newUpstreamWorld(t)
				tc.setup(w)
				start := func() (*sdk.ClientSession, *exec.Cmd) {
					if through == "ghonce" {
						cs, _, cmd := w.startProxy(ghmcp, "ISSUE-42")
						return cs, cmd
					}
					cmd := exec.Command(ghmcp, "stdio")
					cmd.Env = w.env
					cs, _ := connect(t, cmd)
					return cs, cmd
				}
				cs, cmd := start()
				var killed atomic.Bool
				w.fake.OnCommit(func(cm *fixtures.Commit) {
					if cm.Kind == tc.kill && killed.CompareAndSwap(false, true) {
						harness.KillAndWaitDead(cmd.Process)
					}
				})
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tc.tool, Arguments: tc.first(w)})
				cancel()
				if err == nil || !killed.Load() {
					t.Fatalf("first call: err %v, killed %v; want the server killed at the %s commit", err, killed.Load(), tc.kill)
				}
				w.fake.OnCommit(nil)
				method, path := tc.method(w), tc.path(w)
				if n := creates(w, method, path); n != 1 {
					t.Fatalf("after the kill: %d creates (%s %s), want the 1 GitHub committed", n, method, path)
				}

				cs, _ = start()
				res := callTool(t, cs, tc.tool, tc.reworded(w))
				n := creates(w, method, path)
				if through == "alone" {
					if tc.unique {
						if !res.IsError || n != 1 {
							t.Fatalf("alone, the re-issued %s: isError %v, %d creates: want GitHub's refusal of a second, reported as an error for a create that happened", tc.tool, res.IsError, n)
						}
						return
					}
					if res.IsError || n != 2 {
						t.Fatalf("alone, the re-issued %s: isError %v (%s), %d creates; want the duplicate this test exists to show", tc.tool, res.IsError, resultText(res), n)
					}
					return
				}
				var r result
				b, _ := json.Marshal(res.StructuredContent)
				_ = json.Unmarshal(b, &r)
				if res.IsError || r.Outcome != "found" || n != 1 {
					t.Fatalf("through ghonce, the re-issued %s: isError %v, outcome %q, %d creates: %s; want found and the one create", tc.tool, res.IsError, r.Outcome, n, resultText(res))
				}
				if r.URL == "" && r.SHA == "" {
					t.Fatalf("through ghonce, the re-issued %s: result %+v names no artifact", tc.tool, r)
				}
			})
		}
	}
}

// docEntry is one client's server entry in docs/guide/mcp-proxy.md.
type docEntry struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// docEntries reads the entries of the guide's json and toml blocks.
func docEntries(t *testing.T) map[string]docEntry {
	t.Helper()
	b, err := os.ReadFile("../../docs/guide/mcp-proxy.md")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]docEntry{}
	blocks := strings.Split(string(b), "```")
	for i := 1; i < len(blocks); i += 2 {
		lang, body, _ := strings.Cut(blocks[i], "\n")
		switch lang {
		case "json":
			var f struct {
				MCPServers map[string]docEntry `json:"mcpServers"`
				Servers    map[string]docEntry `json:"servers"`
			}
			if err := json.Unmarshal([]byte(body), &f); err != nil {
				t.Fatalf("block %d: %v\n%s", i, err, body)
			}
			for k, e := range f.MCPServers {
				out["mcpServers "+k] = e
			}
			for k, e := range f.Servers {
				out["servers "+k] = e
			}
		case "toml":
			// command = "..." and args = [...] are JSON values too; env is
			// an inline table.
			var e docEntry
			for _, line := range strings.Split(body, "\n") {
				k, v, ok := strings.Cut(line, " = ")
				switch {
				case !ok:
				case k == "command":
					_ = json.Unmarshal([]byte(v), &e.Command)
				case k == "args":
					_ = json.Unmarshal([]byte(v), &e.Args)
				case k == "env":
					e.Env = map[string]string{}
					for _, kv := range strings.Split(strings.Trim(v, "{} "), ",") {
						ek, ev, _ := strings.Cut(kv, "=")
						e.Env[strings.TrimSpace(ek)] = strings.Trim(strings.TrimSpace(ev), `"`)
					}
				}
			}
			out["toml"] = e
		}
	}
	return out
}

// Each client entry in the guide starts one server in front of
// github-mcp-server whose guarded tools take task and step.
func TestMCPProxyGuideEntries(t *testing.T) {
	entries := docEntries(t)
	if len(entries) != 3 {
		t.Fatalf("the guide has %d server entries, want 3 (Claude Code, Codex, VS Code): %v", len(entries), entries)
	}
	w, ghmcp := newUpstreamWorld(t)
	if o := w.run("init", "--ledger", w.ledger); o.Exit != 0 {
		t.Fatalf("ghonce init: %+v", o)
	}
	for name, e := range entries {
		t.Run(name, func(t *testing.T) {
			if e.Command != "ghonce" || len(e.Args) == 0 {
				t.Fatalf("entry %+v: want command ghonce with arguments", e)
			}
			args := slices.Clone(e.Args)
			for i, a := range args {
				if a == "github-mcp-server" {
					args[i] = ghmcp
				}
			}
			cmd := exec.Command(bin, append([]string{"--ledger", w.ledger}, args...)...)
			cmd.Env = slices.Clone(w.env)
			for k, v := range e.Env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			cs, _ := connect(t, cmd)
			tools := listTools(t, cs)
			i := slices.IndexFunc(tools, func(tl *sdk.Tool) bool { return tl.Name == "issue_write" })
			if i < 0 || len(tools) < 20 {
				t.Fatalf("%d tools, issue_write at %d: want github-mcp-server's", len(tools), i)
			}
			if props, _ := asJSONMap(tools[i].InputSchema)["properties"].(map[string]any); props["task"] == nil {
				t.Fatalf("issue_write through the guide's entry has no task argument")
			}
		})
	}
}

func asJSONMap(v any) map[string]any {
	b, _ := json.Marshal(v)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// One token and one host serve both: given only github-mcp-server's
// (GITHUB_PERSONAL_ACCESS_TOKEN, GITHUB_HOST) or only ghonce's (GH_TOKEN,
// GITHUB_API_URL), a read (upstream's request) and a guarded create
// (ghonce's own) both reach the fake.
func TestMCPProxyBridgesTokenAndHost(t *testing.T) {
	for _, only := range []string{"github-mcp-server's", "ghonce's", "--github-host"} {
		t.Run(only, func(t *testing.T) {
			w, ghmcp := newUpstreamWorld(t)
			var flags []string
			drop := []string{"GH_TOKEN", "GITHUB_API_URL"}
			switch only {
			case "ghonce's":
				drop = []string{"GITHUB_PERSONAL_ACCESS_TOKEN", "GITHUB_HOST"}
			case "--github-host":
				for _, kv := range w.env {
					if h, ok := strings.CutPrefix(kv, "GITHUB_HOST="); ok {
						flags = []string{"--github-host", h}
					}
				}
				drop = []string{"GITHUB_API_URL", "GITHUB_HOST"}
			}
			w.env = w.envWithout(drop)
			cs, stderr, _ := w.startProxy(ghmcp, "ISSUE-42", flags...)
			if me := callTool(t, cs, "get_me", map[string]any{}); me.IsError || !strings.Contains(resultText(me), login) {
				t.Fatalf("get_me with only %s token and host: %s\nstderr: %s", only, resultText(me), stderr)
			}
			if res := callTool(t, cs, "issue_write", mcpArgs("method", "create", "title", "T")); res.IsError {
				t.Fatalf("issue_write with only %s token and host: %s\nstderr: %s", only, resultText(res), stderr)
			}
			if n := len(w.fake.Issues(owner, name)); n != 1 {
				t.Fatalf("%d issues, want 1", n)
			}
		})
	}
}

// --http serves the proxy over Streamable HTTP as it serves ghonce's own
// tools, here as a fleet replica does: on every interface, with a bearer
// token and the host names clients use; /healthz and /metrics answer a
// probe and a scrape by the pod's IP.
func TestMCPProxyOverHTTP(t *testing.T) {
	w, ghmcp := newUpstreamWorld(t)
	tokenFile := filepath.Join(t.TempDir(), "mcp-token")
	if err := os.WriteFile(tokenFile, []byte(serviceBearer+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, url, rest := startMCPHTTP(t, append(slices.Clone(w.env), "GHONCE_TASK=ISSUE-42"), "mcp", "--http", "0.0.0.0:0", "--allowed-host", "ghonce.internal",
		"--auth-token-file", tokenFile, "--ledger", w.ledger, "--upstream", "--", ghmcp, "stdio")
	go func() { _, _ = io.Copy(io.Discard, rest) }()
	url = strings.Replace(strings.Replace(url, "[::]", "127.0.0.1", 1), "0.0.0.0", "127.0.0.1", 1)
	base := strings.TrimSuffix(url, "/mcp")
	for _, path := range []string{"/healthz", "/metrics"} {
		req, _ := http.NewRequest("GET", base+path, nil)
		req.Host = "10.42.0.17:8765" // the pod's IP, as a kubelet or Prometheus sends it
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s by the pod's IP: %d, want 200", path, resp.StatusCode)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := sdk.NewClient(&sdk.Implementation{Name: "http", Version: "1"}, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url}, nil); err == nil {
		t.Fatal("a client without the bearer token connected")
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "http", Version: "1"}, nil).Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerTransport{}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if tools := listTools(t, cs); len(tools) < 20 {
		t.Fatalf("%d tools over HTTP, want github-mcp-server's", len(tools))
	}
	if me := callTool(t, cs, "get_me", map[string]any{}); me.IsError || !strings.Contains(resultText(me), login) {
		t.Fatalf("get_me over HTTP: %s", resultText(me))
	}
}

// The official TypeScript SDK as the client of the proxy, over stdio and
// Streamable HTTP: it sees github-mcp-server's tools, and issue_write's
// create happens once.
func TestMCPProxyWithTheTypeScriptSDK(t *testing.T) {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			skipOrFail(t, "%s is not installed, so the TypeScript SDK client did not run", tool)
		}
	}
	dir := nodeModules(t)
	w, ghmcp := newUpstreamWorld(t)
	w.env = append(w.env, "GHONCE_TASK=ISSUE-42")
	_, url, rest := startMCPHTTP(t, w.env, "mcp", "--http", "127.0.0.1:0", "--ledger", w.ledger, "--upstream", "--", ghmcp, "stdio")
	go func() { _, _ = io.Copy(io.Discard, rest) }()
	stdout := runNodeClient(t, dir, w.env, bin, w.ledger, url, ghmcp)
	type call struct {
		Structured result `json:"structured"`
		Text       string `json:"text"`
		IsError    bool   `json:"isError"`
	}
	var got struct {
		Stdio struct {
			Tools []struct {
				Name        string         `json:"name"`
				Annotations map[string]any `json:"annotations"`
			} `json:"tools"`
			First, Again, Bad call
		} `json:"stdio"`
		HTTP struct {
			Tools   int    `json:"tools"`
			Text    string `json:"text"`
			IsError bool   `json:"isError"`
		} `json:"http"`
	}
	oneJSON(t, string(stdout), &got)
	if len(got.Stdio.Tools) < 20 || got.HTTP.Tools != len(got.Stdio.Tools) {
		t.Errorf("the TypeScript client sees %d tools over stdio, %d over HTTP: want github-mcp-server's on both", len(got.Stdio.Tools), got.HTTP.Tools)
	}
	for _, tl := range got.Stdio.Tools {
		if tl.Name == "issue_write" && tl.Annotations["idempotentHint"] != true {
			t.Errorf("issue_write: annotations %v, want idempotentHint", tl.Annotations)
		}
	}
	f, a := got.Stdio.First, got.Stdio.Again
	if f.IsError || f.Structured.Outcome != "created" || a.IsError || a.Structured.Outcome != "skipped" || a.Structured.Number != f.Structured.Number {
		t.Errorf("issue_write twice through the proxy: %+v then %+v, want created then skipped, one issue", f, a)
	}
	if b := got.Stdio.Bad; !b.IsError || !strings.Contains(b.Text, "invalid arguments") {
		t.Errorf("add_issue_comment with issue_number 0: %+v, want a tool error saying invalid arguments", b)
	}
	if got.HTTP.IsError || !strings.Contains(got.HTTP.Text, login) {
		t.Errorf("get_me over HTTP: %+v", got.HTTP)
	}
	if n := len(w.fake.Issues(owner, name)); n != 1 {
		t.Errorf("%d issues on GitHub, want 1", n)
	}
}
