// Package offgithub does side effects GitHub cannot see once: a guarded
// command (Exec: a Slack message, an email, a deploy hook) and a call of
// an MCP tool ghonce has no kind for (ToolCall). It is the engine beside
// package reconcile's, on the same ledger-side core (claim, wait,
// takeover, heartbeat, in-flight mark, record), with a flow of its own:
//
//  1. Claim the key. A done entry returns its stored result (on a ledger
//     anyone who can push writes, confirmed by this run's check first).
//  2. If an earlier attempt may have run it, ask: this run's check for a
//     command, else what the ledger vouches for and the kind's policy. What
//     to run is this run's alone: a command or check the ledger stored is
//     never run.
//  3. Found: record done. Absent: mark that it starts (a command's mark
//     names its supervisor, whose processes a taker waits out), run it,
//     record the end, forced to disk when nothing could look it up again.
//     Unknown: leave the entry attempting and say how to settle it.
package offgithub

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/internal/crashpoint"
	"github.com/ghonce/ghonce/internal/once"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/observe"
	"github.com/ghonce/ghonce/outcome"
)

// Spec describes one effect off GitHub.
type Spec interface {
	// Kind names the kind; it is part of the key.
	Kind() string
	// Face is what every front needs to know of the kind (effect.Face).
	Face() effect.Face
	// Target is the kind's part of the key.
	Target() string
	// Validate reports bad input before anything is recorded or run.
	Validate(key string) error
	// Find says whether an earlier attempt had the effect: found, absent
	// or unknown (its Err says how to settle it).
	Find(ctx context.Context, env *Env, key string) effect.Result
	// Create has the effect. Its error is a *effect.CreateError whose
	// Class says whether it may have happened.
	Create(ctx context.Context, env *Env, key string) (effect.Artifact, error)
	// Unverifiable reports whether a rerun may be unable to look this
	// description's outcome up (a command without a check, any tool
	// call): its done record is then forced to disk before Do returns,
	// since a lost one cannot be found again.
	Unverifiable() bool
	// NotSent says what a create that never left means (a command that
	// did not start).
	NotSent() string
}

// ownSending is a Spec whose Create writes its own sending mark, through
// Env.mark, once it can name what it starts (a command's supervisor, whose
// tree a taker waits out). Without it the engine marks the create as sent
// just before calling Create.
type ownSending interface{ marksOwnSending() }

// Env is what a Spec may use while it runs.
type Env struct {
	// Prior is the entry's status before this attempt claimed it; empty
	// for an entry this attempt created.
	Prior ledger.Status
	// LedgerNew is true when the ledger was created by this process: an
	// earlier ledger may have been lost.
	LedgerNew bool
	// Stdout and Stderr receive a command's output.
	Stdout, Stderr io.Writer

	// markSending, set for a Spec that marks its own create, records that
	// the create is about to start, naming the process p that runs it; its
	// error is a *effect.CreateError (nothing was started).
	markSending func(ctx context.Context, p ledger.Proc) error
	// unproven, when not empty, says why the processes of an earlier
	// attempt cannot be proven gone from here.
	unproven string
	// unstarted: an earlier attempt left the entry attempting with no
	// mark that its create started, so it started nothing (the mark is
	// written, durable, before a command starts).
	unstarted bool
}

// mark records that a command is about to start under p; without a
// markSending (a Spec run outside the engine) it records nothing.
func (env *Env) mark(ctx context.Context, p ledger.Proc) error {
	if env.markSending == nil {
		return nil
	}
	return env.markSending(ctx, p)
}

// Config builds an Engine. Ledger is required; see reconcile.Config for
// the fields both engines share, whose defaults are the same.
type Config struct {
	Ledger    ledger.Ledger
	LedgerNew bool
	Owner     ledger.Owner
	// Wait, Lease, Settle, Now, Sleep, Gone: as reconcile.Config's.
	Wait, Lease, Settle time.Duration
	Now                 func() time.Time
	Sleep               func(ctx context.Context, d time.Duration) error
	Gone                func(p ledger.Proc) bool
	// Stdout and Stderr receive a command's output (default: discarded).
	Stdout, Stderr io.Writer
	// Logf reports progress; nil is silent.
	Logf func(format string, args ...any)
	// NoFormerKeys, Progress, Metrics, Tracer: as reconcile.Config's.
	NoFormerKeys bool
	Progress     outcome.Progress
	Metrics      *observe.Metrics
	Tracer       *observe.Tracer
	// DoneNeedsProof: as reconcile.Config's (the repository ledger). A
	// done entry of a command given a check is confirmed by that check
	// before it is reported; without a check nothing can confirm it.
	DoneNeedsProof bool
}

