package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/mcp"
	"github.com/ghonce/ghonce/offgithub"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/tests/testworld"
)

// changedCommentSchema is add_issue_comment as a newer github-mcp-server
// (v1.10.1) changed it: a body that must not be empty, an integer
// comment_id and issue_number, and an argument ghonce has never heard of.
var changedCommentSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"owner":         map[string]any{"type": "string", "description": "Repository owner"},
		"repo":          map[string]any{"type": "string", "description": "Repository name"},
		"issue_number":  map[string]any{"type": "integer", "minimum": 1, "description": "Issue or pull request number"},
		"body":          map[string]any{"type": "string", "minLength": 1, "description": "Comment content (not empty)"},
		"comment_id":    map[string]any{"type": "integer", "minimum": 1, "description": "Comment to react to"},
		"reaction":      map[string]any{"type": "string", "enum": []any{"+1", "eyes"}},
		"reaction_note": map[string]any{"type": "string", "description": "an argument ghonce does not know"},
	},
	"required": []any{"owner", "repo", "issue_number"},
}

// changedUpstream is an upstream whose tools differ from the pinned
// github-mcp-server's: add_issue_comment's schema changed, a tool was
// added (issue_comment_write), create_branch's branch is renamed, and the
// file and issue tools ghonce guards are not there. Every call is recorded (recordCall).
func changedUpstream() error {
	srv := sdk.NewServer(&sdk.Implementation{Name: "github-mcp-server", Version: "v1.10.1-fake"}, nil)
	record := func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		n, _, err := recordCall(r.Params.Name, r.Params.Arguments)
		if err != nil {
			return nil, err
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("%s call %d", r.Params.Name, n)}}}, nil
	}
	srv.AddTool(&sdk.Tool{Name: "add_issue_comment", Description: "Add a comment or reaction.", InputSchema: changedCommentSchema,
		Annotations: &sdk.ToolAnnotations{Title: "Add comment"}}, record)
	// create_branch with its branch argument renamed: ghonce cannot guard
	// it by its kind.
	srv.AddTool(&sdk.Tool{Name: "create_branch", Description: "Create a branch.", InputSchema: map[string]any{"type": "object", "properties": map[string]any{
		"owner": map[string]any{"type": "string"}, "repo": map[string]any{"type": "string"}, "name": map[string]any{"type": "string"},
	}}}, record)
	srv.AddTool(&sdk.Tool{Name: "issue_comment_write", Description: "A tool added upstream.", InputSchema: map[string]any{"type": "object"}}, record)
	return srv.Run(context.Background(), &sdk.StdioTransport{})
}

