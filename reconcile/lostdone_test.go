package reconcile_test

import (
	"slices"
	"testing"

	"github.com/ghonce/ghonce/internal/fakegithub"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/sqlite/sqlitetest"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
)

// The done record of every kind ghonce can look up (each kind's example)
// is not forced to disk. A power loss right after ghonce returned may lose
// it; the rerun then finds the entry attempting, looks, finds the artifact
// and records it as found: it sends no write to GitHub, so what the first
// run made stays the only one (offgithub's tests hold a guarded command
// with --check to the same).
func TestLostDoneRecordIsFoundNotDuplicated(t *testing.T) {
	for kind, spec := range examples(t) {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t)
			w.SeedExamples()
			a := reconcile.Action{Task: "T-1", Repo: repo, Spec: spec}
			mark := &sqlitetest.Mark{T: t, Path: w.Ledger}
			e := w.engine(func(c *reconcile.Config) { mark.Ledger = c.Ledger; c.Ledger = mark })
			r := mustDo(t, e, a)
			if r.Outcome != outcome.Created {
				t.Fatalf("first run: %s, want created", r.Outcome)
			}
			if got := w.labeled(taskkey.Label(r.Key)); got != reconcile.CarriesKeyLabel(kind) {
				t.Errorf("the key's label is on GitHub: %v; CarriesKeyLabel says %v (ghonce labels prune relies on it)", got, !got)
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
			if r := mustDo(t, e, a); r.Outcome != outcome.Found {
				t.Errorf("rerun after the lost done: %s, want found", r.Outcome)
			}
			if n := w.writes() - writes; n != 0 {
				t.Errorf("the rerun sent %d writes to GitHub, want 0", n)
			}
			if r := mustDo(t, e, a); r.Outcome != outcome.Skipped {
				t.Errorf("third run: %s, want skipped", r.Outcome)
			}
		})
	}
}

// examples are the example (Face.Example) of every kind on GitHub that has
// one, by kind: each can be made in a world after SeedExamples.
func examples(t testing.TB) map[string]reconcile.Spec {
	t.Helper()
	out := map[string]reconcile.Spec{}
	for _, k := range reconcile.Kinds() {
		f, _ := kinds.FaceOf(k)
		if f.Example == "" {
			continue
		}
		s, err := kinds.DecodeValue(k, []byte(f.Example))
		if err != nil {
			t.Fatalf("%s's example: %v", k, err)
		}
		out[k] = s.(reconcile.Spec)
	}
	return out
}

// labeled reports whether an issue or a pull request carries label.
func (w *world) labeled(label string) bool {
	for _, is := range w.GitHub.Issues(owner, name) {
		if slices.Contains(is.Labels, label) {
			return true
		}
	}
	return slices.ContainsFunc(w.prs(), func(p fakegithub.PR) bool { return slices.Contains(p.Labels, label) })
}
