// Package reconcile is the engine that decides for GitHub. Every kind of
// side effect on GitHub (pull request, issue, comment, branch, file, ...)
// goes through the same flow:
//
//  1. Claim the key in the ledger: the intent is durable before anything is
//     sent. A done entry returns its stored result with no GitHub request.
//  2. Ask GitHub whether the artifact already exists (consistent reads),
//     with the current description and with the one stored by an earlier
//     attempt.
//  3. Found: record done. Absent: create, then record done. Unknown: leave the
//     entry attempting and say that a rerun or `ghonce reconcile` settles it.
//
// A kind is a small description (Spec): how to find its artifact and how to
// create it. The flow is written once, here. Effects GitHub cannot see (a
// guarded command, a tool call) have an engine of their own beside this
// one, package offgithub, on the same ledger-side core.
package reconcile

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/crashpoint"
	"github.com/ghonce/ghonce/internal/once"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/observe"
	"github.com/ghonce/ghonce/outcome"
)

// Config builds an Engine. Ledger is required, and GitHub to act.
type Config struct {
	Ledger    ledger.Ledger
	GitHub    GitHub
	LedgerNew bool
	// Owner identifies this process in leases (default: NewOwner()).
	Owner ledger.Owner
	// Wait bounds how long Do waits for another process holding the same
	// key (default 30s; negative: do not wait).
	Wait time.Duration
	// Lease is how long a claim holds without a heartbeat (default 2m). A
	// heartbeat renews it every Lease/4 while an attempt runs.
	Lease time.Duration
	// Settle is the in-flight window of a create request: how long after
	// an earlier attempt marked its create as leaving (ledger.Sending, on
	// the ledger's clock) a run that takes its entry over waits before it
	// looks (default DefaultSettle; negative: not at all). GitHub ends a
	// request after 10 seconds but may commit a create until then; looking
	// before the window closes could find nothing and create a second. It
	// is paid only on a takeover of an attempt that may have a request in
	// flight: an attempt that sent nothing left no mark.
	Settle time.Duration
	// Now and Sleep are injected by tests.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	// Gone reports whether the process p is proven gone; a holder is
	// taken over before its lease ends only then (default: procid.Check:
	// same boot id and PID namespace as this process, and the PID free or
	// started at another time). Injected by tests.
	Gone func(p ledger.Proc) bool
	// Logf reports progress (to stderr in the CLI); nil is silent.
	Logf func(format string, args ...any)
	// TrustNeverAttempted skips the look-up on GitHub for a key this
	// ledger has never seen, when the ledger is established (LedgerNew
	// false): the create is sent at once. Safe only when every run that
	// may act on the same tasks uses this same ledger (one machine, or one
	// shared Postgres ledger); see the README's "When ghonce trusts the
	// ledger". Default false: such a key is looked up (by head and label
	// for a pull request, without the newest-PR scan that only a lost
	// ledger needs).
	TrustNeverAttempted bool
	// ClockSkew is how far this machine's clock may be ahead of GitHub's
	// (default 10 minutes). A look-up after an earlier attempt reads only
	// what changed since that attempt began, less ClockSkew.
	ClockSkew time.Duration
	// Concurrency bounds the look-ups Reconcile runs at once (default 8).
	Concurrency int
	// Progress, if set, is told how many entries Reconcile will settle and
	// each one it settled.
	Progress outcome.Progress
	// Metrics, if set, counts actions by kind and outcome, waits for
	// another holder and takeovers (package observe).
	Metrics *observe.Metrics
	// Tracer, if set, traces each action as a span with its ledger calls
	// (and, through the GitHub client's own Tracer, its requests) as
	// children.
	Tracer *observe.Tracer
	// DoneNeedsProof says that the ledger can be written by anyone who can
	// push to a repository (the repository ledger), so what it stores is
	// believed nowhere: a done entry of a kind GitHub can be asked about
	// is confirmed by the kind's look-up (an artifact authored by our
	// identity that carries the key), and the result names what the
	// look-up found, never the artifact the entry points at; an entry's
	// times bound no look-up (it reads everything, as after a lost
	// ledger); and an earlier attempt's stored description is not looked
	// for. On every ledger, what Do acts on (the repository, the target,
	// the description) is the action's own, never the entry's.
	DoneNeedsProof bool
	// NoFormerKeys says that the ledger holds no entry under a key derived
	// the way earlier versions derived it (taskkey.LegacyKeys, a kind's
	// former default step): Do then spends no read looking for one. True
	// of the repository ledger, which no version wrote that way.
	NoFormerKeys bool
	// AnswerBeforeTags: a create whose kind tags its artifact after it
	// exists (a pull request's labels, which GitHub's create does not
	// take: a Mender) returns as soon as GitHub answered the create; the
	// tags, then the done record, follow in the background, and Wait
	// waits for them. The answer then costs the round trips of the
	// look-up and the create only. Until the done record is written the
	// entry is attempting, held by this process: a run that takes it over
	// after this process died finds the artifact (by head, or an earlier
	// attempt's head) and adds the tags, as after a crash between the
	// create and the labels. For a process that outlives its answers (the
	// MCP server, the transport) and calls Wait before it exits; default
	// false: tags and done are written before Do returns.
	AnswerBeforeTags bool
	// Run is the GitHub Actions run this process acts in, if any: under
	// OnChangeAuto, a changed text whose artifact an earlier attempt of
	// the same run made is that attempt's act again (a re-run), when the
	// GitHub can say when the attempts ran (RunReader).
	Run Run
}

