package offgithub

import (
	"context"
	"errors"
	"fmt"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/internal/once"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/outcome"
)

// Filter narrows Reconcile to some entries. Zero fields match everything.
type Filter struct {
	Repo string
	Task string
}

// Reconcile settles every attempting entry of a kind off GitHub matching
// f, from the ledger alone: it never runs a command or a check (what to
// run is only ever a run's own input, never what a ledger stored). An
// entry with no mark that its command started never started it: it is
// failed, so the next run runs it. Any other (an earlier attempt may have
// run it) stays attempting, reported for a person or for the next run of
// the same command, whose own --check or --on-unconfirmed settles it; so
// does one held by a live process, and one whose stored task, step, kind,
// repository and target do not derive its key (someone else wrote it).
func (e *Engine) Reconcile(ctx context.Context, f Filter) ([]outcome.Settlement, error) {
	all, err := e.cfg.Ledger.List(ctx, ledger.ListParams{Task: f.Task, Repo: f.Repo, Status: ledger.Attempting})
	if err != nil {
		return nil, fmt.Errorf("list attempting entries: %w", err)
	}
	var entries []*ledger.Entry
	for _, ent := range all {
		if isKind(ent.Kind) {
			entries = append(entries, ent)
		}
	}
	if e.cfg.Progress != nil {
		e.cfg.Progress.Start(len(entries))
	}
	out := make([]outcome.Settlement, 0, len(entries))
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

// settle fails ent when no attempt started its command; it reports the
// rest as they are.
func (e *Engine) settle(ctx context.Context, ent *ledger.Entry) (outcome.Settlement, error) {
	if why := once.Forged(ent); why != "" {
		return once.Reported(ent, why), nil
	}
	if !ent.Sending.At.IsZero() {
		return once.Reported(ent, mayHaveRun(ent.Key)), nil
	}
	c, s, err := e.core.ClaimToSettle(ctx, ent)
	if c == nil || err != nil {
		return s, err
	}
	key, fence := ent.Key, c.Entry.Fence
	if !c.Entry.Sending.At.IsZero() {
		// Marked since it was listed: an attempt may have started it.
		s.Why = mayHaveRun(key)
		e.core.Release(c, s.Why)
		return s, nil
	}
	s.Why = "no attempt marked that it started the command, so none did: the next run runs it"
	if _, err := e.core.Finish(key, fence, ledger.Failed, "", effect.Artifact{}, "reconcile: "+s.Why); err != nil {
		return s, err
	}
	s.To = ledger.Failed
	return s, nil
}

// mayHaveRun is why reconcile leaves an entry whose command an earlier
// attempt may have started as it is.
func mayHaveRun(key string) string {
	return "an earlier attempt may have run it, and reconcile runs no command or check from the ledger: rerun the same command " +
		"(its --check or --on-unconfirmed settles it), or `ghonce resolve " + key + " --done` if it happened, `--retry` if not"
}
