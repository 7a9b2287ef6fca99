package offgithub

import (
	"context"
	"fmt"
	"time"

	"github.com/ghonce/ghonce/internal/human"
	"github.com/ghonce/ghonce/internal/procid"
	"github.com/ghonce/ghonce/internal/supervise"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/outcome"
)

// letInFlightLand waits, before looking, until what the attempt claim c
// took over may have in flight has landed: a command until its supervisor
// and process group are gone, anything else as once.Core.LetInFlightLand
// waits. It returns, for a command whose processes cannot be proven gone
// from here (another machine or PID namespace), why not.
func (e *Engine) letInFlightLand(ctx context.Context, c *ledger.Claim) (unproven string, err error) {
	if s := c.Entry.Sending; !s.At.IsZero() && !s.Proc.IsZero() {
		return e.waitForProcesses(ctx, c.Entry.Key, s.Proc)
	}
	return "", e.core.LetInFlightLand(ctx, c, e.oc.Now())
}

// waitForProcesses waits, up to Config.Wait, until the processes of a
// guarded command's earlier attempt (supervisor sup and its process group)
// are gone. It returns why they cannot be proven gone from here, or an
// unconfirmed error if they still run after the wait.
func (e *Engine) waitForProcesses(ctx context.Context, key string, sup ledger.Proc) (string, error) {
	start := e.oc.Now()
	poll := 20 * time.Millisecond
	told := false
	for {
		switch supervise.Gone(sup) {
		case procid.Gone:
			return "", nil
		case procid.Unknown:
			return fmt.Sprintf("the earlier attempt's command ran under %s on another machine, boot or PID namespace, so ghonce cannot prove from here that it has stopped", supervise.Describe(sup)), nil
		}
		waited := e.oc.Now().Sub(start)
		if waited >= e.oc.Wait {
			return "", &outcome.UnconfirmedError{Key: key, Err: fmt.Errorf("the earlier attempt's command still runs (%s) after waiting %s", supervise.Describe(sup), human.Duration(waited)),
				Hint: "Its effect may still happen: rerun once it has ended; `ghonce reconcile` settles it then."}
		}
		if !told {
			told = true
			e.oc.Logf("the earlier attempt's command on %s still runs (%s); waiting up to %s for it to end before checking", key, supervise.Describe(sup), human.Duration(e.oc.Wait))
		}
		if err := e.oc.Sleep(ctx, min(poll, e.oc.Wait-waited)); err != nil {
			return "", err
		}
		poll = min(poll*2, 500*time.Millisecond)
	}
}
