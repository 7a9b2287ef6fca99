package reconcile_test

import (
	"context"
	"testing"

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
}

func (m *durableMark) Claim(ctx context.Context, p ledger.ClaimParams) (*ledger.Claim, error) {
	c, err := m.Ledger.Claim(ctx, p)
	if err == nil && (c.State == ledger.ClaimCreated || c.State == ledger.ClaimAcquired) {
		m.at = sqlitetest.WALSize(m.t, m.path)
	}
	return c, err
}

// The done record of a PR is not forced to disk. A power loss right after
// ghonce returned may lose it; the rerun then finds the entry attempting,
// asks GitHub, finds the PR and records it as found: one PR, never two.
func TestLostDoneRecordIsFoundNotDuplicated(t *testing.T) {
	w := newWorld(t)
	w.push("fix-1")
	mark := &durableMark{t: t, path: w.ledger}
	e := w.engine(func(c *reconcile.Config) { mark.Ledger = c.Ledger; c.Ledger = mark })
	a := prAction("T-1", "fix-1", "Fix", "body")
	if r := mustDo(t, e, a); r.Outcome != reconcile.Created {
		t.Fatalf("first run: %s, want created", r.Outcome)
	}
	if mark.at == 0 || sqlitetest.WALSize(t, w.ledger) <= mark.at {
		t.Fatalf("WAL is %d bytes, %d at the claim: the run wrote nothing after its claim", sqlitetest.WALSize(t, w.ledger), mark.at)
	}

	// The machine loses power: the ledger keeps only what was forced.
	w.ledger = sqlitetest.PowerLoss(t, w.ledger, mark.at, t.TempDir())
	writes := w.writes()
	// After the reboot nothing from before runs: the lease's holder is gone
	// (this test is one process, so the rerun names another PID).
	e = w.engine(func(c *reconcile.Config) {
		c.Owner = reconcile.NewOwner()
		c.Owner.PID++
		c.Alive = func(int) bool { return false }
	})
	r := mustDo(t, e, a)
	if r.Outcome != reconcile.Found {
		t.Errorf("rerun after the lost done: %s, want found", r.Outcome)
	}
	if n := len(w.prs()); n != 1 {
		t.Errorf("%d PRs on GitHub, want 1", n)
	}
	if n := w.writes() - writes; n != 0 {
		t.Errorf("the rerun sent %d writes to GitHub, want 0", n)
	}
	if r := mustDo(t, e, a); r.Outcome != reconcile.Skipped {
		t.Errorf("third run: %s, want skipped", r.Outcome)
	}
}
