package reconcile_test

import (
	"testing"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/sqlite/sqlitetest"
	"github.com/ghonce/ghonce/reconcile"
)

// The done record of every kind ghonce can look up is not forced to disk.
// A power loss right after ghonce returned may lose it; the rerun then finds
// the entry attempting, looks, finds the artifact and records it as found:
// it sends no write to GitHub (offgithub's tests hold a guarded command
// with --check to the same).
func TestLostDoneRecordIsFoundNotDuplicated(t *testing.T) {
	for _, tc := range []struct {
		kind string
		// setup returns the action and, where one can be counted, how many
		// artifacts of the kind (or runs of the command) there are.
		setup func(w *world, dir string) (reconcile.Action, func() int)
	}{
		{"pr", func(w *world, _ string) (reconcile.Action, func() int) {
			w.Push("fix-1")
			return prAction("T-1", "fix-1", "Fix", "body"), func() int { return len(w.prs()) }
		}},
		{"issue", func(w *world, _ string) (reconcile.Action, func() int) {
			return reconcile.Action{Task: "T-1", Step: "issue", Repo: repo, Spec: reconcile.Issue{Title: "Follow-up", Body: "body"}},
				func() int { return len(w.GitHub.Issues(owner, name)) }
		}},
		{"comment", func(w *world, _ string) (reconcile.Action, func() int) {
			n := w.GitHub.SeedIssue(owner, name, other, fixtures.SeedIssue{Title: "Bug"})
			return reconcile.Action{Task: "T-1", Step: "comment", Repo: repo, Spec: reconcile.Comment{Number: n, Body: "Fixed."}},
				func() int { return len(w.GitHub.Comments(owner, name, n)) }
		}},
		{"release", func(w *world, _ string) (reconcile.Action, func() int) {
			return releaseAction("v1", "Notes.", true), func() int { return len(w.releases()) }
		}},
		{"review-comment", func(w *world, _ string) (reconcile.Action, func() int) {
			n, _ := w.reviewPR()
			return inline("T-1", n, 1, "Off by one here."), func() int { return len(w.GitHub.ReviewComments(owner, name, n)) }
		}},
		{"branch", func(w *world, _ string) (reconcile.Action, func() int) {
			return reconcile.Action{Task: "T-1", Step: "branch", Repo: repo, Spec: reconcile.Branch{Name: "release-prep", SHA: w.Main}}, nil
		}},
		{"file", func(w *world, _ string) (reconcile.Action, func() int) {
			w.Push("docs")
			return reconcile.Action{Task: "T-1", Step: "file", Repo: repo, Spec: reconcile.File{Branch: "docs", Path: "CHANGELOG.md", Message: "changelog", Content: []byte("v1\n")}}, nil
		}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			w := newWorld(t)
			dir := t.TempDir()
			a, count := tc.setup(w, dir)
			mark := &sqlitetest.Mark{T: t, Path: w.Ledger}
			e := w.engine(func(c *reconcile.Config) { mark.Ledger = c.Ledger; c.Ledger = mark })
			if r := mustDo(t, e, a); r.Outcome != reconcile.Created {
				t.Fatalf("first run: %s, want created", r.Outcome)
			}
			if mark.DoneVerifiable == nil || !*mark.DoneVerifiable {
				t.Fatal("the done record was not written, or was forced: want it marked Verifiable")
			}
			if mark.At == 0 || sqlitetest.WALSize(t, w.Ledger) <= mark.At {
				t.Fatalf("WAL is %d bytes, %d at the claim: the run wrote nothing after its claim", sqlitetest.WALSize(t, w.Ledger), mark.At)
			}

			// The machine loses power: the ledger keeps only what was forced.
			w.Ledger = sqlitetest.PowerLoss(t, w.Ledger, mark.At, t.TempDir())
			writes := w.writes()
			// After the reboot nothing from before runs: the lease's holder
			// is gone (this test is one process, so the rerun names another PID).
			e = w.engine(func(c *reconcile.Config) {
				c.Owner = reconcile.NewOwner()
				c.Owner.PID++
				c.Gone = func(ledger.Proc) bool { return true }
			})
			if r := mustDo(t, e, a); r.Outcome != reconcile.Found {
				t.Errorf("rerun after the lost done: %s, want found", r.Outcome)
			}
			if n := w.writes() - writes; n != 0 {
				t.Errorf("the rerun sent %d writes to GitHub, want 0", n)
			}
			if count != nil {
				if n := count(); n != 1 {
					t.Errorf("%d made, want 1", n)
				}
			}
			if r := mustDo(t, e, a); r.Outcome != reconcile.Skipped {
				t.Errorf("third run: %s, want skipped", r.Outcome)
			}
		})
	}
}
