package mcp_test

// In-process tests: the real engine, a SQLite ledger in t.TempDir() and a
// fake GitHub (fixtures) on 127.0.0.1, driven by the Go SDK's own client
// over its in-memory transport. Assertions are on what a client sees (tool
// list, schemas, results, isError) and on the fake's state.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/fakegithub"
	"github.com/ghonce/ghonce/internal/mcp"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/observe"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
	"github.com/ghonce/ghonce/tests/testworld"
)

const (
	owner = testworld.Owner
	name  = testworld.Name
	repo  = testworld.Repo
	login = testworld.Login
	// token is distinctive so that a leak is found by a substring search.
	token = testworld.Token
	task  = "ISSUE-42"
)

type world struct {
	t      testing.TB
	fake   *fixtures.Server
	ledger ledger.Ledger
	cs     *sdk.ClientSession
	srv    *mcp.Server
	main   string
	// waiting receives the keys the engine logs it is waiting for.
	waiting chan string
	// texts collects every text a client saw, for the secrets check.
	mu    sync.Mutex
	texts []string
}

type opts struct {
	wait  time.Duration // engine's Wait; 0: 30s
	task  string        // server's default task; "-" for none
	token string        // token the server uses; "": the right one
	// metrics and tracer, if set, are the GitHub client's, the engine's
	// and the server's.
	metrics *observe.Metrics
	tracer  *observe.Tracer
	// onChange is the server's on-change policy; "": auto.
	onChange string
	// logf, if set, is told the server's and the engine's log lines too.
	logf func(format string, args ...any)
}

func newWorld(t testing.TB, o opts) *world {
	t.Helper()
	tw := testworld.New(t)
	w := &world{t: t, fake: tw.GitHub, main: tw.Main, waiting: make(chan string, 16)}
	l := tw.OpenLedger()
	w.ledger = l
	gh := tw.Client(ghcheck.Options{Token: o.token, Metrics: o.metrics, Tracer: o.tracer}) // "": testworld.Token
	eng := reconcile.New(reconcile.Config{
		Ledger: l, GitHub: gh, LedgerNew: l.Created, Wait: o.wait, Settle: -1, Metrics: o.metrics, Tracer: o.tracer,
		Logf: func(format string, args ...any) {
			if msg := fmt.Sprintf(format, args...); strings.Contains(msg, "waiting up to") {
				w.waiting <- strings.Fields(msg)[0]
			}
		},
	})
	logf := o.logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	defTask := task
	if o.task == "-" {
		defTask = ""
	} else if o.task != "" {
		defTask = o.task
	}
	srv, err := mcp.New(mcp.Config{
		Engine: eng, Ledger: l, Task: defTask, Metrics: o.metrics, Tracer: o.tracer, OnChange: o.onChange, Logf: logf,
	})
	if err != nil {
		t.Fatal(err)
	}
	w.srv = srv
	w.reconnect()
	t.Cleanup(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, s := range w.texts {
			if strings.Contains(s, token) || strings.Contains(s, testworld.SecretPrefix) {
				t.Errorf("a token appears in a tool result: %s", s)
			}
		}
	})
	return w
}

// reconnect connects a new client session, as an agent restarted after a
// crash does: what the server told the old session, the new one never heard.
func (w *world) reconnect() {
	w.t.Helper()
	ctx := context.Background()
	ct, st := sdk.NewInMemoryTransports()
	ss, err := w.srv.SDK().Connect(ctx, st, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { _ = ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { _ = cs.Close() })
	w.cs = cs
}

// call calls a tool and returns its result; a protocol error fails the test.
func (w *world) call(tool string, args map[string]any) *sdk.CallToolResult {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := w.cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		w.t.Fatalf("%s: protocol error %v, want a tool result", tool, err)
	}
	b, _ := json.Marshal(res)
	w.mu.Lock()
	w.texts = append(w.texts, string(b))
	w.mu.Unlock()
	return res
}

func text(r *sdk.CallToolResult) string {
	var out []string
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			out = append(out, tc.Text)
		}
	}
	return strings.Join(out, "\n")
}

// ok calls a write tool, wants no error and returns its structured output.
func (w *world) ok(tool string, args map[string]any) (mcp.Output, string) {
	w.t.Helper()
	res := w.call(tool, args)
	if res.IsError {
		w.t.Fatalf("%s: isError: %s", tool, text(res))
	}
	var out mcp.Output
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		w.t.Fatalf("%s: structuredContent %s: %v", tool, b, err)
	}
	return out, text(res)
}

