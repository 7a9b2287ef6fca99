package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/mcp"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/offgithub"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/tests/testworld"
)

// fakeUpstreamEnv makes this test binary an upstream MCP server on stdio
// (fakeUpstream) instead of running the tests: the proxy's child.
const fakeUpstreamEnv = "GHONCE_TEST_FAKE_UPSTREAM"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeUpstreamEnv); mode != "" {
		run := fakeUpstream
		if mode == "changed" {
			run = changedUpstream
		}
		if err := run(); err != nil {
			fmt.Fprintln(os.Stderr, "fake upstream:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeUpstream is an MCP server with a bit of everything the proxy passes
// through: tools (read-only and not), progress, logging, cancellation,
// _meta, prompts, resources and templates, completions and a tool list
// that changes.
func fakeUpstream() error {
	srv := sdk.NewServer(&sdk.Implementation{Name: "fake-upstream", Version: "1"}, &sdk.ServerOptions{
		Instructions: "fake upstream instructions",
		CompletionHandler: func(_ context.Context, r *sdk.CompleteRequest) (*sdk.CompleteResult, error) {
			return &sdk.CompleteResult{Completion: sdk.CompletionResultDetails{Values: []string{r.Params.Argument.Value + "-completed"}}}, nil
		},
	})
	ro := &sdk.ToolAnnotations{ReadOnlyHint: true, Title: "Echo"}
	obj := map[string]any{"type": "object"}
	// echo: its arguments and _meta back, byte for byte, after a progress
	// notification and a log message.
	srv.AddTool(&sdk.Tool{Name: "echo", Description: "echo it", InputSchema: obj, Annotations: ro, Meta: sdk.Meta{"x-up": "tool-meta"}},
		func(ctx context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if tok := r.Params.GetProgressToken(); tok != nil {
				_ = r.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "half"})
			}
			_ = r.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "info", Logger: "fake", Data: "echoing"})
			meta, _ := json.Marshal(r.Params.Meta)
			return &sdk.CallToolResult{
				Content: []sdk.Content{&sdk.TextContent{Text: string(r.Params.Arguments)}, &sdk.TextContent{Text: string(meta)}},
				Meta:    sdk.Meta{"x-result": "kept"},
			}, nil
		})
	// slow: waits to be cancelled, and says so in a log message.
	srv.AddTool(&sdk.Tool{Name: "slow", InputSchema: obj, Annotations: ro},
		func(ctx context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			_ = r.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "info", Data: "slow started"})
			<-ctx.Done()
			_ = r.Session.Log(context.Background(), &sdk.LoggingMessageParams{Level: "info", Data: "slow cancelled"})
			return nil, ctx.Err()
		})
	// grow: adds a tool (list changed).
	srv.AddTool(&sdk.Tool{Name: "grow", InputSchema: obj},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			srv.AddTool(&sdk.Tool{Name: "late", InputSchema: obj}, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "late"}}}, nil
			})
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "grown"}}}, nil
		})
	// count, die and die_again are write tools (no readOnlyHint): each
	// call is recorded in the file $GHONCE_TEST_UPSTREAM_CALLS, which
	// outlives a restart; die and die_again exit at their first call with
	// given arguments, after recording it, as if killed mid-call;
	// die_again says idempotentHint.
	for _, tool := range []struct {
		name       string
		die        bool
		idempotent bool
	}{{"count", false, false}, {"die", true, false}, {"die_again", true, true}} {
		srv.AddTool(&sdk.Tool{Name: tool.name, InputSchema: obj, Annotations: &sdk.ToolAnnotations{IdempotentHint: tool.idempotent}},
			func(_ context.Context, r *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				n, same, err := recordCall(tool.name, r.Params.Arguments)
				if err != nil {
					return nil, err
				}
				if tool.die && same == 1 {
					os.Exit(3)
				}
				return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("%s call %d", tool.name, n)}}}, nil
			})
	}
	srv.AddPrompt(&sdk.Prompt{Name: "greet", Arguments: []*sdk.PromptArgument{{Name: "who", Required: true}}},
		func(_ context.Context, r *sdk.GetPromptRequest) (*sdk.GetPromptResult, error) {
			return &sdk.GetPromptResult{Messages: []*sdk.PromptMessage{{Role: "user", Content: &sdk.TextContent{Text: "hello " + r.Params.Arguments["who"]}}}}, nil
		})
	srv.AddResource(&sdk.Resource{Name: "readme", URI: "file:///readme", MIMEType: "text/plain"},
		func(_ context.Context, r *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: r.Params.URI, Text: "read me"}}}, nil
		})
	srv.AddResourceTemplate(&sdk.ResourceTemplate{Name: "file", URITemplate: "file:///{path}"},
		func(_ context.Context, r *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: r.Params.URI, Text: "templated"}}}, nil
		})
	return srv.Run(context.Background(), &sdk.StdioTransport{})
}

