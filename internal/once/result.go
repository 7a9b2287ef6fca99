package once

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/taskkey"
)

// ResultOf is the result of entry ent, which ended as o.
func ResultOf(ent *ledger.Entry, o outcome.Outcome) *outcome.Result {
	return &outcome.Result{
		Key: ent.Key, Kind: ent.Kind, Task: ent.Task, Step: ent.Step, Repo: ent.Repo, Outcome: o,
		Number: ent.Ref.Number, URL: ent.Ref.URL, ID: ent.Ref.ID, SHA: ent.Ref.SHA, Ref: ent.Ref.Text,
		Attempts: ent.Attempts,
	}
}

// OutcomeOf names how an action ended: its Result's outcome, or one of the
// error outcomes (ErrOutcome).
func OutcomeOf(r *outcome.Result, err error) string {
	if err == nil && r != nil {
		return string(r.Outcome)
	}
	return ErrOutcome(err)
}

// Do runs do for action a, counted and traced by o.
func (o *Observer) Do(ctx context.Context, a Action, do func(context.Context) (*outcome.Result, error)) (*outcome.Result, error) {
	if o.Off() {
		return do(ctx)
	}
	var r *outcome.Result
	err := o.Observe(ctx, a, func(ctx context.Context) (Ended, error) {
		var err error
		r, err = do(ctx)
		end := Ended{Outcome: OutcomeOf(r, err)}
		if r != nil {
			end.Key, end.URL, end.Number = r.Key, r.URL, r.Number
		}
		return end, err
	})
	return r, err
}

// ChangedWarning is the warning of a done (or found) result whose
// description differs from this run's in fields, what naming the artifact:
// the artifact was kept as it is.
func ChangedWarning(fields []string, what string) string {
	return fmt.Sprintf("this run's %s from what made %s, which was left as it is", Differ(fields), what)
}

// Release leaves the entry claim c holds attempting, for the next run,
// saying that this attempt sent nothing: the mark a claim that created the
// entry wrote with it is not a create in flight, and an entry an earlier
// attempt left attempting keeps its age (ledger.FinishParams.Since), so
// `status --stale` still pages for what no run has moved toward done.
func (o *Core) Release(c *ledger.Claim, errMsg string) {
	p := FinishParams(c.Entry.Key, c.Entry.Fence, ledger.Attempting, "", effect.Artifact{}, errMsg)
	p.Unsent = c.State == ledger.ClaimCreated
	if c.Prior == ledger.Attempting {
		p.Since = c.PriorUpdatedAt
	}
	_, _ = o.Record(p)
}

// CreateFailed records a create's error by its class and returns the error
// the action ends with: a refusal (nothing made) fails the entry; a create
// that never left fails it too (notSent says what that means for the
// kind), unless the ledger went away first; anything else may have taken
// effect and stays attempting. A duplicate (effect.ClassExists) is the
// engine's to settle first.
func (o *Core) CreateFailed(key string, fence int64, kind string, err error, notSent string) error {
	class := effect.ClassMaybe
	if ce := (*effect.CreateError)(nil); errors.As(err, &ce) {
		class = ce.Class
	}
	switch class {
	case effect.ClassRefused:
		// The final word: the same request is refused again until its
		// cause is fixed, so the error says what to fix, not "rerun".
		_, _ = o.Finish(key, fence, ledger.Failed, "", effect.Artifact{}, err.Error())
		return fmt.Errorf("create %s: %w (nothing was created)", kind, err)
	case effect.ClassNotSent:
		if errors.Is(err, ledger.ErrUnavailable) {
			// The ledger went away before the create started: nothing was
			// sent, and the entry stays as the ledger last had it.
			_, _ = o.Finish(key, fence, ledger.Attempting, "", effect.Artifact{}, err.Error())
			return Unavailable(key, err)
		}
		_, _ = o.Finish(key, fence, ledger.Failed, "", effect.Artifact{}, err.Error())
		return fmt.Errorf("create %s: %w (%s)", kind, err, notSent)
	}
	_, _ = o.Finish(key, fence, ledger.Attempting, "", effect.Artifact{}, err.Error())
	return &outcome.UnconfirmedError{Key: key, Err: fmt.Errorf("create %s may have taken effect: %w", kind, err), Hint: RerunHint}
}