// Issue 28: the proxy keeps working when its upstream's schemas change
// under it. A guarded tool is published with the schema of the upstream
// that is running (plus task and step), guarded through the engine with
// arguments of that schema's types, and a call that is not the create it
// guards (a reaction) goes upstream as it came, arguments ghonce does not
// know included. A guarded tool the upstream lacks is named at start.
func TestProxyFollowsItsUpstreamsSchemas(t *testing.T) {
	ctx := context.Background()
	calls := callsFile(t)
	_ = os.Remove(calls)
	t.Cleanup(func() { _ = os.Remove(calls) })
	tw := testworld.New(t)
	l := tw.OpenLedger()
	issue := tw.GitHub.SeedIssue(testworld.Owner, testworld.Name, testworld.Login, fixtures.SeedIssue{Title: "It crashes", Body: "On start."})
	eng := reconcile.New(reconcile.Config{Ledger: l, GitHub: tw.Client(ghcheck.Options{}), Settle: -1})
	argv, env := fakeUpstreamCommand(t)
	env = append(env, fakeUpstreamEnv+"=changed") // the last one wins
	var logMu sync.Mutex
	var logged []string
	logf := func(format string, a ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		logged = append(logged, fmt.Sprintf(format, a...))
	}
	p, err := mcp.NewProxy(ctx, mcp.Config{Engine: eng, Off: offgithub.New(offgithub.Config{Ledger: l, Settle: -1}), Ledger: l, Task: task, Logf: logf}, mcp.Upstream{Command: argv, Env: env, Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	logMu.Lock()
	start := strings.Join(logged, "\n")
	logMu.Unlock()
	for _, want := range []string{"github-mcp-server lists none of the tools ghonce guards for the kinds", "issue (create_issue, issue_write)", "file (create_or_update_file)",
		"upstream's create_branch has no argument branch, which ghonce needs", "it goes through the generic guard instead"} {
		if !strings.Contains(start, want) {
			t.Errorf("at start ghonce said %q; want it to say %q", start, want)
		}
	}
	if strings.Contains(start, "comments (") || strings.Contains(start, "branches (") {
		t.Errorf("at start ghonce said %q, but the upstream does list add_issue_comment and create_branch", start)
	}

	ct, st := sdk.NewInMemoryTransports()
	ss, err := p.SDK().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })

	// Published: upstream's schema as it is now, with task and step.
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var comment *sdk.Tool
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		if tl.Name == "add_issue_comment" {
			comment = tl
		}
	}
	if !slices.Equal(names, []string{"add_issue_comment", "create_branch", "issue_comment_write"}) || comment == nil {
		t.Fatalf("tools through the proxy: %v, want upstream's (add_issue_comment, create_branch, issue_comment_write)", names)
	}
	got := asMap(t, comment.InputSchema)
	props := got["properties"].(map[string]any)
	for _, own := range []string{"task", "step"} {
		if _, ok := props[own]; !ok {
			t.Errorf("add_issue_comment through the proxy has no %s argument", own)
		}
		delete(props, own)
	}
	sameJSON(t, "add_issue_comment's input schema (without task and step)", got, changedCommentSchema)

	// Guarded: an integer issue_number, as the new schema says, goes
	// through the engine; upstream is never asked.
	call := func(args map[string]any) *sdk.CallToolResult {
		t.Helper()
		r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "add_issue_comment", Arguments: args})
		if err != nil {
			t.Fatalf("add_issue_comment %v: protocol error %v", args, err)
		}
		return r
	}
	a := map[string]any{"owner": testworld.Owner, "repo": testworld.Name, "issue_number": issue, "body": "Started."}
	first, again := call(a), call(a)
	if first.IsError || again.IsError || !strings.Contains(text(first), "created comment on #") || !strings.Contains(text(again), "already done") {
		t.Fatalf("guarded add_issue_comment twice: %q then %q; want created, then already done", text(first), text(again))
	}
	if n := len(tw.GitHub.Comments(testworld.Owner, testworld.Name, issue)); n != 1 {
		t.Fatalf("%d comments on GitHub, want 1", n)
	}
	if n := upstreamCalls(calls, "add_issue_comment"); n != 0 {
		t.Fatalf("upstream was asked %d times for a guarded comment, want 0", n)
	}

	// Passed through: a reaction, with an integer comment_id and an
	// argument ghonce does not know, reaches upstream byte for byte.
	raw := json.RawMessage(fmt.Sprintf(`{"owner":%q,"repo":%q,"issue_number":%d,"comment_id":7,"reaction":"eyes","reaction_note":"seen"}`, testworld.Owner, testworld.Name, issue))
	r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "add_issue_comment", Arguments: raw})
	if err != nil || r.IsError || text(r) != "add_issue_comment call 1" {
		t.Fatalf("a reaction through the proxy: %v %v, want upstream's answer", err, r)
	}
	b, _ := os.ReadFile(calls)
	if want := "add_issue_comment " + string(raw) + "\n"; string(b) != want {
		t.Fatalf("upstream got %q, want the reaction's arguments as sent: %q", b, want)
	}

	// Not guardable by its kind: the generic guard, once per identical
	// arguments, never the kind's refusal of an argument it does not know.
	br := map[string]any{"owner": testworld.Owner, "repo": testworld.Name, "name": "release-prep"}
	for range 2 {
		r, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "create_branch", Arguments: br})
		if err != nil || r.IsError || text(r) != "create_branch call 1" {
			t.Fatalf("create_branch with upstream's arguments: %v %v, want upstream's first answer", err, r)
		}
	}
	if n := upstreamCalls(calls, "create_branch"); n != 1 {
		t.Fatalf("upstream was asked %d times for one create_branch, want 1", n)
	}
}
