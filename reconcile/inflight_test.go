package reconcile_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/sqlite"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
)

// countingLedger counts the sending marks written through it.
type countingLedger struct {
	ledger.Ledger
	marks atomic.Int64
}

func (c *countingLedger) MarkSending(ctx context.Context, p ledger.SendingParams) error {
	c.marks.Add(1)
	return c.Ledger.MarkSending(ctx, p)
}

// The in-flight window is paid only on a takeover of an attempt that may
// have a request in flight: a fresh create writes one sending mark and
// waits for nothing; a rerun of a done key writes nothing; a takeover of
// an attempt that sent nothing waits for nothing; a takeover right after
// an attempt sent its create waits out the window (DefaultSettle from the
// mark). Run with -v to see the figures.
func TestInFlightWindowCostIsPaidOnlyOnTakeover(t *testing.T) {
	w := newWorld(t)
	l, err := sqlite.Open(w.ctx, w.Ledger, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	cl := &countingLedger{Ledger: l}
	var slept time.Duration
	engine := func() *reconcile.Engine {
		return w.engine(func(cfg *reconcile.Config) {
			cfg.Ledger = cl
			cfg.Settle = 0 // the default window
			cfg.Gone = func(p ledger.Proc) bool { return p.PID == 999999 }
			cfg.Sleep = func(_ context.Context, d time.Duration) error { slept += d; return nil }
		})
	}
	measure := func(name string, a reconcile.Action, want outcome.Outcome, wantMarks int64, wantWait func(time.Duration) bool) {
		t.Helper()
		marks, start := cl.marks.Load(), slept
		r, err := do(w.ctx, engine(), a)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		m, waited := cl.marks.Load()-marks, slept-start
		t.Logf("%-50s outcome %-7s sending marks %d  waited %s", name, r.Outcome, m, waited)
		if r.Outcome != want || m != wantMarks || !wantWait(waited) {
			t.Errorf("%s: %s, %d marks, waited %s; want %s, %d marks and another wait", name, r.Outcome, m, waited, want, wantMarks)
		}
	}
	none := func(d time.Duration) bool { return d == 0 }

	w.Push("FRESH")
	fresh := prAction("FRESH", "FRESH", "Fix", "body")
	measure("fresh create (happy path)", fresh, outcome.Created, 1, none)
	measure("rerun of a done key", fresh, outcome.Skipped, 0, none)

	crashed := func(task string, sent bool) reconcile.Action {
		w.Push(task)
		a := prAction(task, task, "Fix", "body")
		c, err := l.Claim(w.ctx, ledger.ClaimParams{Key: keyOf(t, a), Task: a.Task, Step: a.Step, Kind: "pr", Repo: repo, Target: "main",
			Owner: ledger.Owner{ID: "crashed", Host: "h", PID: 999999}, Lease: time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		if sent {
			if err := l.MarkSending(w.ctx, ledger.SendingParams{Key: c.Entry.Key, Fence: c.Entry.Fence, Lease: time.Hour}); err != nil {
				t.Fatal(err)
			}
		}
		return a
	}
	measure("takeover of an attempt that sent nothing", crashed("SENT-NOTHING", false), outcome.Created, 1, none)
	measure("takeover of an attempt whose create is in flight", crashed("IN-FLIGHT", true), outcome.Created, 1,
		func(d time.Duration) bool {
			return d > reconcile.DefaultSettle-time.Second && d <= reconcile.DefaultSettle
		})
}