// Run is a GitHub Actions run: its repository (GITHUB_REPOSITORY), id
// (GITHUB_RUN_ID) and attempt (GITHUB_RUN_ATTEMPT: 1, then 2, 3 ... on each
// re-run). The zero Run is none.
type Run struct {
	Repo    string
	ID      int64
	Attempt int
}

// Engine performs actions once. It is safe for concurrent use.
type Engine struct {
	cfg Config
	// core is the ledger side of each attempt: claim, heartbeat, the wait
	// for what is in flight, the sending mark, the record.
	core *once.Core
	// obs counts and traces each action, and its ledger calls.
	obs   *once.Observer
	tails sync.WaitGroup // tags and done records after an early answer
	// tailErrs are the done records that failed after an early answer.
	tailMu   sync.Mutex
	tailErrs []error
}

// Wait waits until the tags and done records that follow the answers Do
// gave early (Config.AnswerBeforeTags) are written. A process calls it
// before it exits.
func (e *Engine) Wait() { e.tails.Wait() }

// WaitErr is Wait, and returns the errors of the done records that could
// not be written after an early answer (each also logged), joined: what
// Do would have returned had it not answered early. A command that ends
// with its process (the gh shim, which answers before it sets a pull
// request's assignees and reviewers) exits with it.
func (e *Engine) WaitErr() error {
	e.tails.Wait()
	e.tailMu.Lock()
	defer e.tailMu.Unlock()
	return errors.Join(e.tailErrs...)
}

// New returns an Engine for cfg.
func New(cfg Config) *Engine {
	if cfg.ClockSkew <= 0 {
		cfg.ClockSkew = 10 * time.Minute
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 8
	}
	e := &Engine{cfg: cfg, obs: once.NewObserver(cfg.Tracer, cfg.Metrics)}
	e.cfg.Ledger = e.obs.Ledger(cfg.Ledger)
	e.core = once.New(once.Config{
		Ledger: e.cfg.Ledger, Owner: cfg.Owner, Lease: cfg.Lease, Wait: cfg.Wait, Settle: cfg.Settle,
		Now: cfg.Now, Sleep: cfg.Sleep, Gone: cfg.Gone, Logf: cfg.Logf, Metrics: cfg.Metrics, NoFormerKeys: cfg.NoFormerKeys,
	})
	oc := e.core.Config() // the defaults filled in
	e.cfg.Owner, e.cfg.Wait, e.cfg.Settle, e.cfg.Lease = oc.Owner, oc.Wait, oc.Settle, oc.Lease
	e.cfg.Now, e.cfg.Sleep, e.cfg.Gone, e.cfg.Logf = oc.Now, oc.Sleep, oc.Gone, oc.Logf
	return e
}

// DefaultSettle is the default in-flight window of a create (Config.Settle):
// GitHub's 10-second limit on a request, plus 5 seconds for the request to
// reach GitHub and for clocks (the ledger's, not this machine's, dates the
// mark) to disagree.
const DefaultSettle = once.DefaultSettle

