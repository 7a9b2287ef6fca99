package mcp_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/fakegithub"
	"github.com/ghonce/ghonce/internal/mcp"
)

// A client that did not hear the answer to its call and calls again with a
// paraphrase (issue 37) is never refused into a duplicate, over stdio (the
// in-memory transport stands for it) or Streamable HTTP.
//
// One that timed out without cancelling is, to the server, one that heard:
// the server finished and wrote its answer, which the client dropped. Its
// paraphrase gets the facts (the first issue, both titles) with "do not
// call again" for the same act; the client stops, and there is one issue.
// One whose client cancelled the call while the create was in flight
// ended unanswered: its paraphrase gets the first issue, as success.
func TestAClientThatDidNotHearIsNotMadeToDuplicate(t *testing.T) {
	for _, transport := range []string{"stdio", "streamable HTTP"} {
		session := func(w *world) *sdk.ClientSession {
			if transport == "stdio" {
				return w.cs
			}
			ts := httptest.NewServer(w.srv.Handler(mcp.HTTPOptions{}))
			t.Cleanup(ts.Close)
			cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, nil).
				Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: ts.URL + "/mcp"}, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cs.Close() })
			return cs
		}
		call := func(ctx context.Context, cs *sdk.ClientSession, title string) (*sdk.CallToolResult, error) {
			return cs.CallTool(ctx, &sdk.CallToolParams{Name: "create_issue", Arguments: args("title", title, "body", "Notes.")})
		}
		t.Run(transport+", timed out without cancel", func(t *testing.T) {
			w := newWorld(t, opts{})
			cs := session(w)
			if first, err := call(context.Background(), cs, "Release 1.4.0"); err != nil || first.IsError {
				t.Fatalf("first call: %v %+v", err, first)
			}
			// The client never read that answer; its retry is reworded.
			again, err := call(context.Background(), cs, "Release v1.4.0")
			if err != nil {
				t.Fatal(err)
			}
			msg := text(again)
			for _, says := range []string{`"Release 1.4.0"`, `"Release v1.4.0"`, "If this call is that one again, it is done: do not call again", "[same_or_another"} {
				if !again.IsError || !strings.Contains(msg, says) {
					t.Fatalf("paraphrase: %s; want the facts saying %s", msg, says)
				}
			}
			if strings.Contains(msg, "reads as another") {
				t.Fatalf("paraphrase: the server judged it another act: %s", msg)
			}
			if n := len(w.fake.Issues(owner, name)); n != 1 {
				t.Fatalf("%d issues, want 1", n)
			}
		})
		t.Run(transport+", cancelled", func(t *testing.T) {
			ended := make(chan struct{}, 8) // a call ended cancelled
			w := newWorld(t, opts{logf: func(format string, args ...any) {
				if strings.Contains(fmt.Sprintf(format, args...), "canceled") {
					ended <- struct{}{}
				}
			}})
			cs := session(w)
			ctx, cancel := context.WithCancel(context.Background())
			// GitHub has stored the issue; before its answer leaves, the
			// client gives up and cancels, and the server's call ends.
			w.fake.OnCommit(func(c *fixtures.Commit) {
				if c.Kind == fakegithub.KindIssue {
					cancel()
					<-ended
				}
			})
			if _, err := call(ctx, cs, "Release 1.4.0"); err == nil {
				t.Fatal("a cancelled call answered")
			}
			w.fake.OnCommit(nil)
			again, err := call(context.Background(), cs, "Release v1.4.0")
			if err != nil || again.IsError || !strings.Contains(text(again), "/issues/1") {
				t.Fatalf("paraphrase after a cancelled call: %v %s; want the first issue as success", err, text(again))
			}
			if n := len(w.fake.Issues(owner, name)); n != 1 {
				t.Fatalf("%d issues, want 1", n)
			}
		})
	}
}
