package reconcile

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/once"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/outcome"
)

// Filter narrows Reconcile to some entries. Zero fields match everything.
type Filter struct {
	Repo string
	Task string
	// Kind, if set, says which kinds to settle. Unset: the kinds of this
	// package. An entry of another kind (a guarded command's or a tool
	// call's, which package offgithub's engine settles, or one a newer
	// ghonce wrote) is then left as it is: not claimed, not written.
	Kind func(kind string) bool
}

// Reconcile settles every attempting entry matching f against reality: found
// → done; absent → failed, so the next run creates it; unknown, or held by a
// live process → stays attempting. It never creates anything.
//
// It spends few requests: it claims every entry first, then looks for the
// pull requests, issues and comments of each repository together with a
// few listings (ghcheck.FindMany: about one request per 100 entries), and
// for the other kinds one look-up each, at most Config.Concurrency at once.
func (e *Engine) Reconcile(ctx context.Context, f Filter) ([]outcome.Settlement, error) {
	entries, err := e.cfg.Ledger.List(ctx, ledger.ListParams{Task: f.Task, Repo: f.Repo, Status: ledger.Attempting})
	if err != nil {
		return nil, fmt.Errorf("list attempting entries: %w", err)
	}
	settles := f.Kind
	if settles == nil {
		settles = isKind
	}
	entries = slices.DeleteFunc(entries, func(ent *ledger.Entry) bool { return !settles(ent.Kind) })
	prog := e.cfg.Progress
	if prog == nil {
		prog = noProgress{}
	}
	prog.Start(len(entries))
	out := make([]outcome.Settlement, 0, len(entries))
	report := func(s outcome.Settlement) {
		out = append(out, s)
		prog.Settled(s)
	}
	// Claim everything first, so the look-ups can be batched.
	var held []*pending
	for _, ent := range entries {
		p, s, err := e.claimForReconcile(ctx, ent)
		if err != nil {
			e.releaseAll(held, err)
			return out, err
		}
		if p == nil {
			report(s)
			continue
		}
		held = append(held, p)
	}
	for _, p := range held {
		if err := e.core.LetInFlightLand(ctx, p.claim, p.claimed); err != nil {
			e.releaseAll(held, err)
			return out, err
		}
	}
	e.findAll(ctx, held)
	for i, p := range held {
		s, err := e.settleFound(p)
		if errors.Is(err, ledger.ErrFenced) {
			// The lease ran out during a long batch and another run took
			// the entry over: it settles it.
			s.To, s.Why, err = ledger.Attempting, "taken over by another run meanwhile", nil
		}
		if err != nil {
			e.releaseAll(held[i+1:], err)
			return out, err
		}
		report(s)
	}
	return out, nil
}

// pending is an entry Reconcile holds, with what it found.
type pending struct {
	claim   *ledger.Claim // its Entry is the entry as held
	claimed time.Time     // when this process read the claim (cfg.Now)
	spec    Spec
	env     *Env
	res     effect.Result
	s       outcome.Settlement
}

type noProgress struct{}

func (noProgress) Start(int)                  {}
func (noProgress) Settled(outcome.Settlement) {}

// claimForReconcile claims ent for settling. It returns the entry held, or
// nil and the settlement of an entry it cannot or need not settle.
func (e *Engine) claimForReconcile(ctx context.Context, ent *ledger.Entry) (*pending, outcome.Settlement, error) {
	spec, why := e.described(ent)
	if why != "" {
		return nil, once.Reported(ent, why), nil
	}
	c, s, err := e.core.ClaimToSettle(ctx, ent)
	if c == nil || err != nil {
		return nil, s, err
	}
	claimed := e.cfg.Now()
	r, err := ghcheck.ParseRepo(ent.Repo)
	if err != nil {
		e.core.Release(c, err.Error())
		s.Why = err.Error()
		return nil, s, nil
	}
	env := e.env(r, ledger.Attempting)
	e.dateEnv(env, c, claimed)
	return &pending{claim: c, claimed: claimed, spec: spec, env: env, s: s}, s, nil
}

