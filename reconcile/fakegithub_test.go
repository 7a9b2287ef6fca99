package reconcile_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/sqlite"
	"github.com/ghonce/ghonce/offgithub"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
)

// fakeGitHub is a reconcile.GitHub that serves issues without HTTP: find
// answers find, create answers create and counts the calls. It cannot
// edit, and serves no other kind.
type fakeGitHub struct {
	mu      sync.Mutex
	find    effect.Result
	create  func() (effect.Artifact, error)
	creates int
}

func (g *fakeGitHub) Login(context.Context) (string, error) { return "agent-bot", nil }
func (g *fakeGitHub) FindIssue(context.Context, ghcheck.Repo, ghcheck.IssueQuery) effect.Result {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.find
}
func (g *fakeGitHub) CreateIssue(context.Context, ghcheck.Repo, string, ghcheck.NewIssue) (effect.Artifact, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.creates++
	return g.create()
}

// The engine settles each answer of the GitHub interface by its meaning,
// with no HTTP server: the vocabulary is the engine's own.
func TestEngineAgainstAnInterfaceFake(t *testing.T) {
	t.Parallel()
	made := effect.Artifact{Number: 7, URL: "https://example.test/issues/7"}
	for _, tc := range []struct {
		name        string
		find        effect.Result
		create      func() (effect.Artifact, error)
		creates     int
		outcome     outcome.Outcome
		unconfirmed bool
		status      ledger.Status
	}{
		{name: "absent: create", find: effect.Result{State: effect.Absent}, create: func() (effect.Artifact, error) { return made, nil },
			creates: 1, outcome: outcome.Created, status: ledger.Done},
		{name: "found: adopt, no create", find: effect.Result{State: effect.Found, Artifact: made},
			outcome: outcome.Found, status: ledger.Done},
		{name: "unknown: no create, stays attempting", find: effect.Result{State: effect.Unknown, Err: errors.New("502")},
			unconfirmed: true, status: ledger.Attempting},
		{name: "maybe created: stays attempting", find: effect.Result{State: effect.Absent},
			create: func() (effect.Artifact, error) {
				return effect.Artifact{}, &effect.CreateError{Class: effect.ClassMaybe, Err: errors.New("timeout")}
			},
			creates: 1, unconfirmed: true, status: ledger.Attempting},
		{name: "refused: failed, nothing made", find: effect.Result{State: effect.Absent},
			create: func() (effect.Artifact, error) {
				return effect.Artifact{}, &effect.CreateError{Class: effect.ClassRefused, Err: errors.New("403")}
			},
			creates: 1, status: ledger.Failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ledger.db"), sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			gh := &fakeGitHub{find: tc.find, create: tc.create}
			e := reconcile.New(reconcile.Config{Ledger: l, GitHub: gh, Wait: time.Second, Settle: -1})
			a := reconcile.Action{Task: "T", Step: "s", Repo: "octo-org/hello-world", Spec: reconcile.Issue{Title: "t", Body: "b"}}
			r, err := do(context.Background(), e, a)
			var ue *outcome.UnconfirmedError
			switch {
			case tc.unconfirmed && !errors.As(err, &ue):
				t.Errorf("%s: err %v, want *UnconfirmedError", tc.name, err)
			case !tc.unconfirmed && tc.outcome != "" && (err != nil || r.Outcome != tc.outcome):
				t.Errorf("%s: result %+v, err %v; want outcome %s", tc.name, r, err, tc.outcome)
			case tc.status == ledger.Failed && err == nil:
				t.Errorf("%s: a refused create returned no error", tc.name)
			}
			if gh.creates != tc.creates {
				t.Errorf("%s: %d creates, want %d", tc.name, gh.creates, tc.creates)
			}
			ent, err := l.Get(context.Background(), keyOf(t, a))
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if ent.Status != tc.status {
				t.Errorf("%s: entry %s, want %s", tc.name, ent.Status, tc.status)
			}
			l.Close()
		})
	}
}