// recordCall appends the call to the calls file and returns how many
// calls of name, and of name with these arguments, it now holds.
func recordCall(name string, args json.RawMessage) (n, same int, err error) {
	path := os.Getenv("GHONCE_TEST_UPSTREAM_CALLS")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return 0, 0, err
	}
	line := name + " " + string(args)
	if _, err := fmt.Fprintln(f, line); err != nil {
		return 0, 0, err
	}
	if err := f.Close(); err != nil {
		return 0, 0, err
	}
	b, _ := os.ReadFile(path)
	for _, l := range strings.Split(string(b), "\n") {
		if l == line {
			same++
		}
	}
	return upstreamCalls(path, name), same, nil
}

// upstreamCalls is how many calls of name reached the upstream.
func upstreamCalls(path, name string) int {
	b, _ := os.ReadFile(path)
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, name+" ") {
			n++
		}
	}
	return n
}

// fakeUpstreamCommand is the command line that starts fakeUpstream.
func fakeUpstreamCommand(t *testing.T) ([]string, []string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, "-test.run=^$"}, append(os.Environ(), fakeUpstreamEnv+"=1", "GHONCE_TEST_UPSTREAM_CALLS="+callsFile(t))
}

// callsFile is the test's file of upstream calls (recordCall).
func callsFile(t *testing.T) string {
	return filepath.Join(os.TempDir(), "ghonce-upstream-calls-"+strings.ReplaceAll(t.Name(), "/", "_"))
}

// newProxy starts a proxy in front of fakeUpstream, with a real engine on a
// fake GitHub, and connects a client to it in process; events receives
// what the client is told (progress, log messages, tools changed).
func newProxy(t *testing.T) (*sdk.ClientSession, *told) {
	cs, events, _ := newProxyLedger(t)
	return cs, events
}

// newProxyLedger is newProxy, with the proxy's ledger.
func newProxyLedger(t *testing.T) (*sdk.ClientSession, *told, ledger.Ledger) {
	t.Helper()
	ctx := context.Background()
	tw := testworld.New(t)
	l := tw.OpenLedger()
	gh := tw.Client(ghcheck.Options{})
	// LedgerNew false: a ledger made ahead (`ghonce init`), as the generic
	// guard needs: in a new one, an earlier ledger may have been lost.
	eng := reconcile.New(reconcile.Config{Ledger: l, GitHub: gh, Settle: -1})
	cmd, env := fakeUpstreamCommand(t)
	p, err := mcp.NewProxy(ctx, mcp.Config{Engine: eng, Off: offgithub.New(offgithub.Config{Ledger: l, Settle: -1}), Ledger: l, Task: task}, mcp.Upstream{Command: cmd, Env: env, Stderr: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	events := make(chan string, 64)
	ct, st := sdk.NewInMemoryTransports()
	ss, err := p.SDK().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			events <- fmt.Sprintf("progress %v %s", r.Params.ProgressToken, r.Params.Message)
		},
		LoggingMessageHandler: func(_ context.Context, r *sdk.LoggingMessageRequest) {
			events <- fmt.Sprintf("log %v", r.Params.Data)
		},
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) { events <- "tools changed" },
	}).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, &told{ch: events, seen: map[string]int{}}, l
}

// directUpstream connects a client to fakeUpstream itself.
func directUpstream(t *testing.T) *sdk.ClientSession {
	t.Helper()
	argv, env := fakeUpstreamCommand(t)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "direct", Version: "1"}, nil).Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// told records what the client was told; wait returns once want is among
// it (in any order: notifications are handled concurrently).
type told struct {
	ch   chan string
	seen map[string]int
}

func (e *told) wait(t *testing.T, want string) {
	t.Helper()
	timeout := time.After(time.Minute)
	for e.seen[want] == 0 {
		select {
		case m := <-e.ch:
			e.seen[m]++
		case <-timeout:
			t.Fatalf("the client was never told %q (told %v)", want, e.seen)
		}
	}
	e.seen[want]--
}

func sameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	var gv, wv any
	_ = json.Unmarshal(g, &gv)
	_ = json.Unmarshal(w, &wv)
	if !reflect.DeepEqual(gv, wv) {
		t.Errorf("%s through the proxy:\n%s\nupstream:\n%s", what, g, w)
	}
}

