package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/sqlite"
	"github.com/ghonce/ghonce/offgithub"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
)

// downLedger fails the chosen write as a ledger that restarted does
// (ledger.ErrUnavailable).
type downLedger struct {
	ledger.Ledger
	claim, mark bool
}

var errDown = fmt.Errorf("lost the connection to the Postgres ledger: terminating connection due to administrator command: %w", ledger.ErrUnavailable)

func (d *downLedger) Claim(ctx context.Context, p ledger.ClaimParams) (*ledger.Claim, error) {
	if d.claim {
		return nil, errDown
	}
	return d.Ledger.Claim(ctx, p)
}

func (d *downLedger) MarkSending(ctx context.Context, p ledger.SendingParams) error {
	if d.mark {
		return errDown
	}
	return d.Ledger.MarkSending(ctx, p)
}

// A ledger that goes away mid-action (a Postgres restart) is a retry, not
// "a person is needed": exit 3 (UnconfirmedError), saying that nothing
// was sent when nothing was; nothing was created on GitHub.
func TestLedgerUnavailableBeforeSendingIsExit3AndSaysNothingWasSent(t *testing.T) {
	for _, tc := range []struct {
		name        string
		claim, mark bool
		spec        func(w *world) reconcile.Action
	}{
		{"claim fails", true, false, func(w *world) reconcile.Action { w.Push("A"); return prAction("A", "A", "Fix", "b") }},
		{"sending mark of a PR fails", false, true, func(w *world) reconcile.Action { w.Push("B"); return prAction("B", "B", "Fix", "b") }},
		{"sending mark of a command fails", false, true, nil}, // through offgithub's engine
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			l, err := sqlite.Open(w.ctx, w.Ledger, sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			down := &downLedger{Ledger: l, claim: tc.claim, mark: tc.mark}
			if tc.spec == nil {
				p, perr := offgithub.Prepare(offgithub.Action{Task: "C", Step: "notify", Spec: offgithub.Exec{Argv: []string{"/bin/sh", "-c", "exit 9"}, OnUnconfirmed: offgithub.OnUnconfirmedRetry}})
				if perr != nil {
					t.Fatal(perr)
				}
				_, err = offgithub.New(offgithub.Config{Ledger: down}).Do(w.ctx, p)
			} else {
				_, err = do(w.ctx, w.engine(func(c *reconcile.Config) { c.Ledger = down }), tc.spec(w))
			}
			var uc *outcome.UnconfirmedError
			if !errors.As(err, &uc) || !strings.Contains(err.Error(), "nothing was sent") {
				t.Fatalf("err = %v; want unconfirmed (exit 3) saying nothing was sent", err)
			}
			if n := len(w.GitHub.PullRequests(owner, name)); n != 0 {
				t.Fatalf("%d pull requests created", n)
			}
		})
	}
}