// A kind whose methods the engine's GitHub lacks ends with an error that
// says so, nothing sent and no panic; the entry does not claim it failed.
func TestKindTheGitHubCannotServe(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ledger.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	gh := &fakeGitHub{}
	e := reconcile.New(reconcile.Config{Ledger: l, GitHub: gh, Wait: time.Second, Settle: -1})
	a := reconcile.Action{Task: "T", Repo: "octo-org/hello-world", Spec: reconcile.Comment{Number: 1, Body: "b"}}
	_, err = do(ctx, e, a)
	var ns *outcome.NotSentError
	if !errors.As(err, &ns) || !strings.Contains(err.Error(), "lacks the methods") {
		t.Fatalf("err %v, want a *NotSentError saying the GitHub lacks the kind's methods", err)
	}
	if gh.creates != 0 {
		t.Errorf("%d creates, want none", gh.creates)
	}
}

// Prepare refuses bad input, as an *InvalidError, before anything is
// recorded; for what it accepts, KeyOf is the same key.
func TestPrepare(t *testing.T) {
	t.Parallel()
	issue := reconcile.Issue{Title: "t", Body: "b"}
	for _, tc := range []struct {
		name string
		a    reconcile.Action
		ok   bool
	}{
		{"valid", reconcile.Action{Task: "T", Step: "s", Repo: "o/r", Spec: issue}, true},
		{"no spec", reconcile.Action{Task: "T", Step: "s", Repo: "o/r"}, false},
		{"no task", reconcile.Action{Step: "s", Repo: "o/r", Spec: issue}, false},
		{"bad repo", reconcile.Action{Task: "T", Step: "s", Repo: "o/r/x", Spec: issue}, false},
		{"bad spec", reconcile.Action{Task: "T", Step: "s", Repo: "o/r", Spec: reconcile.Issue{}}, false},
		{"upper-case sha", reconcile.Action{Task: "T", Step: "s", Repo: "o/r", Spec: reconcile.Branch{Name: "b", SHA: "ABCDEF0123456789ABCDEF0123456789ABCDEF01"}}, false},
		{"lower-case sha", reconcile.Action{Task: "T", Step: "s", Repo: "o/r", Spec: reconcile.Branch{Name: "b", SHA: "abcdef0123456789abcdef0123456789abcdef01"}}, true},
		{"a GitHub kind without a repository", reconcile.Action{Task: "T", Step: "s", Spec: issue}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := reconcile.Prepare(tc.a)
			var inv *reconcile.InvalidError
			if (err == nil) != tc.ok || err != nil && !errors.As(err, &inv) {
				t.Fatalf("Prepare() = %v, want ok=%v (an *InvalidError when not)", err, tc.ok)
			}
			if !tc.ok {
				return
			}
			if k, err := reconcile.KeyOf(tc.a); err != nil || k != p.Key() {
				t.Fatalf("KeyOf = %q, %v; want Prepare's key %q", k, err, p.Key())
			}
		})
	}
}

// failingFinish is a ledger whose Finish to done fails once, as a lost
// database connection or a full disk would make it fail.
type failingFinish struct {
	ledger.Ledger
	mu    sync.Mutex
	fails int
}

func (l *failingFinish) Finish(ctx context.Context, p ledger.FinishParams) (*ledger.Entry, error) {
	l.mu.Lock()
	fail := p.Status == ledger.Done && l.fails > 0
	if fail {
		l.fails--
	}
	l.mu.Unlock()
	if fail {
		return nil, errors.New("ledger: connection lost")
	}
	return l.Ledger.Finish(ctx, p)
}

