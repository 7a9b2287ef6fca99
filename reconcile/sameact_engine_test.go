package reconcile_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/sqlite"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
)

// issueAction is an issue under the kind's default step: the action of an
// unmodified agent through the gh shim.
func issueAction(title string) reconcile.Action {
	return reconcile.Action{Task: "ISSUE-42", Repo: repo, Spec: reconcile.Issue{Title: title, Body: "b"}}
}

// An earlier attempt that claimed the key, sent its create and ended
// without answering its caller (it died holding the key, or its caller
// cancelled it) leaves a caller that never heard of the artifact: a
// reworded run is that caller's retry, and gets the artifact as success.
// One that answered "it may have happened" (a release, exit 3) does not:
// its caller may have gone on to another act, so it gets the facts.
func TestAnUnansweredAttemptsRetryIsTheSameAct(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(l ledger.Ledger, c *ledger.Claim) // how the earlier attempt ended
		same bool
	}{
		{"died holding the key", func(ledger.Ledger, *ledger.Claim) {}, true},
		{"cancelled by its caller", func(l ledger.Ledger, c *ledger.Claim) {
			release(t, l, c, "create issue in octo-org/hello-world: Post \"…/issues\": context canceled")
		}, true},
		{"answered that it may have happened", func(l ledger.Ledger, c *ledger.Claim) {
			release(t, l, c, "create issue in octo-org/hello-world: 502 Bad Gateway")
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			l, err := sqlite.Open(w.ctx, w.Ledger, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			first := issueAction("Release 1.4.0")
			key := keyOf(t, first)
			c, err := l.Claim(w.ctx, ledger.ClaimParams{Key: key, Task: "ISSUE-42", Step: "issue-create", Kind: "issue", Repo: repo, Target: "",
				Owner: ledger.Owner{ID: "gone", Host: "h", PID: 999999}, Lease: time.Hour, Sending: true})
			if err != nil {
				t.Fatal(err)
			}
			// What its create made before it ended.
			n := w.GitHub.SeedIssue(owner, name, login, fixtures.SeedIssue{Title: "Release 1.4.0", Body: taskkey.WithMarker(key, "b"), Labels: []string{taskkey.Label(key)}})
			tc.end(l, c)
			e := w.engine(func(cfg *reconcile.Config) { cfg.Gone = func(p ledger.Proc) bool { return p.PID == 999999 } })
			r, err := do(w.ctx, e, issueAction("Release v1.4.0"))
			var so *reconcile.SameOrAnotherError
			switch {
			case tc.same && (err != nil || r.Outcome != outcome.Found || r.Number != n || !strings.Contains(r.Warning, "ended without answering")):
				t.Fatalf("retry: %+v, %v; want issue #%d found, the warning saying why it is the same act", r, err, n)
			case !tc.same && (!errors.As(err, &so) || so.Result.Number != n):
				t.Fatalf("run after an answer: %+v, %v; want a *SameOrAnotherError naming issue #%d", r, err, n)
			}
			if tc.same {
				// The retry's caller heard of the issue with its own text,
				// and may run it again; the stored text stays the issue's.
				for _, title := range []string{"Release v1.4.0", "Release 1.4.0"} {
					if r, err := do(w.ctx, e, issueAction(title)); err != nil || r.Outcome != outcome.Skipped || r.Number != n {
						t.Fatalf("%q again: %+v, %v; want issue #%d skipped", title, r, err, n)
					}
				}
			}
			if got := len(w.GitHub.Issues(owner, name)); got != 1 {
				t.Fatalf("%d issues, want 1", got)
			}
		})
	}
}

// release ends the attempt of claim c as the engine does when it cannot
// confirm its create: released, with the error it answered.
func release(t *testing.T, l ledger.Ledger, c *ledger.Claim, msg string) {
	t.Helper()
	if _, err := l.Finish(t.Context(), ledger.FinishParams{Key: c.Entry.Key, Fence: c.Entry.Fence, Status: ledger.Attempting, Error: msg, Why: "unconfirmed: released for the next run"}); err != nil {
		t.Fatal(err)
	}
}

// A re-run of a GitHub Actions run (attempt 2, on a fresh runner whose
// ledger is empty) whose text was reworded gets the artifact attempt 1
// made as success, when GitHub's record of the run says attempt 1 ran when
// the artifact was made. An artifact made outside every earlier attempt of
// the run (another run of the task), or a run GitHub will not describe (a
// token without actions: read), gets the facts.
func TestAnActionsRerunIsTheSameAct(t *testing.T) {
	const runID = 4242
	for _, tc := range []struct {
		name   string
		window func(made time.Time) (from, to time.Time, ok bool)
		same   bool
	}{
		{"attempt 1 ran when it was made", func(m time.Time) (time.Time, time.Time, bool) {
			return m.Add(-time.Minute), m.Add(time.Minute), true
		}, true},
		{"attempt 1 ran before it was made", func(m time.Time) (time.Time, time.Time, bool) {
			return m.Add(-time.Hour), m.Add(-time.Minute), true
		}, false},
		{"GitHub does not say", func(time.Time) (time.Time, time.Time, bool) { return time.Time{}, time.Time{}, false }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			run := func(attempt int) func(*reconcile.Config) {
				return func(c *reconcile.Config) { c.Run = reconcile.Run{Repo: repo, ID: runID, Attempt: attempt} }
			}
			first := mustDo(t, w.engine(run(1)), issueAction("Release 1.4.0"))
			made := w.GitHub.Issues(owner, name)[0].CreatedAt
			if from, to, ok := tc.window(made); ok {
				w.GitHub.SeedRunAttempt(owner, name, runID, 1, from, to)
			}
			// Attempt 2 on a fresh runner: a ledger of its own, empty.
			w.Ledger = filepath.Join(t.TempDir(), "ledger.db")
			r, err := do(w.ctx, w.engine(run(2)), issueAction("Release v1.4.0"))
			var so *reconcile.SameOrAnotherError
			switch {
			case tc.same && (err != nil || r.Number != first.Number || !strings.Contains(r.Warning, "attempt 1 of this GitHub Actions run made it")):
				t.Fatalf("re-run: %+v, %v; want issue #%d as success, the warning saying why", r, err, first.Number)
			case !tc.same && (!errors.As(err, &so) || so.Result.Number != first.Number || !so.Made.Equal(made.Truncate(time.Second))):
				t.Fatalf("re-run: %+v, %v; want a *SameOrAnotherError naming issue #%d made at %s", r, err, first.Number, made)
			}
			if got := len(w.GitHub.Issues(owner, name)); got != 1 {
				t.Fatalf("%d issues, want 1", got)
			}
		})
	}
}