// WithPrior is res, the look-up of this run's description, completed by
// prior, the look-up of the one an earlier attempt stored: found wins;
// otherwise unknown or conflict wins over absent, so absence is reported
// only when both looks are sure.
func WithPrior(res, prior effect.Result) effect.Result {
	if res.State == effect.Found {
		return res
	}
	if prior.State == effect.Found || res.State == effect.Absent {
		return prior
	}
	return res
}

// ClaimToSettle claims ent for settling it (Reconcile). It does not wait
// for a live holder: that one is settling the entry itself; it takes over
// from one proven gone (the ledger judges the lease, on its own clock). It
// returns the claim held, or nil and the settlement of an entry it cannot
// or need not settle.
func (o *Core) ClaimToSettle(ctx context.Context, ent *ledger.Entry) (*ledger.Claim, outcome.Settlement, error) {
	s := Reported(ent, "")
	p := ledger.ClaimParams{
		Key: ent.Key, Task: ent.Task, Step: ent.Step, Kind: ent.Kind, Repo: ent.Repo, Target: ent.Target,
		Payload: ent.Payload, PayloadHash: ent.PayloadHash, Owner: o.cfg.Owner, Lease: o.cfg.Lease, Why: "reconcile",
	}
	c, err := o.cfg.Ledger.Claim(ctx, p)
	if err == nil && c.State == ledger.ClaimBusy && o.HolderGone(c.Entry.Owner) {
		p.TakeOverFence = c.Entry.Fence
		p.Why = fmt.Sprintf("reconcile: took over from %s: process gone", c.Entry.Owner.ID)
		c, err = o.cfg.Ledger.Claim(ctx, p)
	}
	if err != nil {
		return nil, s, fmt.Errorf("claim %s: %w", ent.Key, err)
	}
	switch c.State {
	case ledger.ClaimDone:
		s.To, s.Why = ledger.Done, "settled by another run meanwhile"
		return nil, s, nil
	case ledger.ClaimBusy:
		s.Why = "in progress in another process (its holder is of another machine)"
		if h := c.Entry.Owner; h.PID != 0 {
			s.Why = fmt.Sprintf("in progress in process %d on %s", h.PID, h.Host)
		}
		return nil, s, nil
	}
	return c, s, nil
}

// Forged says why ent's stored identity cannot be believed: its task,
// step, kind, repository and target do not derive its key, so someone
// else wrote the entry (anyone who can write a shared ledger can), and
// nothing is looked up or written for it. "" when they derive it, or when
// the entry stores none (a repository ledger's claim).
func Forged(ent *ledger.Entry) string {
	if ent.Task == "" && ent.Step == "" && ent.Repo == "" && ent.Target == "" {
		return ""
	}
	id := taskkey.Identity{Task: ent.Task, Step: ent.Step, Kind: ent.Kind, Repo: ent.Repo, Target: ent.Target}
	if taskkey.Key(id) == ent.Key || slices.Contains(taskkey.LegacyKeys(id), ent.Key) {
		return ""
	}
	return "its stored task, step, kind, repository and target do not derive its key: someone else wrote it, so nothing was looked up or written. " +
		"Check it; `ghonce resolve " + ent.Key + " --retry --force` clears it"
}

// Reported is the settlement of ent, left as it is, for the reason why.
func Reported(ent *ledger.Entry, why string) outcome.Settlement {
	return outcome.Settlement{Key: ent.Key, Kind: ent.Kind, Task: ent.Task, Step: ent.Step, Repo: ent.Repo, From: ledger.Attempting, To: ledger.Attempting, Why: why}
}
