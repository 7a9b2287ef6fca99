package reconcile_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/sqlite/sqlitetest"
	"github.com/ghonce/ghonce/reconcile"
)

// durableMark notes the ledger's WAL length after every claim that wrote:
// a claim is forced to disk, so everything up to there survives a crash of
// the machine, and what the run wrote after it (the renewal, the done
// record) may not.
type durableMark struct {
	ledger.Ledger
	t    *testing.T
	path string
	at   int64
	// doneVerifiable is whether the last done record was marked Verifiable
	// (not forced to disk); nil until one is written.
	doneVerifiable *bool
}

func (m *durableMark) Finish(ctx context.Context, p ledger.FinishParams) (*ledger.Entry, error) {
	if p.Status == ledger.Done {
		v := p.Verifiable
		m.doneVerifiable = &v
	}
	return m.Ledger.Finish(ctx, p)
}

func (m *durableMark) Claim(ctx context.Context, p ledger.ClaimParams) (*ledger.Claim, error) {
	c, err := m.Ledger.Claim(ctx, p)
	if err == nil && (c.State == ledger.ClaimCreated || c.State == ledger.ClaimAcquired) {
		m.at = sqlitetest.WALSize(m.t, m.path)
	}
	return c, err
}

// The done record of every kind ghonce can look up is not forced to disk.
// A power loss right after ghonce returned may lose it; the rerun then finds
// the entry attempting, looks, finds the artifact and records it as found:
// it sends no write to GitHub (and a guarded command with --check does not
// run again).
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
		{"branch", func(w *world, _ string) (reconcile.Action, func() int) {
			return reconcile.Action{Task: "T-1", Step: "branch", Repo: repo, Spec: reconcile.Branch{Name: "release-prep", SHA: w.Main}}, nil
		}},
		{"file", func(w *world, _ string) (reconcile.Action, func() int) {
			w.Push("docs")
			return reconcile.Action{Task: "T-1", Step: "file", Repo: repo, Spec: reconcile.File{Branch: "docs", Path: "CHANGELOG.md", Message: "changelog", Content: []byte("v1\n")}}, nil
		}},
		{"exec with --check", func(_ *world, dir string) (reconcile.Action, func() int) {
			log := filepath.Join(dir, "sent")
			a := reconcile.Action{Task: "T-1", Step: "notify", Spec: reconcile.Exec{
				Argv:  []string{"/bin/sh", "-c", `echo "$GHONCE_KEY" >> "$1"`, "notify", log},
				Check: `test -f '` + log + `' && grep -qx "$GHONCE_KEY" '` + log + `'`,
			}}
			return a, func() int {
				b, _ := os.ReadFile(log)
				return strings.Count(string(b), "\n")
			}
		}},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			w := newWorld(t)
			dir := t.TempDir()
			a, count := tc.setup(w, dir)
			mark := &durableMark{t: t, path: w.Ledger}
			e := w.engine(func(c *reconcile.Config) { mark.Ledger = c.Ledger; c.Ledger = mark })
			if r := mustDo(t, e, a); r.Outcome != reconcile.Created {
				t.Fatalf("first run: %s, want created", r.Outcome)
			}
			if mark.doneVerifiable == nil || !*mark.doneVerifiable {
				t.Fatal("the done record was not written, or was forced: want it marked Verifiable")
			}
			if mark.at == 0 || sqlitetest.WALSize(t, w.Ledger) <= mark.at {
				t.Fatalf("WAL is %d bytes, %d at the claim: the run wrote nothing after its claim", sqlitetest.WALSize(t, w.Ledger), mark.at)
			}

			// The machine loses power: the ledger keeps only what was forced.
			w.Ledger = sqlitetest.PowerLoss(t, w.Ledger, mark.at, t.TempDir())
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

// A guarded command without --check has nothing to look at after a lost
// done record, so its done record is forced (not Verifiable): a crash of the
// machine cannot turn a finished command into an exit 3, or, with
// --on-unconfirmed retry, into a second run.
func TestExecWithoutCheckForcesItsDone(t *testing.T) {
	x := newExecWorld(t)
	x.engine() // the ledger exists ahead of the run, as `ghonce init` makes it
	mark := &durableMark{t: t, path: x.Ledger}
	e, _ := x.engine(func(c *reconcile.Config) { mark.Ledger = c.Ledger; c.Ledger = mark })
	if r := mustDo(t, e, execAction(x.notify())); r.Outcome != reconcile.Created {
		t.Fatalf("first run: %s, want created", r.Outcome)
	}
	if mark.doneVerifiable == nil {
		t.Fatal("no done record was written")
	}
	if *mark.doneVerifiable {
		t.Error("the done record was marked Verifiable (unforced), want it forced")
	}
}