// NewOwner identifies the running process: with its boot id, PID namespace
// and start time where the system tells them (procid), so that a taker can
// prove it gone.
func NewOwner() ledger.Owner { return once.NewOwner() }

// Do performs the prepared action once. It returns the stored result
// without asking GitHub when the ledger says done; otherwise it claims the
// key, looks for the artifact and creates it only when consistent reads
// show it absent. p is what Prepare returned: bad input was refused there,
// before anything was recorded.
//
// Errors: *UnconfirmedError (exit 3), *InProgressError (exit 4),
// *SameOrAnotherError (exit 7: OnChangeAuto, see there), *ConflictError
// and anything else (exit 1).
func (e *Engine) Do(ctx context.Context, p *Prepared) (*outcome.Result, error) {
	if p == nil || p.key == "" {
		return nil, errors.New("do action: not prepared: pass what reconcile.Prepare returned")
	}
	a := once.Action{Kind: p.id.Kind, Key: p.key, Task: p.id.Task, Step: p.id.Step, Repo: p.a.Repo}
	return e.obs.Do(ctx, a, func(ctx context.Context) (*outcome.Result, error) { return e.do(ctx, p) })
}

// DoAs prepares and runs a for a durable-execution engine's step (the
// adapters under adapters/): a's empty Task and Step are task and step,
// the step it fills derived rather than named (Action.StepDerived). Bad
// input is an *InvalidError, nothing recorded; other errors are Do's.
func (e *Engine) DoAs(ctx context.Context, a Action, task, step string) (*outcome.Result, error) {
	if a.Task == "" {
		a.Task = task
	}
	if a.Step == "" {
		a.Step, a.StepDerived = step, true
	}
	p, err := Prepare(a)
	if err != nil {
		return nil, err
	}
	return e.Do(ctx, p)
}

// do is Do, unobserved.
func (e *Engine) do(ctx context.Context, p *Prepared) (*outcome.Result, error) {
	a, id, payload, hash := p.a, p.id, p.payload, p.hash
	key, err := e.core.KeyFor(ctx, p.key, p.legacy)
	if err != nil {
		return nil, err
	}
	// A create is sent right after the look-up: the claim may carry its
	// in-flight mark (ledger.ClaimParams.Sending).
	// Every run on a ledger whose done entries need proof asks GitHub:
	// ask while the claim is read and written, not after (early.go).
	x := e.lookEarly(ctx, a, key)
	sent := e.cfg.Now()
	c, err := e.core.Claim(ctx, ledger.ClaimParams{
		Key: key, Task: id.Task, Step: id.Step, Kind: id.Kind, Repo: a.Repo, Target: id.Target,
		Payload: payload, PayloadHash: hash, Why: "run", Sending: true,
	})
	if err != nil {
		return nil, err
	}
	x = x.forClaim(c, e.cfg.Now())
	if c.State == ledger.ClaimDone {
		done := c.Entry
		if art, ok := x.found(); ok {
			done = proven(a, c.Entry, art)
		} else if e.cfg.DoneNeedsProof {
			if done, err = e.proveDone(ctx, a, c.Entry); err != nil {
				return nil, err
			}
		}
		return e.onChange(ctx, p, c, done, once.ResultOf(done, outcome.Skipped))
	}
	r, err := e.attempt(ctx, c, e.core.HeldBy(c, sent), x, a, hash, payload)
	if err != nil || r.Outcome != outcome.Found {
		return r, err
	}
	// Found what an earlier attempt made, perhaps from another description:
	// compared with the artifact's own where it shows one (asfound.go).
	return e.onChange(ctx, p, c, e.foundEntry(ctx, a, key, c.Entry, r), r)
}