// Engine does effects off GitHub once. It is safe for concurrent use.
type Engine struct {
	cfg  Config
	oc   once.Config // the core's, its defaults filled in
	core *once.Core
	obs  *once.Observer
}

// New returns an Engine for cfg.
func New(cfg Config) *Engine {
	if cfg.Stdout == nil {
		cfg.Stdout = io.Discard
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	e := &Engine{cfg: cfg, obs: once.NewObserver(cfg.Tracer, cfg.Metrics)}
	e.cfg.Ledger = e.obs.Ledger(cfg.Ledger)
	e.core = once.New(once.Config{
		Ledger: e.cfg.Ledger, Owner: cfg.Owner, Lease: cfg.Lease, Wait: cfg.Wait, Settle: cfg.Settle,
		Now: cfg.Now, Sleep: cfg.Sleep, Gone: cfg.Gone, Logf: cfg.Logf, Metrics: cfg.Metrics, NoFormerKeys: cfg.NoFormerKeys,
	})
	e.oc = e.core.Config()
	return e
}

// Do has the prepared effect once. It returns the stored result when the
// ledger says done; otherwise it claims the key and runs the effect unless
// an earlier attempt may have had it (Spec.Find).
//
// Errors: *outcome.UnconfirmedError (exit 3), *outcome.InProgressError
// (exit 4), anything else (exit 1).
func (e *Engine) Do(ctx context.Context, p *Prepared) (*outcome.Result, error) {
	if p == nil || p.key == "" {
		return nil, errors.New("do action: not prepared: pass what offgithub.Prepare returned")
	}
	a := once.Action{Kind: p.id.Kind, Key: p.key, Task: p.id.Task, Step: p.id.Step, Repo: p.a.Repo}
	return e.obs.Do(ctx, a, func(ctx context.Context) (*outcome.Result, error) { return e.do(ctx, p) })
}

func (e *Engine) do(ctx context.Context, p *Prepared) (*outcome.Result, error) {
	key, err := e.core.KeyFor(ctx, p.key, p.legacy)
	if err != nil {
		return nil, err
	}
	spec := p.a.Spec
	_, own := spec.(ownSending)
	sent := e.oc.Now()
	c, err := e.core.Claim(ctx, ledger.ClaimParams{
		Key: key, Task: p.id.Task, Step: p.id.Step, Kind: p.id.Kind, Repo: p.a.Repo, Target: p.id.Target,
		Payload: p.payload, PayloadHash: p.hash, Why: "run", Sending: !own,
	})
	if err != nil {
		return nil, err
	}
	var r *outcome.Result
	if c.State == ledger.ClaimDone {
		if r, err = e.proveDone(ctx, c.Entry, spec); err != nil {
			return nil, err
		}
	} else if r, err = e.attempt(ctx, c, e.core.HeldBy(c, sent), spec, p); err != nil || r.Outcome != outcome.Found {
		return r, err
	}
	if changed, fields := once.Changed(c.Entry, p.payload, p.hash); changed {
		r.PayloadChanged, r.Changed = true, fields
		r.Warning = once.ChangedWarning(fields, r.Kind)
	}
	return r, nil
}

// proveDone is the result of a done entry: confirmed first by this run's
// check on a ledger whose done entries are not proof (DoneNeedsProof). It
// runs nothing else and writes nothing.
func (e *Engine) proveDone(ctx context.Context, entry *ledger.Entry, spec Spec) (*outcome.Result, error) {
	if !e.cfg.DoneNeedsProof {
		return once.ResultOf(entry, outcome.Skipped), nil
	}
	// What the entry points at is reported only as this run found it.
	done := *entry
	done.Ref = ledger.Ref{}
	if spec.Unverifiable() {
		return once.ResultOf(&done, outcome.Skipped), nil
	}
	env := &Env{Prior: ledger.Done, LedgerNew: e.cfg.LedgerNew, Stdout: e.cfg.Stdout, Stderr: e.cfg.Stderr}
	switch res := spec.Find(ctx, env, entry.Key); res.State {
	case effect.Found:
		done.Ref.Text = res.Artifact.Text
		return once.ResultOf(&done, outcome.Skipped), nil
	case effect.Absent:
		return nil, &outcome.ConflictError{Key: entry.Key, DoneUnproven: true, Err: errors.New("the ledger records it as done, and this run's check says it did not happen: " +
			"someone else who can push wrote the entry, or the effect was undone; nothing was run. " +
			"Check, then force the entry back to failed so that the next run runs it")}
	default:
		return nil, &outcome.UnconfirmedError{Key: entry.Key, Err: fmt.Errorf("the ledger records it as done, and the check could not confirm it: %w", res.Err),
			Hint: "Nothing was run: rerun the same command once the check answers."}
	}
}

// attempt asks, for a claim this process holds, whether an earlier attempt
// had the effect, and has it only when the answer is sure it did not.
func (e *Engine) attempt(ctx context.Context, c *ledger.Claim, h once.Held, spec Spec, p *Prepared) (*outcome.Result, error) {
	entry, key := c.Entry, c.Entry.Key
	crashpoint.Hit(crashpoint.AfterClaim)
	ctx, stop := e.core.Heartbeat(ctx, key, entry.Fence)
	defer stop()
	release := func(err error) (*outcome.Result, error) {
		e.core.Release(c, err.Error())
		return nil, err
	}
	env := &Env{Prior: c.Prior, LedgerNew: e.cfg.LedgerNew, Stdout: e.cfg.Stdout, Stderr: e.cfg.Stderr,
		unstarted: c.Prior == ledger.Attempting && entry.Sending.At.IsZero()}
	if c.Prior == ledger.Attempting {
		var err error
		if env.unproven, err = e.letInFlightLand(ctx, c); err != nil {
			return release(err)
		}
	}
	// Only this run's check is asked: a check the ledger stored (an
	// earlier attempt's, or one someone else wrote) is never run.
	switch res := spec.Find(ctx, env, key); res.State {
	case effect.Found:
		e.oc.Logf("%s: the check says an earlier attempt did it: recording it as done", key)
		done, err := e.core.RecordDone(key, entry.Fence, string(outcome.Found), res.Artifact, !spec.Unverifiable())
		if err != nil {
			return nil, err
		}
		r := once.ResultOf(done, outcome.Found)
		r.ArtifactState, r.PayloadChanged = res.Artifact.State, entry.PayloadHash != p.hash
		return r, nil
	case effect.Absent:
	default:
		hint := once.RerunHint
		if noAnswer(res.Err) {
			if c.Prior != ledger.Attempting {
				// No attempt's outcome is in doubt (a new entry, or a
				// failed one): nothing is unknown but the check's answer.
				// The entry is failed, never left attempting, and the
				// next run asks the check again.
				_, _ = e.core.Finish(key, entry.Fence, ledger.Failed, "", effect.Artifact{}, res.Err.Error())
				return nil, fmt.Errorf("%w; the command did not run (it runs only once the check exits 1: the effect does not exist); fix the check, or rerun once it can answer", res.Err)
			}
			hint = checkHint(key)
		}
		e.core.Release(c, errText(res.Err))
		return nil, &outcome.UnconfirmedError{Key: key, Err: fmt.Errorf("could not tell whether it exists: %w", res.Err), Hint: hint}
	}
	return e.create(ctx, env, entry, h, spec, p)
}

// create records that the effect is about to happen, has it and records
// the end.
func (e *Engine) create(ctx context.Context, env *Env, entry *ledger.Entry, h once.Held, spec Spec, p *Prepared) (*outcome.Result, error) {
	key := entry.Key
	if entry.PayloadHash != p.hash {
		err := e.cfg.Ledger.SetPayload(ctx, ledger.PayloadParams{Key: key, Fence: entry.Fence, Payload: p.payload, PayloadHash: p.hash, Why: "earlier payload created nothing"})
		if err != nil {
			return nil, once.Unavailable(key, err)
		}
	}
	if _, ok := spec.(ownSending); ok {
		// The kind marks its own create, with the identity of its
		// supervisor, once it can name what it starts. A lease lost while
		// checking means a newer attempt may be running it: stop. A claim
		// made moments ago holds it still: its mark, written with the
		// fence checked, renews it then.
		if !e.oc.Now().Before(h.Leased) {
			if err := e.core.Renew(ctx, key, entry.Fence); err != nil {
				return nil, once.Unavailable(key, err)
			}
		}
		env.markSending = func(ctx context.Context, p ledger.Proc) error {
			if err := e.core.MarkSending(ctx, key, entry.Fence, p); err != nil {
				return &effect.CreateError{Class: effect.ClassNotSent, Err: &outcome.NotSentError{Key: key, Ledger: true, Err: err}}
			}
			return nil
		}
	} else if err := e.core.MarkBeforeSend(ctx, entry, h); err != nil {
		return nil, err
	}
	crashpoint.Hit(crashpoint.BeforeCreate)
	art, err := spec.Create(ctx, env, key)
	crashpoint.Hit(crashpoint.AfterCreate)
	if err != nil {
		return nil, e.core.CreateFailed(key, entry.Fence, spec.Kind(), err, spec.NotSent())
	}
	done, err := e.core.RecordDone(key, entry.Fence, string(outcome.Created), art, !spec.Unverifiable())
	if err != nil {
		return nil, err
	}
	r := once.ResultOf(done, outcome.Created)
	r.Warning, r.ArtifactState = art.Warning, art.State
	return r, nil
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