// fails calls a tool and wants isError with a text containing want.
func (w *world) fails(tool string, args map[string]any, want ...string) string {
	w.t.Helper()
	res := w.call(tool, args)
	if !res.IsError {
		w.t.Fatalf("%s: no error, want one saying %q; got %s", tool, want, text(res))
	}
	msg := text(res)
	for _, s := range want {
		if !strings.Contains(msg, s) {
			w.t.Fatalf("%s: error %q, want it to say %q", tool, msg, s)
		}
	}
	return msg
}

func (w *world) writes() int {
	n := 0
	for _, r := range w.fake.Requests() {
		if r.Method != "GET" && r.Method != "HEAD" {
			n++
		}
	}
	return n + w.fake.Writes()
}

func args(kv ...any) map[string]any {
	m := map[string]any{"owner": owner, "repo": name}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// toolCase is one write tool: its first arguments, reworded ones for a
// retry, and how many of our artifacts of its kind the fake holds.
type toolCase struct {
	tool, kind, target string
	setup              func(w *world) (first, reworded map[string]any)
	count              func(w *world) int
}

func toolCases() []toolCase {
	return []toolCase{
		{tool: "create_pull_request", kind: "pr", target: "main",
			setup: func(w *world) (map[string]any, map[string]any) {
				w.fake.SetRef(owner, name, "fix-42", w.fake.AddCommit(owner, name, "main"))
				return args("title", "Fix #42", "head", "fix-42", "base", "main", "body", "Generated fix."),
					args("title", "Fix issue 42 (retry)", "head", "fix-42", "base", "main", "body", "Reworded.")
			},
			count: func(w *world) int { return len(w.fake.PullRequests(owner, name)) },
		},
		{tool: "create_issue", kind: "issue",
			setup: func(w *world) (map[string]any, map[string]any) {
				return args("title", "Follow-up: flaky test", "body", "Seen twice."),
					args("title", "Flaky test follow-up", "body", "Seen twice today.")
			},
			count: func(w *world) int { return len(w.fake.Issues(owner, name)) - 1 }, // minus the seeded one
		},
		{tool: "add_issue_comment", kind: "comment", target: "1",
			setup: func(w *world) (map[string]any, map[string]any) {
				return args("issue_number", 1, "body", "Opened a fix."), args("issue_number", 1, "body", "I opened a fix.")
			},
			count: func(w *world) int { return len(w.fake.Comments(owner, name, 1)) },
		},
		{tool: "create_branch", kind: "branch", target: "release-prep",
			setup: func(w *world) (map[string]any, map[string]any) {
				return args("branch", "release-prep"), args("branch", "release-prep", "from_branch", "main")
			},
			count: func(w *world) int {
				if _, ok := w.fake.Branch(owner, name, "release-prep"); ok {
					return 1
				}
				return 0
			},
		},
		{tool: "create_or_update_file", kind: "file", target: "main:docs/CHANGELOG.md",
			setup: func(w *world) (map[string]any, map[string]any) {
				return args("path", "docs/CHANGELOG.md", "content", "# Changelog\n", "message", "changelog", "branch", "main"),
					args("path", "docs/CHANGELOG.md", "content", "# Changelog\n\n- more\n", "message", "changelog again", "branch", "main")
			},
			count: func(w *world) int {
				if _, ok := w.fake.FileContent(owner, name, "main", "docs/CHANGELOG.md"); ok {
					return 1
				}
				return 0
			},
		},
	}
}

// Every write tool: created; then, with the text reworded (a title, a
// comment's body), the facts for the agent to judge and no write; with the
// step named, skipped with payload_changed and no write; one artifact. The
// key is the CLI's for the same task and target (its default step is the
// CLI verb's).
func TestEveryWriteToolHappensOnce(t *testing.T) {
	for _, c := range toolCases() {
		t.Run(c.tool, func(t *testing.T) {
			w := newWorld(t, opts{})
			w.fake.SeedIssue(owner, name, login, fixtures.SeedIssue{Title: "It crashes", Body: "On start."})
			first, reworded := c.setup(w)
			out, msg := w.ok(c.tool, first)
			if out.Outcome != "created" || out.Kind != c.kind || out.Task != task || !strings.HasPrefix(msg, "created ") {
				t.Fatalf("first call: %+v %q, want created %s for task %s", out, msg, c.kind, task)
			}
			if out.URL == "" && out.SHA == "" {
				t.Fatalf("first call: %+v, want a url or sha", out)
			}
			if n := c.count(w); n != 1 {
				t.Fatalf("after the first call: %d artifacts, want 1", n)
			}
			step := map[string]string{"pr": "pr-create", "issue": "issue-create", "comment": "issue-comment", "branch": "branch-create", "file": "file-put"}[c.kind]
			if want := taskkey.Key(taskkey.Identity{Task: task, Step: step, Kind: c.kind, Repo: repo, Target: c.target}); out.Key != want || out.Step != step {
				t.Fatalf("key %s step %s, want the CLI's %s for step %s", out.Key, out.Step, want, step)
			}
			writes := w.writes()
			w.reconnect() // the agent restarted: its retry, reworded
			if c.kind == "pr" || c.kind == "issue" || c.kind == "comment" {
				w.fails(c.tool, reworded, out.URL, "If this call is that one again, it is done: do not call again", "[same_or_another: the CLI's exit 7")
			}
			again, msg := w.ok(c.tool, maps(reworded, "step", step))
			if again.Outcome != "skipped" || again.Key != out.Key || !strings.HasPrefix(msg, "already done in an earlier attempt") {
				t.Fatalf("second call: %+v %q, want skipped, same key, 'already done'", again, msg)
			}
			if again.URL != out.URL || again.SHA != out.SHA || again.Number != out.Number {
				t.Fatalf("second call names %+v, want the first's %+v", again, out)
			}
			if c.kind != "branch" && (!again.PayloadChanged || !strings.Contains(msg, "new step") || len(again.Changed) == 0) {
				t.Fatalf("reworded call: payload_changed %v, changed %v, text %q; want true, the fields, and a hint to pass a new step", again.PayloadChanged, again.Changed, msg)
			}
			if w.writes() != writes || c.count(w) != 1 {
				t.Fatalf("second call: %d writes, %d artifacts; want 0 and 1", w.writes()-writes, c.count(w))
			}
			// A new step is a new artifact (where GitHub allows two).
			if c.kind == "comment" || c.kind == "issue" {
				next := maps(reworded, "step", "second")
				if o, _ := w.ok(c.tool, next); o.Outcome != "created" || o.Key == out.Key || c.count(w) != 2 {
					t.Fatalf("call with a new step: %+v, %d artifacts; want created with a new key, 2", o, c.count(w))
				}
			}
		})
	}
}

func maps(m map[string]any, kv ...any) map[string]any {
	out := make(map[string]any, len(m)+len(kv)/2)
	for k, v := range m {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// The tool list: the tools the kinds' Faces name, under github-mcp-server
// v1.9.0's names, required arguments exactly as it requires them, every
// field of the kind as an argument of its type, optional task and step,
// idempotentHint and an output schema with the --json fields (the drift
// test compares the whole schemas with the pinned server's).
func TestToolsSchemasAndAnnotations(t *testing.T) {
	w := newWorld(t, opts{})
	res, err := w.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// The write tools and their arguments, from the kinds' Faces; what
	// github-mcp-server requires, from its tools as pinned.
	writes := map[string][]string{} // tool: its kinds
	for _, k := range kinds.All() {
		f, _ := kinds.FaceOf(k)
		for _, tool := range f.MCP {
			writes[tool] = append(writes[tool], k)
		}
	}
	b, err := os.ReadFile(mcp.GitHubMCPToolsFile)
	if err != nil {
		t.Fatal(err)
	}
	var pinned []sdk.Tool
	if err := json.Unmarshal(b, &pinned); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{}
	for _, tl := range pinned {
		raw, _ := json.Marshal(tl.InputSchema)
		var schema struct{ Required []string }
		_ = json.Unmarshal(raw, &schema)
		want[tl.Name] = schema.Required
	}
	seen, args := map[string]bool{}, map[string]map[string]json.RawMessage{} // args: a write tool's schemas by argument
	for _, tl := range res.Tools {
		seen[tl.Name] = true
		b, _ := json.Marshal(tl)
		var got struct {
			Title       string `json:"title"`
			Description string `json:"description"`
			InputSchema struct {
				Type       string                     `json:"type"`
				Required   []string                   `json:"required"`
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"inputSchema"`
			OutputSchema struct {
				Required   []string                   `json:"required"`
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"outputSchema"`
			Annotations map[string]any `json:"annotations"`
		}
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatal(err)
		}
		if got.Annotations["idempotentHint"] != true || got.Annotations["destructiveHint"] == true || got.Annotations["title"] == "" {
			t.Errorf("%s: annotations %v, want idempotentHint true, not destructive, and a title", tl.Name, got.Annotations)
		}
		req, isWrite := want[tl.Name]
		if _, ok := writes[tl.Name]; !isWrite || !ok {
			if isWrite || ok {
				t.Errorf("%s: a kind's Face names it %v, github-mcp-server as pinned has it %v: want both", tl.Name, ok, isWrite)
			}
			if got.Annotations["readOnlyHint"] != true {
				t.Errorf("%s: readOnlyHint %v, want true", tl.Name, got.Annotations["readOnlyHint"])
			}
			continue
		}
		if r := slices.Sorted(slices.Values(got.InputSchema.Required)); !slices.Equal(r, slices.Sorted(slices.Values(req))) {
			t.Errorf("%s: required %v, want exactly %v (github-mcp-server's)", tl.Name, r, req)
		}
		for _, a := range []string{"task", "step"} {
			if _, ok := got.InputSchema.Properties[a]; !ok {
				t.Errorf("%s: no %q argument", tl.Name, a)
			}
		}
		args[tl.Name] = got.InputSchema.Properties
		if !strings.Contains(got.Description, "same task and step") || !strings.Contains(got.Description, "new step") {
			t.Errorf("%s: description %q does not tell the model that the same task and step happen once", tl.Name, got.Description)
		}
		for _, f := range []string{"key", "outcome", "number", "url", "sha", "payload_changed"} {
			if _, ok := got.OutputSchema.Properties[f]; !ok {
				t.Errorf("%s: output schema has no %q", tl.Name, f)
			}
		}
	}
	for _, n := range []string{"ghonce_status", "ghonce_key"} {
		if !seen[n] {
			t.Errorf("tool %s is not listed", n)
		}
	}
	for n, ks := range writes {
		if !seen[n] {
			t.Errorf("tool %s (%v) is not listed", n, ks)
		}
	}
	// Every field a kind takes on MCP is an argument of its tools, of its
	// type.
	for _, k := range kinds.All() {
		f, _ := kinds.FaceOf(k)
		for _, fl := range f.Fields {
			a := fl.MCPArg()
			if a == "" || len(f.MCP) == 0 {
				continue
			}
			ty := kinds.FieldTypes(k)[fl.Name]
			jt := map[reflect.Kind]string{reflect.Bool: "boolean", reflect.Int: "number", reflect.Int64: "number", reflect.Slice: "array"}[ty.Kind()]
			taken := false
			for _, tool := range f.MCP {
				raw, ok := args[tool][a]
				taken = taken || ok
				if ok && jt != "" && ty != reflect.TypeFor[[]byte]() && !strings.Contains(string(raw), `"type":"`+jt+`"`) {
					t.Errorf("%s: %s's argument %s is %s, want type %s", k, tool, a, raw, jt)
				}
			}
			if !taken {
				t.Errorf("%s: no tool of %v takes %s's argument %q", k, f.MCP, fl.Name, a)
			}
		}
	}
}

// Killed after GitHub made the PR, in process: the ledger is left
// attempting (as a crash leaves it) and the next call finds the PR.
func TestUnconfirmedThenTheSameCallFindsIt(t *testing.T) {
	w := newWorld(t, opts{})
	w.fake.SetRef(owner, name, "fix-42", w.fake.AddCommit(owner, name, "main"))
	w.fake.Inject(fixtures.Fault{Kind: fixtures.Status504AfterCommit, Match: func(r *http.Request) bool {
		return r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/pulls")
	}})
	pr := args("title", "Fix #42", "head", "fix-42", "base", "main")
	w.fails("create_pull_request", pr, "unconfirmed", "Call this tool again with the same arguments")
	st := w.call("ghonce_status", nil)
	if !strings.Contains(text(st), "attempting") {
		t.Fatalf("ghonce_status after an unconfirmed call: %s, want the entry attempting", text(st))
	}
	out, msg := w.ok("create_pull_request", pr)
	if out.Outcome != "found" || !strings.Contains(msg, "already done in an earlier attempt: PR #") || len(w.fake.PullRequests(owner, name)) != 1 {
		t.Fatalf("retry: %+v %q, %d PRs; want found, one PR", out, msg, len(w.fake.PullRequests(owner, name)))
	}
}

// Bad input and refusals are tool errors (isError), never protocol errors,
// with the CLI's meaning.
func TestErrorsAreToolErrors(t *testing.T) {
	w := newWorld(t, opts{wait: -1})
	w.fails("add_issue_comment", args("issue_number", 1.5, "body", "x"), "invalid arguments", "issue_number", "[usage: the CLI's exit 2")
	w.fails("add_issue_comment", args("body", "x"), "issue_number")
	w.fails("add_issue_comment", args("issue_number", 1, "body", " \n\t "), "invalid arguments", "body is empty")
	w.fails("create_issue", args("title", "   ", "body", "b"), "invalid arguments", "title is empty")
	w.fails("create_pull_request", args("title", "T", "head", "a b", "base", "main"), "invalid arguments")
	w.fails("create_issue", map[string]any{"owner": "o/x", "repo": name, "title": "T"}, "invalid arguments", "owner and repo", "not a repository")
	w.fails("create_branch", args("branch", "x", "from_branch", "no-such-branch"), `"no-such-branch"`, "no such branch, tag or commit", "nothing was created")
	w.fails("ghonce_key", args("tool", "delete_repository"), "unknown tool")
	w.fails("ghonce_key", args("tool", "create_pull_request"), "invalid arguments: base is empty")
	w.fails("ghonce_key", args("tool", "add_issue_comment"), "invalid arguments", "issue_number")
	w.fails("ghonce_key", args("tool", "create_or_update_file", "branch", "main"), "invalid arguments", `invalid path ""`)
	// ghonce_key refuses a target the write tool refuses, in its words.
	write := w.fails("create_branch", args("branch", "bad..branch"), "invalid arguments")
	key := w.fails("ghonce_key", args("tool", "create_branch", "branch", "bad..branch"), "invalid arguments")
	if first := func(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }; first(write) != first(key) || strings.Count(key, "invalid arguments") != 1 {
		t.Errorf("create_branch says %q, ghonce_key %q; want the same words, once", write, key)
	}

	// A branch of that name at an unrelated commit is someone else's.
	w.fake.SetRef(owner, name, "taken", w.fake.AddOrphanCommit(owner, name))
	w.fails("create_branch", args("branch", "taken"), "refused", "conflict", "[conflict: the CLI's exit 1, key gk1_")

	// Another holder of the key: in progress elsewhere.
	k := taskkey.Key(taskkey.Identity{Task: task, Step: "issue-create", Kind: "issue", Repo: repo})
	if _, err := w.ledger.Claim(context.Background(), ledger.ClaimParams{Key: k, Task: task, Step: "issue-create", Kind: "issue", Repo: repo,
		Owner: reconcile.NewOwner(), Lease: time.Hour, Why: "test"}); err != nil {
		t.Fatal(err)
	}
	w.fails("create_issue", args("title", "T"), "in progress elsewhere", "Call again", "[in_progress: the CLI's exit 4, key "+k)
	if n := len(w.fake.Issues(owner, name)); n != 0 {
		t.Fatalf("%d issues after refused calls, want 0", n)
	}
}

func TestNoTaskAnywhereIsAToolError(t *testing.T) {
	w := newWorld(t, opts{task: "-"})
	w.fails("create_issue", args("title", "T"), "no task", "pass task")
	if out, _ := w.ok("create_issue", args("title", "T", "task", "T-1")); out.Task != "T-1" {
		t.Fatalf("task argument: %+v, want task T-1", out)
	}
}

// A token GitHub rejects: the error says so and never carries the token.
func TestRejectedTokenNeverInTheResult(t *testing.T) {
	w := newWorld(t, opts{token: "ghp_GHONCEtestSECRET_wrong_0000"})
	msg := w.fails("create_issue", args("title", "T"))
	if strings.Contains(msg, "ghp_") {
		t.Fatalf("error carries the token: %s", msg)
	}
}

// Two identical calls at once through one server: one does the work, the
// other waits for it and answers with the same PR.
func TestConcurrentIdenticalCallsMakeOnePR(t *testing.T) {
	w := newWorld(t, opts{})
	w.fake.SetRef(owner, name, "fix-42", w.fake.AddCommit(owner, name, "main"))
	release := make(chan struct{})
	w.fake.OnCommit(func(c *fixtures.Commit) {
		if c.Kind == fakegithub.KindPull {
			<-release // hold the first PR's answer until the second call is waiting
		}
	})
	pr := args("title", "Fix #42", "head", "fix-42", "base", "main")
	outs := make([]mcp.Output, 2)
	var wg sync.WaitGroup
	for i := range outs {
		wg.Add(1)
		go func() { defer wg.Done(); outs[i], _ = w.ok("create_pull_request", pr) }()
	}
	<-w.waiting
	close(release)
	wg.Wait()
	if outs[0].Key != outs[1].Key || outs[0].Number != outs[1].Number || len(w.fake.PullRequests(owner, name)) != 1 {
		t.Fatalf("two concurrent calls: %+v and %+v, %d PRs; want one PR named by both", outs[0], outs[1], len(w.fake.PullRequests(owner, name)))
	}
	got := []string{outs[0].Outcome, outs[1].Outcome}
	slices.Sort(got)
	if got[0] != "created" || got[1] != "skipped" {
		t.Fatalf("outcomes %v, want one created and one skipped", got)
	}
}

// ghonce_status lists this task's entries; ghonce_key gives the key a call
// would use and its status.
func TestStatusAndKey(t *testing.T) {
	w := newWorld(t, opts{})
	w.fake.SeedIssue(owner, name, login, fixtures.SeedIssue{Title: "It crashes", Body: "On start."})
	k := w.call("ghonce_key", args("tool", "add_issue_comment", "issue_number", 1))
	var ko mcp.KeyOutput
	b, _ := json.Marshal(k.StructuredContent)
	_ = json.Unmarshal(b, &ko)
	if want := taskkey.Key(taskkey.Identity{Task: task, Step: "issue-comment", Kind: "comment", Repo: repo, Target: "1"}); ko.Key != want || ko.Status != "none" {
		t.Fatalf("ghonce_key before the call: %+v, want key %s, status none", ko, want)
	}
	out, _ := w.ok("add_issue_comment", args("issue_number", 1, "body", "Opened a fix."))
	if out.Key != ko.Key {
		t.Fatalf("the call used key %s, ghonce_key said %s", out.Key, ko.Key)
	}
	st := w.call("ghonce_status", nil)
	var so mcp.StatusOutput
	b, _ = json.Marshal(st.StructuredContent)
	_ = json.Unmarshal(b, &so)
	if so.Task != task || len(so.Entries) != 1 || so.Entries[0].Key != out.Key || so.Entries[0].Status != "done" || so.Entries[0].URL != out.URL {
		t.Fatalf("ghonce_status: %+v, want this task's one done entry with the comment's URL", so)
	}
	for r, n := range map[string]int{"HELLO-WORLD": 1, "other": 0} {
		st := w.call("ghonce_status", map[string]any{"owner": "Octo-Org", "repo": r})
		b, _ = json.Marshal(st.StructuredContent)
		var so mcp.StatusOutput
		_ = json.Unmarshal(b, &so)
		if len(so.Entries) != n {
			t.Fatalf("ghonce_status of Octo-Org/%s: %d entries, want %d (repositories compare without case)", r, len(so.Entries), n)
		}
	}
	if other := w.call("ghonce_status", map[string]any{"task": "OTHER"}); !strings.Contains(text(other), "nothing done yet") {
		t.Fatalf("ghonce_status of another task: %s", text(other))
	}
}

// Streamable HTTP: the same server, its tools and one ledger, for clients
// that want HTTP; a request whose Host is not a loopback name is refused
// (DNS rebinding).
func TestStreamableHTTP(t *testing.T) {
	w := newWorld(t, opts{})
	ts := httptest.NewServer(w.srv.Handler(mcp.HTTPOptions{}))
	t.Cleanup(ts.Close)
	ctx := context.Background()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "http-test", Version: "1"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "create_issue", Arguments: args("title", "Over HTTP")})
	if err != nil || res.IsError {
		t.Fatalf("create_issue over HTTP: %v %+v", err, res)
	}
	// The in-memory client sees what the HTTP one did: one server, one ledger.
	if out, _ := w.ok("create_issue", args("title", "Over HTTP")); out.Outcome != "skipped" || len(w.fake.Issues(owner, name)) != 1 {
		t.Fatalf("the same call in another session: %+v, %d issues; want skipped, 1", out, len(w.fake.Issues(owner, name)))
	}

	req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Host = "attacker.example"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a request with Host attacker.example: status %d, want 403", resp.StatusCode)
	}
}