// proveDone confirms a done entry by looking a's artifact up on GitHub
// (DoneNeedsProof), in a's repository: the entry as found, pointing at the
// artifact the look-up found; an error when GitHub shows none of ours with
// the key (the entry was written by someone else, or the artifact was
// deleted) or cannot tell. It writes nothing.
func (e *Engine) proveDone(ctx context.Context, a Action, entry *ledger.Entry) (*ledger.Entry, error) {
	env := e.env(a.repo, ledger.Done)
	res := a.Spec.Find(ctx, env, entry.Key)
	switch res.State {
	case effect.Found:
		return proven(a, entry, res.Artifact), nil
	case effect.Absent, effect.Conflict:
		return nil, &outcome.ConflictError{Key: entry.Key, DoneUnproven: true, Err: fmt.Errorf("the ledger records it as done (%s), but GitHub shows no artifact of ours that carries the key (deleted, or a forged entry); nothing was created", orNothing(entry.Ref.Name()))}
	}
	return nil, &outcome.UnconfirmedError{Key: entry.Key, Err: fmt.Errorf("the ledger records it as done, and GitHub could not confirm it: %w", res.Err), Hint: "Nothing was created: rerun the same command once GitHub answers."}
}

// proven is the done entry of a as the look-up found its artifact. Where
// the ledger keeps no description (a repository ledger's claim: only its
// hash), the artifact's own stands for it, so that a description that
// changed is compared field by field, as with a kept one.
func proven(a Action, entry *ledger.Entry, art effect.Artifact) *ledger.Entry {
	p := *entry
	p.Ref = ledger.Ref{Number: art.Number, ID: art.ID, URL: art.URL, SHA: art.SHA, Text: art.Text}
	if af, ok := a.Spec.(AsFounder); ok && len(p.Payload) == 0 {
		owner, _, _ := strings.Cut(a.Repo, "/")
		if spec, ok := af.AsFound(p.Key, owner, art); ok {
			p.Payload, _, _ = encodeSpec(spec)
		}
	}
	return &p
}

func orNothing(name string) string {
	if name == "" {
		return "naming no artifact"
	}
	return name
}

// attempt runs steps 2 and 3 for a claim this process holds: look, then,
// only when the look is sure nothing exists, create. h is what the claim
// still vouches for when the create comes (its own in-flight mark, its
// lease).
// x, if not nil, is a look-up made beside a claim that created the entry
// (early.go), whose answer stands for the one look would ask.
func (e *Engine) attempt(ctx context.Context, c *ledger.Claim, h once.Held, x *early, a Action, hash string, payload []byte) (*outcome.Result, error) {
	entry := c.Entry
	crashpoint.Hit(crashpoint.AfterClaim)
	ctx, stop := e.core.Heartbeat(ctx, entry.Key, entry.Fence)
	defer stop()
	env, spec, r, err := e.look(ctx, c, x, a, hash)
	if r != nil || err != nil {
		return r, err
	}
	if _, ok := spec.(Chooser); ok {
		// What the look-up chose (nothing, for a description that had
		// nothing to choose: then payload stays as it is) is recorded before the create, under
		// the hash of the description as given: a rerun of the same
		// description adopts it (Chooser.Adopt).
		if payload, _, err = once.Encode(spec.Kind(), spec); err != nil {
			e.core.Finish(entry.Key, entry.Fence, ledger.Attempting, "", effect.Artifact{}, err.Error())
			return nil, err
		}
	}
	return e.create(ctx, env, entry, h, spec, hash, payload)
}