// Everything but the guarded write tools passes through untouched, both
// ways: tools (their list, arguments byte for byte, _meta, results),
// progress, logging, cancellation, prompts, resources, templates,
// completions and list-changed notifications.
func TestProxyPassesEverythingElseThrough(t *testing.T) {
	ctx := context.Background()
	cs, events := newProxy(t)
	up := directUpstream(t)

	if got := cs.InitializeResult().Instructions; !strings.HasPrefix(got, "fake upstream instructions\n\nThrough ghonce") {
		t.Errorf("instructions %q, want upstream's, then ghonce's", got)
	}
	gotTools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantTools, err := up.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "tools/list", gotTools.Tools, wantTools.Tools)

	if err := cs.SetLoggingLevel(ctx, &sdk.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"z":1,"a":[1,2.50,"x"],"nested":{"k":null}}`)
	params := &sdk.CallToolParams{Name: "echo", Arguments: args, Meta: sdk.Meta{"progressToken": "tok-1", "x-agent": "mine", sdk.MetaKeyLogLevel: "debug"}}
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError || len(res.Content) != 2 {
		t.Fatalf("echo: %v %+v", err, res)
	}
	if got := res.Content[0].(*sdk.TextContent).Text; got != string(args) {
		t.Errorf("upstream received arguments %s, want %s byte for byte", got, args)
	}
	var meta map[string]any
	_ = json.Unmarshal([]byte(res.Content[1].(*sdk.TextContent).Text), &meta)
	if meta["x-agent"] != "mine" || meta["progressToken"] != "tok-1" {
		t.Errorf("upstream received _meta %v, want the agent's", meta)
	}
	if res.Meta["x-result"] != "kept" {
		t.Errorf("result _meta %v, want upstream's", res.Meta)
	}
	events.wait(t, "progress tok-1 half")
	events.wait(t, "log echoing")

	// Cancellation reaches upstream.
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: "slow", Arguments: map[string]any{}, Meta: sdk.Meta{sdk.MetaKeyLogLevel: "debug"}})
		done <- err
	}()
	events.wait(t, "log slow started")
	cancel()
	events.wait(t, "log slow cancelled")
	if err := <-done; err == nil {
		t.Errorf("a cancelled call returned no error")
	}

	gp, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	wp, _ := up.ListPrompts(ctx, nil)
	sameJSON(t, "prompts/list", gp, wp)
	gg, err := cs.GetPrompt(ctx, &sdk.GetPromptParams{Name: "greet", Arguments: map[string]string{"who": "ada"}})
	if err != nil {
		t.Fatal(err)
	}
	wg, _ := up.GetPrompt(ctx, &sdk.GetPromptParams{Name: "greet", Arguments: map[string]string{"who": "ada"}})
	sameJSON(t, "prompts/get", gg, wg)
	gr, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	wr, _ := up.ListResources(ctx, nil)
	sameJSON(t, "resources/list", gr, wr)
	grt, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	wrt, _ := up.ListResourceTemplates(ctx, nil)
	sameJSON(t, "resources/templates/list", grt, wrt)
	for _, uri := range []string{"file:///readme", "file:///a.md"} {
		g, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("resources/read %s: %v", uri, err)
		}
		w, _ := up.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		sameJSON(t, "resources/read "+uri, g, w)
	}
	comp := &sdk.CompleteParams{Ref: &sdk.CompleteReference{Type: "ref/prompt", Name: "greet"}, Argument: sdk.CompleteParamsArgument{Name: "who", Value: "ad"}}
	gc, err := cs.Complete(ctx, comp)
	if err != nil {
		t.Fatal(err)
	}
	wc, _ := up.Complete(ctx, comp)
	sameJSON(t, "completion/complete", gc, wc)

	// A tool upstream adds reaches the agent, with a list_changed.
	if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "grow", Arguments: map[string]any{}}); err != nil || res.IsError {
		t.Fatalf("grow: %v %+v", err, res)
	}
	events.wait(t, "tools changed")
	late, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "late", Arguments: map[string]any{}})
	for err != nil { // the first list_changed may be the proxy's own, before "late" is served
		events.wait(t, "tools changed")
		late, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "late", Arguments: map[string]any{}})
	}
	if late.IsError {
		t.Fatalf("late: %+v", late)
	}
}

// The generic guard: a write tool with no kind, called twice with the
// same arguments (spelled differently), reaches upstream once and the
// replay gets the first result; a call whose answer was lost (upstream
// died mid-call) is not sent again, and the next identical call is told it
// may have happened and how to settle it; a tool upstream marks
// idempotentHint is sent again.
func TestProxyGenericGuard(t *testing.T) {
	ctx := context.Background()
	calls := callsFile(t)
	_ = os.Remove(calls)
	t.Cleanup(func() { _ = os.Remove(calls) })
	cs, _, l := newProxyLedger(t)
	call := func(name string, args json.RawMessage) *sdk.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	text := func(res *sdk.CallToolResult) string {
		var s []string
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok {
				s = append(s, tc.Text)
			}
		}
		return strings.Join(s, "\n")
	}

	first := call("count", json.RawMessage(`{"a":1,"b":[1.0,"x"]}`))
	again := call("count", json.RawMessage(`{ "b": [1, "x"], "a": 1.0 }`))
	if text(first) != "count call 1" || text(again) != "count call 1" {
		t.Fatalf("count twice: %q then %q, want the first result twice", text(first), text(again))
	}
	if n := upstreamCalls(calls, "count"); n != 1 {
		t.Fatalf("count twice with the same arguments reached upstream %d times, want 1", n)
	}
	if other := call("count", json.RawMessage(`{"a":2}`)); text(other) != "count call 2" {
		t.Fatalf("count with other arguments: %q, want a new call", text(other))
	}

	lost := call("die", json.RawMessage(`{"x":1}`))
	if !lost.IsError || !strings.Contains(text(lost), "unconfirmed") {
		t.Fatalf("die (upstream died mid-call): %q, want an unconfirmed tool error", text(lost))
	}
	later := call("die", json.RawMessage(`{"x":1}`))
	if !later.IsError || !strings.Contains(text(later), "may have happened") || !strings.Contains(text(later), "ghonce resolve ") {
		t.Fatalf("die again: %q, want a tool error saying it may have happened and how to settle it", text(later))
	}
	if n := upstreamCalls(calls, "die"); n != 1 {
		t.Fatalf("a call whose answer was lost reached upstream %d times, want 1 (never re-sent)", n)
	}
	// A person settles it as the error says: it did not happen (--retry),
	// and the next identical call is sent; or it did (--done), and the next
	// is answered without a request.
	key := regexp.MustCompile(`ghonce resolve (\S+) --retry`).FindStringSubmatch(text(later))
	if key == nil {
		t.Fatalf("the error %q names no key to resolve", text(later))
	}
	if _, err := l.Resolve(ctx, ledger.ResolveParams{Key: key[1], Status: ledger.Failed, Who: "test"}); err != nil {
		t.Fatal(err)
	}
	if res := call("die", json.RawMessage(`{"x":1}`)); res.IsError || text(res) != "die call 2" {
		t.Fatalf("die after resolve --retry: %q, want it sent again", text(res))
	}
	if lost := call("die", json.RawMessage(`{"x":2}`)); !lost.IsError {
		t.Fatalf("die with other arguments: %q, want upstream to die again", text(lost))
	}
	later = call("die", json.RawMessage(`{"x":2}`))
	key = regexp.MustCompile(`ghonce resolve (\S+) --retry`).FindStringSubmatch(text(later))
	if key == nil {
		t.Fatalf("the error %q names no key to resolve", text(later))
	}
	if _, err := l.Resolve(ctx, ledger.ResolveParams{Key: key[1], Status: ledger.Done, Who: "test"}); err != nil {
		t.Fatal(err)
	}
	if res := call("die", json.RawMessage(`{"x":2}`)); res.IsError || !strings.Contains(text(res), "already happened") || upstreamCalls(calls, "die") != 3 {
		t.Fatalf("die after resolve --done: %q (%d calls upstream), want it answered without a request", text(res), upstreamCalls(calls, "die"))
	}

	if lost := call("die_again", json.RawMessage(`{}`)); !lost.IsError {
		t.Fatalf("die_again (upstream died mid-call): %q, want an error", text(lost))
	}
	if res := call("die_again", json.RawMessage(`{}`)); res.IsError || text(res) != "die_again call 2" {
		t.Fatalf("die_again again: %q, want it sent again (idempotentHint) and answered", text(res))
	}
}

// The guide's figures for the upstream's restarts and start are the code's
// defaults.
func TestProxyGuideFigures(t *testing.T) {
	b, err := os.ReadFile("../../docs/guide/mcp-proxy.md")
	if err != nil {
		t.Fatal(err)
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }
	s := func(d time.Duration) string { return fmt.Sprintf("%d s", int(d.Seconds())) }
	for _, want := range []string{
		"(after " + ms(mcp.DefaultMinBackoff) + ";",
		"up to " + s(mcp.DefaultMaxBackoff) + ")",
		"`--upstream-timeout` (" + s(mcp.DefaultStartTimeout) + ")",
	} {
		if !strings.Contains(strings.Join(strings.Fields(string(b)), " "), want) {
			t.Errorf("docs/guide/mcp-proxy.md does not say %q", want)
		}
	}
}