func TestHTTPAddressMustBeLoopback(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:8765": true, "[::1]:8765": true, "localhost:8765": true, "127.0.0.1:0": true,
		"0.0.0.0:8765": false, ":8765": false, "192.168.1.2:8765": false, "127.0.0.1": false, "example.com:80": false,
	} {
		if err := mcp.CheckAddress(addr, false); (err == nil) != ok {
			t.Errorf("CheckAddress(%q) without authentication = %v, want ok %v", addr, err, ok)
		}
	}
}

// BenchmarkSkippedCall is the cost of a call the ledger already answers
// (the common retry): one tools/call over the in-memory transport, schema
// validation, a ledger read, no GitHub request.
func BenchmarkSkippedCall(b *testing.B) {
	w := newWorld(b, opts{})
	w.ok("create_issue", args("title", "T"))
	before := len(w.fake.Requests())
	for b.Loop() {
		w.ok("create_issue", args("title", "T"))
	}
	if n := len(w.fake.Requests()) - before; n != 0 {
		b.Fatalf("%d GitHub requests for skipped calls, want 0", n)
	}
}

// Task and step ids follow the one rule (taskkey.CheckID) on every tool:
// " T-1" and "T-1\n" are T-1, an id with a newline inside is refused.
func TestIdsByOneRule(t *testing.T) {
	w := newWorld(t, opts{task: "-"})
	first, _ := w.ok("create_issue", args("title", "T", "task", " T-1"))
	if first.Task != "T-1" {
		t.Fatalf("task ' T-1' recorded as %q, want T-1", first.Task)
	}
	if again, _ := w.ok("create_issue", args("title", "T", "task", "T-1\n")); again.Key != first.Key || again.Outcome != "skipped" {
		t.Fatalf("task 'T-1\\n': %+v, want the same key, skipped", again)
	}
	w.fails("create_issue", args("title", "T", "task", "T-1\nT-2"), "invalid arguments", "control character")
	w.fails("create_issue", args("title", "T", "task", "T-1", "step", "a\nb"), "invalid arguments", "control character")
	w.fails("ghonce_key", args("tool", "create_issue", "task", "T-1\nT-2"), "invalid arguments", "control character")
	w.fails("ghonce_status", map[string]any{"task": "T-1\nT-2"}, "invalid arguments", "control character")
	if out, _ := w.ok("ghonce_key", args("tool", "create_issue", "task", "T-1", "step", " s\n")); out.Step != "s" {
		t.Errorf("ghonce_key with step ' s\\n' says step %q, want s", out.Step)
	}
	if n := len(w.fake.Issues(owner, name)); n != 1 {
		t.Fatalf("%d issues, want 1", n)
	}
}