// look prepares the attempt and asks whether the artifact exists, with this
// run's description (a.Spec, in a.Repo: what to do is this run's, never
// the ledger's) and, on a ledger that vouches for what it stores, the one
// an earlier attempt stored. It returns a result (found) or an error
// (conflict, unknown, bad configuration), each already recorded, or
// neither: absent, go on and create the description it returns (spec,
// completed by a Chooser).
func (e *Engine) look(ctx context.Context, c *ledger.Claim, x *early, a Action, hash string) (*Env, Spec, *outcome.Result, error) {
	entry, spec := c.Entry, a.Spec
	key := entry.Key
	// A release before the create says that nothing was sent (Core.Release).
	release := func(err error) (*Env, Spec, *outcome.Result, error) {
		e.core.Release(c, err.Error())
		return nil, nil, nil, err
	}
	claimed := e.cfg.Now() // this machine's clock when the claim was read
	if c.Prior == ledger.Attempting {
		if err := e.core.LetInFlightLand(ctx, c, claimed); err != nil {
			return release(err)
		}
	}
	env := e.env(a.repo, c.Prior)
	e.dateEnv(env, c, claimed)
	// Who we are on GitHub decides what counts as ours; a token GitHub
	// rejects is a configuration error, not an unknown outcome. Nothing was
	// sent for this attempt, so an entry with no attempt in doubt (one it
	// created, or a failed one: nothing of it ever left, or GitHub refused
	// it) is failed, as it was, and one an earlier attempt left attempting
	// stays attempting. The same holds when GitHub cannot be reached at
	// all: a failed entry rerun offline is not turned into an unknown
	// outcome (exit 3, paged by status --stale) for work that never left.
	unsent := func(err error) (*Env, Spec, *outcome.Result, error) {
		st := ledger.Attempting
		if c.Prior != ledger.Attempting {
			st = ledger.Failed
		}
		if !errors.Is(err, ghcheck.ErrCredentials) {
			err = &outcome.NotSentError{Key: key, Attempting: st == ledger.Attempting, Err: err}
		}
		if st == ledger.Attempting {
			e.core.Release(c, err.Error())
		} else {
			_, _ = e.core.Finish(key, entry.Fence, st, "", effect.Artifact{}, err.Error())
		}
		if st == ledger.Attempting && !errors.Is(err, ghcheck.ErrCredentials) {
			// The earlier attempt's outcome is still unknown: exit 3.
			return nil, nil, nil, &outcome.UnconfirmedError{Key: key, Err: err}
		}
		return nil, nil, nil, err
	}
	if e.cfg.GitHub != nil {
		if _, err := e.cfg.GitHub.Login(ctx); errors.Is(err, ghcheck.ErrCredentials) || ghcheck.Classify(err) == ghcheck.ClassNotSent {
			return unsent(err)
		}
	}
	// An earlier attempt may have sent a different description (a reworded
	// body, another head branch): look for what it may have made as well,
	// in this run's repository, by the key; what is found must be ours as
	// always. Only a ledger that vouches for what it stores is asked: one
	// that anyone who can push writes (DoneNeedsProof) keeps no payload.
	var prior Spec
	if entry.PayloadHash != hash && len(entry.Payload) > 0 && !e.cfg.DoneNeedsProof {
		var err error
		if prior, err = DecodeSpec(entry.Kind, entry.Payload); err != nil {
			return release(err)
		}
	}
	var res effect.Result
	_, chooses := choosing(spec)
	if e.cfg.TrustNeverAttempted && env.NeverAttempted && !chooses {
		res = effect.Result{State: effect.Absent} // trusted: see Config
	} else if x != nil && c.State == ledger.ClaimCreated && prior == nil {
		spec, res = x.answer() // the same look-up, made beside the claim
	} else {
		// A Chooser's look-up also makes its choice, in the same round
		// trip: trusted or not, it is made.
		spec, res = findChoosing(ctx, env, key, spec, prior)
	}
	switch res.State {
	case effect.Found:
		e.cfg.Logf("found %s on GitHub: recording it as done", key)
		r, err := e.adopt(ctx, env, key, entry.Fence, spec, res.Artifact)
		if err != nil {
			return nil, nil, nil, err
		}
		r.PayloadChanged = entry.PayloadHash != hash
		return nil, nil, r, nil
	case effect.Conflict:
		_, _ = e.core.Finish(key, entry.Fence, ledger.Failed, "", effect.Artifact{}, res.Err.Error())
		if rf := (*refusal)(nil); errors.As(res.Err, &rf) {
			return nil, nil, nil, fmt.Errorf("create %s: %w (nothing was created)", spec.Kind(), rf.err)
		}
		return nil, nil, nil, &outcome.ConflictError{Key: key, Err: res.Err}
	case effect.Absent:
		return env, spec, nil, nil
	default:
		if res.Err != nil && ghcheck.Classify(res.Err) == ghcheck.ClassNotSent {
			return unsent(res.Err)
		}
		e.core.Release(c, errText(res.Err))
		return nil, nil, nil, &outcome.UnconfirmedError{Key: key, Err: fmt.Errorf("could not tell whether it exists: %w", res.Err), Hint: once.RerunHint}
	}
}

