package reconcile_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger/sqlite"
	"github.com/ghonce/ghonce/reconcile"
)

const (
	owner  = "octo-org"
	name   = "hello-world"
	repo   = owner + "/" + name
	login  = "agent-bot"
	token  = "tok-agent-bot-SECRET-1b7e"
	other  = "mallory"
	otherT = "tok-mallory"
)

// world is a fake GitHub, a ledger file and an engine on both.
type world struct {
	t      *testing.T
	fake   *fixtures.Server
	ledger string
	main   string // head of main
	ctx    context.Context
}

func newWorld(t *testing.T) *world {
	t.Helper()
	s := fixtures.NewServer(fixtures.Options{})
	t.Cleanup(s.Close)
	s.AddUser(login, token)
	s.AddUser(other, otherT)
	sha := s.AddRepo(owner, name, "main")
	return &world{t: t, fake: s, ledger: filepath.Join(t.TempDir(), "state", "ledger.db"), main: sha, ctx: context.Background()}
}

// push stands in for the agent's git push: a new commit on a new branch.
func (w *world) push(branch string) string {
	sha := w.fake.AddCommit(owner, name, "main")
	w.fake.SetRef(owner, name, branch, sha)
	return sha
}

func (w *world) client(tok string, trusted ...string) *ghcheck.Client {
	w.t.Helper()
	c, err := ghcheck.New(ghcheck.Options{
		BaseURL: w.fake.URL(), Token: tok, TrustedAuthors: trusted,
		HTTPClient: &http.Client{Timeout: 10 * time.Second},
		Sleep:      func(context.Context, time.Duration) error { return nil },
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}

// engine opens the ledger (as a restarted process would) and returns an
// engine with a fresh owner. The ledger closes with the test.
func (w *world) engine(mod ...func(*reconcile.Config)) *reconcile.Engine {
	w.t.Helper()
	l, err := sqlite.Open(w.ctx, w.ledger, sqlite.Options{})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { l.Close() })
	// Settle is off here: the fake answers before it returns, so nothing is
	// in flight; TestTakeOverWaitsForRequestsInFlight covers the wait.
	cfg := reconcile.Config{Ledger: l, GitHub: w.client(token), LedgerNew: l.Created(), Wait: 5 * time.Second, Settle: -1}
	for _, m := range mod {
		m(&cfg)
	}
	return reconcile.New(cfg)
}

func (w *world) prs() []fixtures.PR { return w.fake.PullRequests(owner, name) }

// writes counts the requests that reached GitHub with a method other than GET.
func (w *world) writes() int { return w.fake.Writes() }

func prAction(task, head, title, body string) reconcile.Action {
	return reconcile.Action{Task: task, Step: "pr-create", Repo: repo,
		Spec: reconcile.PR{Base: "main", Head: head, Title: title, Body: body}}
}

func mustDo(t *testing.T, e *reconcile.Engine, a reconcile.Action) *reconcile.Result {
	t.Helper()
	r, err := do(context.Background(), e, a)
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	return r
}

// do runs a through the engine's front door, as every front end does:
// Prepare, then Do.
func do(ctx context.Context, e *reconcile.Engine, a reconcile.Action) (*reconcile.Result, error) {
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