// GitHub made the artifact but the ledger could not record it: that is
// unconfirmed (exit 3: a rerun settles it), never a plain error, and the
// rerun finds the artifact instead of making a second.
func TestLedgerLostAfterCreateIsUnconfirmedAndTheRerunFinds(t *testing.T) {
	t.Parallel()
	sl, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "ledger.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sl.Close()
	l := &failingFinish{Ledger: sl, fails: 1}
	made := effect.Artifact{Number: 7, URL: "https://example.test/issues/7"}
	gh := &fakeGitHub{find: effect.Result{State: effect.Absent}, create: func() (effect.Artifact, error) { return made, nil }}
	e := reconcile.New(reconcile.Config{Ledger: l, GitHub: gh, Wait: time.Second, Settle: -1})
	a := reconcile.Action{Task: "T", Step: "s", Repo: "octo-org/hello-world", Spec: reconcile.Issue{Title: "t", Body: "b"}}
	_, err = do(context.Background(), e, a)
	var ue *outcome.UnconfirmedError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), made.URL) {
		t.Fatalf("Do with the ledger failing after the create: %v, want UnconfirmedError naming %s", err, made.URL)
	}
	if ent, err := sl.Get(context.Background(), keyOf(t, a)); err != nil || ent.Status != ledger.Attempting {
		t.Fatalf("entry after the lost write: %+v, %v; want attempting", ent, err)
	}
	// GitHub now holds the artifact: the rerun finds it.
	gh.mu.Lock()
	gh.find = effect.Result{State: effect.Found, Artifact: made}
	gh.mu.Unlock()
	r, err := do(context.Background(), e, a)
	if err != nil || r.Outcome != outcome.Found || r.Number != 7 {
		t.Fatalf("rerun: %+v, %v; want found #7", r, err)
	}
	if gh.creates != 1 {
		t.Fatalf("%d creates, want 1", gh.creates)
	}
}

// --on-change through the engine, for a library caller: the changed fields
// are named; fail stops with a *ChangedError; update on a GitHub that
// cannot edit (no UpdateIssue) falls back to a warning, touching nothing.
func TestOnChangeAgainstAnInterfaceFake(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	l, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "ledger.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	gh := &fakeGitHub{find: effect.Result{State: effect.Absent}, create: func() (effect.Artifact, error) { return effect.Artifact{Number: 3}, nil }}
	e := reconcile.New(reconcile.Config{Ledger: l, GitHub: gh, Wait: time.Second, Settle: -1})
	a := reconcile.Action{Task: "T", Repo: "octo-org/hello-world", Spec: reconcile.Issue{Title: "t", Body: "b"}}
	if _, err := do(ctx, e, a); err != nil {
		t.Fatal(err)
	}
	a.Spec = reconcile.Issue{Title: "t2", Body: "b"}
	var so *reconcile.SameOrAnotherError
	if _, err := do(ctx, e, a); !errors.As(err, &so) || so.NewStep != "issue-create-t2" {
		t.Fatalf("auto (the default): err %v, want a SameOrAnotherError, with step issue-create-t2", err)
	}
	var ce *reconcile.ChangedError
	a.OnChange = reconcile.OnChangeWarn
	r, err := do(ctx, e, a)
	if err != nil || !r.PayloadChanged || len(r.Changed) != 1 || r.Changed[0] != "title" || r.Warning == "" {
		t.Fatalf("warn: %+v, %v; want changed [title] and a warning", r, err)
	}
	a.OnChange = reconcile.OnChangeFail
	if _, err := do(ctx, e, a); !errors.As(err, &ce) || ce.Changed[0] != "title" {
		t.Fatalf("fail: err %v, want a ChangedError naming title", err)
	}
	a.OnChange = reconcile.OnChangeUpdate
	if r, err := do(ctx, e, a); err != nil || r.Updated || r.Warning == "" {
		t.Fatalf("update without UpdateIssue: %+v, %v; want a warning, not updated", r, err)
	}
	a.OnChange = "sometimes"
	if _, err := reconcile.Prepare(a); err == nil {
		t.Fatal("Prepare accepted OnChange \"sometimes\"")
	}
	if gh.creates != 1 {
		t.Fatalf("%d creates, want 1", gh.creates)
	}
}

// A guarded command is off GitHub even when its action names a
// repository (part of its key): its engine neither logs in nor looks.
func TestGuardedCommandWithARepositoryAsksGitHubNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	l := w.OpenLedger()
	e := offgithub.New(offgithub.Config{Ledger: l, LedgerNew: l.Created})
	before := len(w.GitHub.Requests())
	p, err := offgithub.Prepare(offgithub.Action{Task: "T", Step: "notify", Repo: repo, Spec: offgithub.Exec{Argv: []string{"true"}, Check: "false"}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.Do(w.ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if r.Outcome != outcome.Created {
		t.Fatalf("outcome %s, want created", r.Outcome)
	}
	if n := len(w.GitHub.Requests()) - before; n != 0 {
		t.Fatalf("%d requests reached GitHub for a guarded command, want 0", n)
	}
}