// create records what is about to be sent, sends it and records the answer.
// Until h.Marked, the in-flight mark the claim wrote covers the create and
// none is written again (once.Held).
func (e *Engine) create(ctx context.Context, env *Env, entry *ledger.Entry, h once.Held, spec Spec, hash string, payload []byte) (*outcome.Result, error) {
	key := entry.Key
	_, chooser := spec.(Chooser)
	if entry.PayloadHash != hash || chooser && !bytes.Equal(entry.Payload, payload) {
		why := "earlier payload created nothing"
		if entry.PayloadHash == hash {
			why = "chosen before the create"
		}
		err := e.cfg.Ledger.SetPayload(ctx, ledger.PayloadParams{Key: key, Fence: entry.Fence, Payload: payload, PayloadHash: hash, Why: why})
		if err != nil {
			return nil, once.Unavailable(key, err)
		}
	}
	// Durable before the request leaves, unless the claim, written moments
	// ago, is the mark: a taker waits out GitHub's window from its time.
	if err := e.core.MarkBeforeSend(ctx, entry, h); err != nil {
		return nil, err
	}
	crashpoint.Hit(crashpoint.BeforeCreate)
	art, err := spec.Create(ctx, env, key)
	crashpoint.Hit(crashpoint.AfterCreate)
	if err != nil {
		return e.createFailed(ctx, env, entry, spec, err)
	}
	// What follows the create's answer: the tags of a kind that adds them
	// once the artifact exists, then the done record. It works on its own
	// copy of the artifact: the answer may be read meanwhile.
	tail := func(ctx context.Context, art effect.Artifact) (*outcome.Result, error) {
		if _, ok := spec.(Mender); ok {
			crashpoint.Hit(crashpoint.BeforeTags)
			art.Warning = joinWarnings(art.Warning, mend(ctx, env, key, spec, art))
		}
		done, err := e.core.RecordDone(key, entry.Fence, string(outcome.Created), art, true)
		if err != nil {
			return nil, err
		}
		r := once.ResultOf(done, outcome.Created)
		r.Warning, r.ArtifactState = art.Warning, art.State
		return r, nil
	}
	if _, ok := spec.(Mender); !ok || !e.cfg.AnswerBeforeTags {
		return tail(ctx, art)
	}
	// Answer now; tag and record in the background (Config.AnswerBeforeTags).
	// The attempt's context ends with Do: the tail keeps its values only.
	e.tails.Add(1)
	go func() {
		defer e.tails.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.Lease)
		defer cancel()
		r, err := tail(ctx, art)
		switch {
		case err != nil:
			e.cfg.Logf("%s: created %s, but recording it failed: %v (a rerun finds it on GitHub)", key, once.RefText(ledger.Ref{Number: art.Number, URL: art.URL}), err)
			e.tailMu.Lock()
			e.tailErrs = append(e.tailErrs, err)
			e.tailMu.Unlock()
		case r.Warning != "":
			e.cfg.Logf("%s: %s", key, r.Warning)
		}
	}()
	answered := *entry
	answered.Ref = ledger.Ref{Number: art.Number, ID: art.ID, URL: art.URL, SHA: art.SHA, Text: art.Text}
	r := once.ResultOf(&answered, outcome.Created)
	r.Warning, r.ArtifactState = art.Warning, art.State
	return r, nil
}

// createFailed settles a create's error by its class: an artifact that
// already exists is adopted if it is ours; the rest as Core.CreateFailed
// says.
func (e *Engine) createFailed(ctx context.Context, env *Env, entry *ledger.Entry, spec Spec, err error) (*outcome.Result, error) {
	key := entry.Key
	if ce := (*effect.CreateError)(nil); errors.As(err, &ce) && ce.Class == effect.ClassExists {
		// GitHub refused a duplicate: adopt it if it is ours. It may be
		// older than any attempt of this ledger (another ledger's): look
		// with every look-up, not only at what changed since.
		full := *env
		full.Since, full.NeverAttempted = time.Time{}, false
		res := find(ctx, &full, key, spec, nil)
		switch res.State {
		case effect.Found:
			return e.adopt(ctx, env, key, entry.Fence, spec, res.Artifact)
		case effect.Absent, effect.Conflict:
			cerr := fmt.Errorf("%w; and no artifact of ours carries key %s", err, key)
			_, _ = e.core.Finish(key, entry.Fence, ledger.Failed, "", effect.Artifact{}, cerr.Error())
			return nil, &outcome.ConflictError{Key: key, Err: cerr}
		default:
			_, _ = e.core.Finish(key, entry.Fence, ledger.Attempting, "", effect.Artifact{}, errText(res.Err))
			return nil, &outcome.UnconfirmedError{Key: key, Err: res.Err, Hint: once.RerunHint}
		}
	}
	return nil, e.core.CreateFailed(key, entry.Fence, spec.Kind(), err, "nothing was sent, so nothing was created; a rerun tries again")
}