// described is ent's stored description, to look its artifact up by
// (read only, under its key, in the repository its key was derived for),
// or why it is not looked up: its stored identity does not derive its key
// (once.Forged), the ledger keeps no description (a repository ledger's
// claim: anyone who can push writes it), or the description is not one
// of the key's own target. Nothing a ledger stored is ever created.
func (e *Engine) described(ent *ledger.Entry) (Spec, string) {
	if why := once.Forged(ent); why != "" {
		return nil, why
	}
	if e.cfg.DoneNeedsProof || len(ent.Payload) == 0 {
		return nil, "this ledger keeps no description to look it up by (a repository ledger's claim is a lock and a record): " +
			"rerun the command that made it; it looks on GitHub before it creates"
	}
	spec, err := DecodeSpec(ent.Kind, ent.Payload)
	if err != nil {
		return nil, err.Error()
	}
	if spec.Target() != ent.Target {
		return nil, fmt.Sprintf("its stored description names the target %.60q, not its key's %.60q: someone else wrote it, so nothing was looked up", spec.Target(), ent.Target)
	}
	return spec, ""
}

// releaseAll leaves the entries still held attempting, for the next run.
func (e *Engine) releaseAll(held []*pending, err error) {
	for _, p := range held {
		e.core.Release(p.claim, err.Error())
	}
}

// batchGitHub is a GitHub that can answer many look-ups in one repository
// with a few listings; *ghcheck.Client is one.
type batchGitHub interface {
	FindMany(ctx context.Context, r ghcheck.Repo, since time.Time, ls []ghcheck.Lookup) []effect.Result
}

// findAll fills in each pending entry's result: the BatchFinder ones of a
// repository with one FindMany, the rest (and all of them when the GitHub
// cannot batch) one Find each, at most Config.Concurrency at once.
func (e *Engine) findAll(ctx context.Context, held []*pending) {
	var single []*pending
	groups := map[ghcheck.Repo][]*pending{}
	var order []ghcheck.Repo
	bg, canBatch := e.cfg.GitHub.(batchGitHub)
	for _, p := range held {
		if _, ok := p.spec.(BatchFinder); ok && canBatch && !p.env.Since.IsZero() {
			if groups[p.env.Repo] == nil {
				order = append(order, p.env.Repo)
			}
			groups[p.env.Repo] = append(groups[p.env.Repo], p)
			continue
		}
		single = append(single, p)
	}
	sem := make(chan struct{}, e.cfg.Concurrency)
	var wg sync.WaitGroup
	spawn := func(f func()) {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			f()
		}()
	}
	for _, r := range order {
		g := groups[r]
		since := g[0].env.Since
		ls := make([]ghcheck.Lookup, len(g))
		for i, p := range g {
			if p.env.Since.Before(since) {
				since = p.env.Since
			}
			ls[i] = p.spec.(BatchFinder).Lookup(p.claim.Entry.Key)
		}
		spawn(func() {
			for i, res := range bg.FindMany(ctx, r, since, ls) {
				g[i].res = res
			}
		})
	}
	for _, p := range single {
		spawn(func() { p.res = p.spec.Find(ctx, p.env, p.claim.Entry.Key) })
	}
	wg.Wait()
}

// settleFound records what the look-up of p found.
func (e *Engine) settleFound(p *pending) (outcome.Settlement, error) {
	s, res, key, fence := p.s, p.res, p.claim.Entry.Key, p.claim.Entry.Fence
	switch res.State {
	case effect.Found:
		done, err := e.core.Finish(key, fence, ledger.Done, string(outcome.Found), res.Artifact, "")
		if err != nil {
			return s, err
		}
		s.To, s.Number, s.URL, s.Why = ledger.Done, done.Ref.Number, done.Ref.URL, "found on GitHub"
	case effect.Absent:
		if _, err := e.core.Finish(key, fence, ledger.Failed, "", effect.Artifact{}, "reconcile: not found; the next run creates it"); err != nil {
			return s, err
		}
		s.To, s.Why = ledger.Failed, "not found: the next run will create it"
	case effect.Conflict:
		if _, err := e.core.Finish(key, fence, ledger.Failed, "", effect.Artifact{}, res.Err.Error()); err != nil {
			return s, err
		}
		s.To, s.Why = ledger.Failed, res.Err.Error()
	default:
		e.core.Release(p.claim, errText(res.Err))
		s.Why = errText(res.Err)
	}
	return s, nil
}
