package reconcile_test

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/guard"
	"github.com/ghonce/ghonce/internal/cli"
	"github.com/ghonce/ghonce/internal/fakegithub"
	"github.com/ghonce/ghonce/internal/mcp"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/tests/testworld"
)

const (
	owner  = testworld.Owner
	name   = testworld.Name
	repo   = testworld.Repo
	login  = testworld.Login
	token  = testworld.Token
	other  = testworld.Stranger
	otherT = testworld.StrangerToken
)

// world is the shared test world (testworld) with a context and the
// engine as these tests configure it.
type world struct {
	*testworld.World
	t   *testing.T
	ctx context.Context
}

func newWorld(t *testing.T, opts ...testworld.Option) *world {
	t.Helper()
	return &world{World: testworld.New(t, opts...), t: t, ctx: context.Background()}
}

func (w *world) client(tok string, trusted ...string) *ghcheck.Client {
	w.t.Helper()
	return w.Client(ghcheck.Options{
		Token: tok, TrustedAuthors: trusted,
		HTTPClient: &http.Client{Timeout: 10 * time.Second},
		Sleep:      func(context.Context, time.Duration) error { return nil },
	})
}

// engine opens the ledger (as a restarted process would) and returns an
// engine with a fresh owner. The ledger closes with the test.
func (w *world) engine(mod ...func(*reconcile.Config)) *reconcile.Engine {
	w.t.Helper()
	// Settle is off (testworld): the fake answers before it returns, so
	// nothing is in flight; TestTakeOverWaitsForRequestsInFlight covers the
	// wait.
	return w.Engine(append([]func(*reconcile.Config){func(c *reconcile.Config) {
		c.GitHub, c.Wait = w.client(token), 5*time.Second
	}}, mod...)...)
}

func (w *world) prs() []fakegithub.PR { return w.GitHub.PullRequests(owner, name) }

// writes counts the requests that reached GitHub with a method other than GET.
func (w *world) writes() int { return w.GitHub.Writes() }

func prAction(task, head, title, body string) reconcile.Action {
	return reconcile.Action{Task: task, Step: "pr-create", Repo: repo,
		Spec: reconcile.PR{Base: "main", Head: head, Title: title, Body: body}}
}

func mustDo(t *testing.T, e *reconcile.Engine, a reconcile.Action) *outcome.Result {
	t.Helper()
	r, err := do(context.Background(), e, a)
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	return r
}

// do runs a through the engine's front door, as every front end does:
// Prepare, then Do.
func do(ctx context.Context, e *reconcile.Engine, a reconcile.Action) (*outcome.Result, error) {
	p, err := reconcile.Prepare(a)
	if err != nil {
		return nil, err
	}
	return e.Do(ctx, p)
}

// keyOf is the key of a, which must be valid.
func keyOf(t testing.TB, a reconcile.Action) string {
	t.Helper()
	p, err := reconcile.Prepare(a)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	return p.Key()
}

// ghonce runs `ghonce args...` in process (internal/cli's Main) in w: our
// token, the fake GitHub, w's ledger. It returns the exit code, stdout and
// stderr: a kind's tests of its verb's own words.
func (w *world) ghonce(args ...string) (int, string, string) {
	w.t.Helper()
	var out, errb bytes.Buffer
	env := map[string]string{"GH_TOKEN": token, "GITHUB_API_URL": w.GitHub.URL(), "GHONCE_LEDGER": w.Ledger}
	code := cli.Main(w.ctx, args, cli.IO{In: strings.NewReader(""), Out: &out, Err: &errb,
		Getenv: func(k string) string { return env[k] }, Now: time.Now, Executable: os.Executable})
	return code, out.String(), errb.String()
}

// goGitHub is a go-github client over guard's transport on w's ledger,
// opened afresh as a restarted process opens it: a kind's tests of its
// writes as a bot makes them. Settle is off, as in w's engines.
func (w *world) goGitHub() *github.Client {
	w.t.Helper()
	l := w.OpenLedger()
	tr, err := guard.New(nil, guard.Options{Ledger: l, LedgerNew: l.Created, Settle: -1, Getenv: func(string) string { return "" }})
	if err != nil {
		w.t.Fatal(err)
	}
	gh := github.NewClient(&http.Client{Transport: tr}).WithAuthToken(token)
	gh.BaseURL, _ = gh.BaseURL.Parse(w.GitHub.URL())
	return gh
}

// mcpCall calls tool on a `ghonce mcp` server started afresh on w's ledger
// under task T, as a restarted agent's server is: a kind's tests of its
// tool's own flow. It returns the structured output, whether the result
// is an error, and its text.
func (w *world) mcpCall(tool string, args map[string]any) (mcp.Output, bool, string) {
	w.t.Helper()
	l := w.OpenLedger()
	srv, err := mcp.New(mcp.Config{Engine: w.engine(), Ledger: l, Task: "T"})
	if err != nil {
		w.t.Fatal(err)
	}
	ct, st := sdk.NewInMemoryTransports()
	ss, err := srv.SDK().Connect(w.ctx, st, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).Connect(w.ctx, ct, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	defer cs.Close()
	a := map[string]any{"owner": owner, "repo": name}
	maps.Copy(a, args)
	res, err := cs.CallTool(w.ctx, &sdk.CallToolParams{Name: tool, Arguments: a})
	if err != nil {
		w.t.Fatalf("%s: protocol error %v, want a tool result", tool, err)
	}
	var out mcp.Output
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &out)
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	return out, res.IsError, strings.Join(texts, "\n")
}
