package reconcile

import (
	"context"
	"fmt"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ledger"
)

// Filter narrows Reconcile to some entries. Zero fields match everything.
type Filter struct {
	Repo string
	Task string
}

// Settlement is what Reconcile did with one entry.
type Settlement struct {
	Key    string        `json:"key"`
	Kind   string        `json:"kind"`
	Task   string        `json:"task"`
	Step   string        `json:"step"`
	Repo   string        `json:"repo,omitempty"`
	From   ledger.Status `json:"from"`
	To     ledger.Status `json:"to"`
	Number int           `json:"number,omitempty"`
	URL    string        `json:"url,omitempty"`
	// Why explains the decision; for an entry that stays attempting, what a
	// person or a rerun must do.
	Why string `json:"why"`
}

// Settled reports whether the entry left "attempting".
func (s Settlement) Settled() bool { return s.To != ledger.Attempting }

// Reconcile settles every attempting entry matching f against reality: found
// → done; absent → failed, so the next run creates it; unknown, or held by a
// live process → stays attempting. It never creates anything.
func (e *Engine) Reconcile(ctx context.Context, f Filter) ([]Settlement, error) {
	entries, err := e.cfg.Ledger.List(ctx, ledger.ListParams{Task: f.Task, Repo: f.Repo, Status: ledger.Attempting})
	if err != nil {
		return nil, fmt.Errorf("list attempting entries: %w", err)
	}
	out := make([]Settlement, 0, len(entries))
	for _, ent := range entries {
		s, err := e.settle(ctx, ent)
		if err != nil {
			return out, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (e *Engine) settle(ctx context.Context, ent *ledger.Entry) (Settlement, error) {
	s := Settlement{Key: ent.Key, Kind: ent.Kind, Task: ent.Task, Step: ent.Step, Repo: ent.Repo, From: ledger.Attempting, To: ledger.Attempting}
	// Do not wait for a live holder: it is settling the entry itself.
	if ent.LeaseLive(e.cfg.Now()) && !e.holderGone(ent.Owner) {
		s.Why = fmt.Sprintf("in progress in process %d on %s", ent.Owner.PID, ent.Owner.Host)
		return s, nil
	}
	p := ledger.ClaimParams{
		Key: ent.Key, Task: ent.Task, Step: ent.Step, Kind: ent.Kind, Repo: ent.Repo, Target: ent.Target,
		Payload: ent.Payload, PayloadHash: ent.PayloadHash, Owner: e.cfg.Owner, Lease: e.cfg.Lease, Why: "reconcile",
	}
	if ent.LeaseLive(e.cfg.Now()) {
		p.TakeOverFence = ent.Fence
	}
	c, err := e.cfg.Ledger.Claim(ctx, p)
	if err != nil {
		return s, fmt.Errorf("claim %s: %w", ent.Key, err)
	}
	switch c.State {
	case ledger.ClaimDone:
		s.To, s.Why = ledger.Done, "settled by another run meanwhile"
		return s, nil
	case ledger.ClaimBusy:
		s.Why = "claimed by another run meanwhile"
		return s, nil
	}
	fence := c.Entry.Fence
	if err := e.letInFlightLand(ctx, c); err != nil {
		_, _ = e.finish(ent.Key, fence, ledger.Attempting, "", effect.Artifact{}, err.Error())
		return s, err
	}
	spec, err := DecodeSpec(ent.Kind, ent.Payload)
	if err != nil {
		_, _ = e.finish(ent.Key, fence, ledger.Attempting, "", effect.Artifact{}, err.Error())
		s.Why = err.Error()
		return s, nil
	}
	env, err := e.env(ent.Repo, ledger.Attempting)
	if err != nil {
		_, _ = e.finish(ent.Key, fence, ledger.Attempting, "", effect.Artifact{}, err.Error())
		s.Why = err.Error()
		return s, nil
	}
	res := spec.Find(ctx, env, ent.Key)
	switch res.State {
	case effect.Found:
		done, err := e.finish(ent.Key, fence, ledger.Done, string(Found), res.Artifact, "")
		if err != nil {
			return s, err
		}
		s.To, s.Number, s.URL, s.Why = ledger.Done, done.Ref.Number, done.Ref.URL, "found on GitHub"
	case effect.Absent:
		if _, err := e.finish(ent.Key, fence, ledger.Failed, "", effect.Artifact{}, "reconcile: not found; the next run creates it"); err != nil {
			return s, err
		}
		s.To, s.Why = ledger.Failed, "not found: the next run will create it"
	case effect.Conflict:
		if _, err := e.finish(ent.Key, fence, ledger.Failed, "", effect.Artifact{}, res.Err.Error()); err != nil {
			return s, err
		}
		s.To, s.Why = ledger.Failed, res.Err.Error()
	default:
		_, _ = e.finish(ent.Key, fence, ledger.Attempting, "", effect.Artifact{}, errText(res.Err))
		s.Why = errText(res.Err)
	}
	return s, nil
}
