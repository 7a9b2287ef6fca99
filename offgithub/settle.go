package offgithub

import (
	"context"
	"errors"
	"fmt"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/internal/once"
	"github.com/ghonce/ghonce/ledger"
)

// Filter narrows Reconcile to some entries. Zero fields match everything.
type Filter struct {
	Repo string
	Task string
}

// Settlement is what Reconcile did with one entry: reconcile.Settlement.
type Settlement = once.Settlement

// Reconcile settles every attempting entry of a kind off GitHub matching f
// by asking its Find (a command's check; without one, the ledger and the
// policy): found → done; absent → failed, so the next run runs it; unknown,
// or held by a live process → stays attempting. It never runs a command.
func (e *Engine) Reconcile(ctx context.Context, f Filter) ([]Settlement, error) {
	all, err := e.cfg.Ledger.List(ctx, ledger.ListParams{Task: f.Task, Repo: f.Repo, Status: ledger.Attempting})
	if err != nil {
		return nil, fmt.Errorf("list attempting entries: %w", err)
	}
	var entries []*ledger.Entry
	for _, ent := range all {
		if IsKind(ent.Kind) {
			entries = append(entries, ent)
		}
	}
	if e.cfg.Progress != nil {
		e.cfg.Progress.Start(len(entries))
	}
	out := make([]Settlement, 0, len(entries))
	for _, ent := range entries {
		s, err := e.settle(ctx, ent)
		if errors.Is(err, ledger.ErrFenced) {
			s.To, s.Why, err = ledger.Attempting, "taken over by another run meanwhile", nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, s)
		if e.cfg.Progress != nil {
			e.cfg.Progress.Settled(s)
		}
	}
	return out, nil
}

// settle claims ent, asks its Find and records the answer.
func (e *Engine) settle(ctx context.Context, ent *ledger.Entry) (Settlement, error) {
	c, s, err := e.core.ClaimToSettle(ctx, ent)
	if c == nil || err != nil {
		return s, err
	}
	key, fence := ent.Key, c.Entry.Fence
	keep := func(why string) (Settlement, error) {
		e.core.Release(c, why)
		s.Why = why
		return s, nil
	}
	spec, err := DecodeSpec(ent.Kind, ent.Payload)
	if err != nil {
		return keep(err.Error())
	}
	env := &Env{Prior: ledger.Attempting, LedgerNew: e.cfg.LedgerNew, Stdout: e.cfg.Stdout, Stderr: e.cfg.Stderr}
	if env.unproven, err = e.letInFlightLand(ctx, c); err != nil {
		e.core.Release(c, err.Error())
		return s, err
	}
	switch res := spec.Find(ctx, env, key); res.State {
	case effect.Found:
		done, err := e.core.Finish(key, fence, ledger.Done, string(Found), res.Artifact, "")
		if err != nil {
			return s, err
		}
		s.To, s.Number, s.URL, s.Why = ledger.Done, done.Ref.Number, done.Ref.URL, "the check says it happened"
	case effect.Absent:
		s.Why = "the check says it did not happen: the next run will run it"
		if _, err := e.core.Finish(key, fence, ledger.Failed, "", effect.Artifact{}, "reconcile: "+s.Why); err != nil {
			return s, err
		}
		s.To = ledger.Failed
	default:
		return keep(errText(res.Err))
	}
	return s, nil
}