// create_or_update_file's sha is the blob the agent read: if the file has
// changed since, the write is refused and the other change survives; with
// the sha it read last, the write goes through.
func TestFileShaGuardsAgainstOverwritingAnotherChange(t *testing.T) {
	w := newWorld(t, opts{})
	first, _ := w.ok("create_or_update_file", args("path", "NOTES.md", "content", "v1\n", "message", "m", "branch", "main", "step", "notes-1"))
	// Someone else edits the file after the agent read v1.
	w.ok("create_or_update_file", args("path", "NOTES.md", "content", "theirs\n", "message", "m", "branch", "main", "step", "someone-else"))
	w.fails("create_or_update_file", args("path", "NOTES.md", "content", "v2\n", "message", "m", "branch", "main", "step", "notes-2", "sha", first.SHA),
		"changed it since", "[refused")
	if got, _ := w.fake.FileContent(owner, name, "main", "NOTES.md"); string(got) != "theirs\n" {
		t.Fatalf("file = %q after a refused write, want the other change kept", got)
	}
	theirs := ghcheck.BlobSHA([]byte("theirs\n"))
	if out, _ := w.ok("create_or_update_file", args("path", "NOTES.md", "content", "v2\n", "message", "m", "branch", "main", "step", "notes-3", "sha", theirs)); out.Outcome != "created" {
		t.Fatalf("write with the current sha: %+v, want created", out)
	}
}