// find asks for spec's artifact, then for prior's (the description an
// earlier attempt stored). Found wins; otherwise unknown or conflict wins
// over absent, so absence is only reported when both looks are sure.
func find(ctx context.Context, env *Env, key string, spec, prior Spec) effect.Result {
	if pf, ok := spec.(PriorFinder); ok && prior != nil {
		return pf.FindWithPrior(ctx, env, key, prior)
	}
	return withPrior(ctx, env, key, spec.Find(ctx, env, key), prior)
}

// findChoosing is find for a spec that may be a Chooser: it returns the
// description its look-up completed.
func findChoosing(ctx context.Context, env *Env, key string, spec, prior Spec) (Spec, effect.Result) {
	ch, ok := choosing(spec)
	if !ok {
		return spec, find(ctx, env, key, spec, prior)
	}
	spec, res := ch.Choose(ctx, env, key)
	return spec, withPrior(ctx, env, key, res, prior)
}

// withPrior completes res, this run's look, with prior's.
func withPrior(ctx context.Context, env *Env, key string, res effect.Result, prior Spec) effect.Result {
	if res.State == effect.Found || prior == nil {
		return res
	}
	return once.WithPrior(res, prior.Find(ctx, env, key))
}

// adopt records an artifact found on GitHub as this key's, done, after
// mending the tags a crash may have left off it.
func (e *Engine) adopt(ctx context.Context, env *Env, key string, fence int64, spec Spec, art effect.Artifact) (*outcome.Result, error) {
	warning := mend(ctx, env, key, spec, art)
	done, err := e.core.RecordDone(key, fence, string(outcome.Found), art, true)
	if err != nil {
		return nil, err
	}
	r := once.ResultOf(done, outcome.Found)
	r.Warning, r.ArtifactState, r.FoundArtifact = warning, art.State, &art
	return r, nil
}

func mend(ctx context.Context, env *Env, key string, spec Spec, art effect.Artifact) string {
	if m, ok := spec.(Mender); ok {
		return m.Mend(ctx, env, key, art)
	}
	return ""
}

// dateEnv says what the ledger vouches for about c's key: that no attempt
// was ever made from it (a new entry in an established ledger), or when the
// first attempt began (an entry an earlier attempt left): anything that
// attempt made was created after that, less ClockSkew. The ledger dates
// the entry on its own clock (Postgres: the server's); Since is on this
// machine's, moved by how far the ledger's clock was from it at the claim
// (claimed is this machine's time when the claim was read), and ghcheck
// sends it on GitHub's clock (the Date of its responses).
//
// A ledger that anyone who can push writes (DoneNeedsProof) vouches for no
// time: a claim that says its first attempt began in 2099 would hide what
// was made before. The look-up is then the whole one, as after a lost
// ledger.
func (e *Engine) dateEnv(env *Env, c *ledger.Claim, claimed time.Time) {
	if c.State == ledger.ClaimCreated {
		env.NeverAttempted = !e.cfg.LedgerNew
		return
	}
	if c.Entry.CreatedAt.IsZero() || e.cfg.DoneNeedsProof {
		return
	}
	since := c.Entry.CreatedAt
	if !c.Now.IsZero() {
		since = since.Add(claimed.Sub(c.Now))
	}
	env.Since = since.Add(-e.cfg.ClockSkew)
}

func (e *Engine) env(repo ghcheck.Repo, prior ledger.Status) *Env {
	return &Env{GitHub: e.cfg.GitHub, Prior: prior, LedgerNew: e.cfg.LedgerNew, Repo: repo}
}

func encodeSpec(s Spec) ([]byte, string, error) { return once.Encode(s.Kind(), s) }

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
