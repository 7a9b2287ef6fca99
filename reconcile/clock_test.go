package reconcile_test

import (
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/sqlite"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/tests/testworld"
)

// One clock per question: a comment an earlier attempt made is found by a
// look-up that reads only what changed since that attempt began, whether
// the ledger's clock or GitHub's is hours away from this machine's. The
// start is read on the ledger's clock, moved to this machine's with the
// ledger's time at the claim, and sent as since= on GitHub's clock (the
// Date of its responses).
func TestCommentLookupSinceOnGitHubsClock(t *testing.T) {
	for _, tc := range []struct {
		name           string
		ledger, github time.Duration // each clock's offset from this machine's
	}{
		{"ledger 3h ahead", 3 * time.Hour, 0},
		{"ledger 20m ahead", 20 * time.Minute, 0},
		{"GitHub 3h behind", 0, -3 * time.Hour},
		{"ledger 3h behind, GitHub 3h ahead", -3 * time.Hour, 3 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, testworld.Fake(fixtures.Options{Now: func() time.Time { return time.Now().Add(tc.github) }}))
			fake := w.GitHub
			l, err := sqlite.Open(w.ctx, w.Ledger, sqlite.Options{Now: func() time.Time { return time.Now().Add(tc.ledger) }})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			thread := fake.SeedIssue(owner, name, other, fixtures.SeedIssue{Title: "bug"})
			a := reconcile.Action{Task: "T-1", Step: "comment", Repo: repo, Spec: reconcile.Comment{Number: thread, Body: "Fixed."}}
			key := keyOf(t, a)
			// The earlier attempt: claimed, created the comment, died.
			if _, err := l.Claim(w.ctx, ledger.ClaimParams{Key: key, Task: a.Task, Step: a.Step, Kind: "comment", Repo: repo, Target: "1",
				Owner: ledger.Owner{ID: "crashed", Host: "h", PID: 999999}, Lease: time.Hour}); err != nil {
				t.Fatal(err)
			}
			if _, err := w.client(token).CreateComment(w.ctx, ghcheck.Repo{Owner: owner, Name: name}, thread, key, "Fixed."); err != nil {
				t.Fatal(err)
			}
			e := w.engine(func(c *reconcile.Config) {
				c.Ledger = l
				c.Gone = func(p ledger.Proc) bool { return p.PID == 999999 }
			})
			r, err := do(w.ctx, e, a)
			if err != nil {
				t.Fatal(err)
			}
			if n := len(fake.Comments(owner, name, thread)); r.Outcome != outcome.Found || n != 1 {
				t.Fatalf("rerun: %s, %d comments; want found and 1", r.Outcome, n)
			}
		})
	}
}