// issue_write (method create) and its alias create_issue are one tool to
// the key: the same task files one issue; method update needs the
// upstream.
func TestIssueWriteAndItsAliasShareTheKey(t *testing.T) {
	w := newWorld(t, opts{})
	first, _ := w.ok("issue_write", args("method", "create", "title", "Flaky test in auth", "body", "B"))
	w.reconnect() // a restarted agent's retry
	again, _ := w.ok("create_issue", args("title", "Flaky test in auth"))
	if first.Outcome != "created" || again.Outcome != "skipped" || again.Key != first.Key || len(w.fake.Issues(owner, name)) != 1 {
		t.Fatalf("issue_write then create_issue: %+v then %+v, %d issues; want one issue, one key", first, again, len(w.fake.Issues(owner, name)))
	}
	w.fails("issue_write", args("method", "update", "issue_number", first.Number, "title", "U"), "invalid arguments", "ghonce mcp --upstream")
	w.fails("create_pull_request", args("title", "T", "head", "h", "base", "main", "reviewers", []string{"x"}), "invalid arguments", "reviewers")
}

// Issue 37: a call under a done key whose text differs is never answered
// with the first artifact as success unless something besides the text
// shows it is that act: it is a tool error with the facts (the first
// artifact, both texts, the step for another), in the same session or a
// new one. Followed as it says, neither way makes a duplicate or loses the
// second act: a retry stops, another act passes the step and is created.
func TestAChangedTextGetsTheFacts(t *testing.T) {
	w := newWorld(t, opts{})
	w.fake.SeedIssue(owner, name, login, fixtures.SeedIssue{Title: "It crashes", Body: "On start."})
	first, _ := w.ok("create_issue", args("title", "Release 1.4.0", "body", "Notes."))
	for _, session := range []string{"the same session", "a new session"} {
		msg := w.fails("create_issue", args("title", "Release v1.4.0", "body", "Notes."), first.URL, `title "Release 1.4.0"`, `title is "Release v1.4.0"`,
			"If this call is that one again, it is done: do not call again", `call again with step "issue-create-release-v1-4-0"`)
		if strings.Contains(msg, "reads as another") || strings.Contains(msg, "refused") {
			t.Fatalf("%s: the facts judge the call: %s", session, msg)
		}
		w.reconnect()
	}
	if n := len(w.fake.Issues(owner, name)); n != 2 {
		t.Fatalf("%d issues after the reworded retries, want the seeded one and the first", n)
	}
	second, _ := w.ok("create_issue", args("title", "Follow-up: docs typo in README", "body", "A typo.", "step", "issue-create-follow-up-docs-typo-in-readme"))
	if second.Outcome != "created" || second.URL == first.URL {
		t.Fatalf("another act with the step the facts name: %+v", second)
	}
	// Comments: "started", then "done".
	w.ok("add_issue_comment", args("issue_number", 1, "body", "Started."))
	w.fails("add_issue_comment", args("issue_number", 1, "body", "Done."), `body "Started."`, `step "issue-comment-done"`)
}

// Issue 28: a tool acts only on the arguments its published schema lists.
// create_issue's (github-mcp-server's) has no labels, so labels are refused
// there, by name, with nothing created, and applied through issue_write,
// whose schema lists them.
func TestArgumentsTheSchemaOmitsAreRefused(t *testing.T) {
	w := newWorld(t, opts{})
	w.fails("create_issue", args("title", "T", "labels", []string{"bug"}), "invalid arguments", "create_issue has no argument labels", "its arguments are body, owner, repo, step, task, title", "nothing was created")
	w.fails("add_issue_comment", args("issue_number", 1, "body", "b", "in_reply_to", 7), "has no argument in_reply_to")
	if n := w.writes(); n != 0 {
		t.Fatalf("%d writes after refused calls, want 0", n)
	}
	out, _ := w.ok("issue_write", args("method", "create", "title", "T", "labels", []string{"bug"}))
	if iss := w.fake.Issues(owner, name); out.Outcome != "created" || len(iss) != 1 {
		t.Fatalf("issue_write with labels: %+v, %d issues; want one created", out, len(iss))
	}
}
