package offgithub_test

import (
	"os"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/sqlite/sqlitetest"
	"github.com/ghonce/ghonce/offgithub"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
)

// The done record of a guarded command with --check is not forced to disk,
// as no GitHub kind's is (reconcile's TestLostDoneRecordIsFoundNotDuplicated).
// A power loss right after ghonce returned may lose it; the rerun then finds
// the entry attempting, asks the check, and records it as found: the
// command does not run again.
func TestLostDoneRecordIsFoundNotDuplicated(t *testing.T) {
	x := newExecWorld(t)
	x.engine()
	a := offgithub.Action{Task: "T-1", Step: "notify", Spec: offgithub.Exec{
		Argv:  []string{"/bin/sh", "-c", `echo "$GHONCE_KEY" >> "$1"`, "notify", x.sent},
		Check: `test -f '` + x.sent + `' && grep -qx "$GHONCE_KEY" '` + x.sent + `'`,
	}}
	mark := &sqlitetest.Mark{T: t, Path: x.Ledger}
	e, _ := x.engine(func(c *offgithub.Config) { mark.Ledger = c.Ledger; c.Ledger = mark })
	if r := mustDo(t, e, a); r.Outcome != outcome.Created {
		t.Fatalf("first run: %s, want created", r.Outcome)
	}
	if mark.DoneVerifiable == nil || !*mark.DoneVerifiable {
		t.Fatal("the done record was not written, or was forced: want it marked Verifiable")
	}
	if mark.At == 0 || sqlitetest.WALSize(t, x.Ledger) <= mark.At {
		t.Fatalf("WAL is %d bytes, %d at the claim: the run wrote nothing after its claim", sqlitetest.WALSize(t, x.Ledger), mark.At)
	}

	// The machine loses power: the ledger keeps only what was forced.
	x.Ledger = sqlitetest.PowerLoss(t, x.Ledger, mark.At, t.TempDir())
	// After the reboot nothing from before runs: the lease's holder is
	// gone (this test is one process, so the rerun names another PID).
	e, _ = x.engine(func(c *offgithub.Config) {
		c.Owner = reconcile.NewOwner()
		c.Owner.PID++
		c.Gone = func(ledger.Proc) bool { return true }
	})
	if r := mustDo(t, e, a); r.Outcome != outcome.Found {
		t.Errorf("rerun after the lost done: %s, want found", r.Outcome)
	}
	b, _ := os.ReadFile(x.sent)
	if n := strings.Count(string(b), "\n"); n != 1 {
		t.Errorf("%d made, want 1", n)
	}
	if r := mustDo(t, e, a); r.Outcome != outcome.Skipped {
		t.Errorf("third run: %s, want skipped", r.Outcome)
	}
}

// A guarded command without --check has nothing to look at after a lost
// done record, so its done record is forced (not Verifiable): a crash of the
// machine cannot turn a finished command into an exit 3, or, with
// --on-unconfirmed retry, into a second run.
func TestExecWithoutCheckForcesItsDone(t *testing.T) {
	x := newExecWorld(t)
	x.engine() // the ledger exists ahead of the run, as `ghonce init` makes it
	mark := &sqlitetest.Mark{T: t, Path: x.Ledger}
	e, _ := x.engine(func(c *offgithub.Config) { mark.Ledger = c.Ledger; c.Ledger = mark })
	if r := mustDo(t, e, execAction(x.notify())); r.Outcome != outcome.Created {
		t.Fatalf("first run: %s, want created", r.Outcome)
	}
	if mark.DoneVerifiable == nil {
		t.Fatal("no done record was written")
	}
	if *mark.DoneVerifiable {
		t.Error("the done record was marked Verifiable (unforced), want it forced")
	}
}
