package once

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/observe"
	"github.com/ghonce/ghonce/outcome"
)

// Outcomes of an action that ended in an error, as metrics and traces name
// them (beside created, found and skipped).
const (
	OutcomeRefused     = "refused"     // GitHub refused, or the name is taken by something not ours: nothing was created
	OutcomeUnconfirmed = "unconfirmed" // it may have happened: the entry stays attempting
	OutcomeInProgress  = "in_progress" // another live process holds the key
	OutcomeError       = "error"       // anything else (the ledger, the configuration)
)

// Outcomes are every outcome an action is counted under.
var Outcomes = []string{string(outcome.Created), string(outcome.Found), string(outcome.Skipped), OutcomeRefused, OutcomeUnconfirmed, OutcomeInProgress, OutcomeError}

// ErrOutcome names how an action that returned err ended: one of the
// error outcomes above.
func ErrOutcome(err error) string {
	var (
		uc *outcome.UnconfirmedError
		ip *outcome.InProgressError
		cf *outcome.ConflictError
		ce *effect.CreateError
	)
	switch {
	case errors.As(err, &uc):
		return OutcomeUnconfirmed
	case errors.As(err, &ip):
		return OutcomeInProgress
	case errors.As(err, &cf), errors.As(err, &ce) && (ce.Class == effect.ClassRefused || ce.Class == effect.ClassNotSent):
		return OutcomeRefused
	}
	return OutcomeError
}

// Observer counts and traces actions, whatever the effect: one span per
// action, named after its kind, whose children are the ledger's calls
// (Observer.Ledger) and the requests the effect makes. Its zero parts
// (no tracer, no metrics) cost a nil check.
type Observer struct {
	tracer  *observe.Tracer
	metrics *observe.Metrics
	active  *activeSpans // nil without a tracer
}

// NewObserver returns an Observer that counts into m and traces with t;
// either may be nil.
func NewObserver(t *observe.Tracer, m *observe.Metrics) *Observer {
	o := &Observer{tracer: t, metrics: m}
	if t != nil {
		o.active = &activeSpans{}
	}
	return o
}

// Off reports whether o neither counts nor traces.
func (o *Observer) Off() bool { return o.tracer == nil && o.metrics == nil }

// Ledger is l, with each of its calls a span when o traces. A call made on
// a context of its own (Core.Record) is a child of its key's action.
func (o *Observer) Ledger(l ledger.Ledger) ledger.Ledger {
	if o.tracer == nil {
		return l
	}
	return &tracedLedger{Ledger: l, t: o.tracer, active: o.active}
}

// Action names an action for its span.
type Action struct{ Kind, Key, Task, Step, Repo string }

// Ended is how an action ended: its outcome (created, found, skipped or an
// error outcome: ErrOutcome), and the key and artifact of its result.
type Ended struct {
	Outcome, Key, URL string
	Number            int
}

// Observe runs do, counted and traced: one span per action, named after
// its kind, with the kind, outcome, key, task, step and repository as
// attributes.
func (o *Observer) Observe(ctx context.Context, a Action, do func(context.Context) (Ended, error)) error {
	start := time.Now()
	ctx, sp := o.tracer.Start(ctx, "ghonce "+a.Kind, observe.Internal,
		observe.String("ghonce.kind", a.Kind), observe.String("ghonce.key", a.Key),
		observe.String("ghonce.task", a.Task), observe.String("ghonce.step", a.Step),
		observe.String("ghonce.repository", a.Repo))
	if sp != nil {
		o.active.put(a.Key, sp)
		defer o.active.drop(a.Key, sp)
	}
	end, err := do(ctx)
	o.metrics.Action(a.Kind, end.Outcome, time.Since(start))
	if sp != nil {
		sp.Set(observe.String("ghonce.outcome", end.Outcome))
		if end.Key != "" && end.Key != a.Key {
			sp.Set(observe.String("ghonce.key", end.Key)) // an older ghonce's key for the same work
		}
		if end.URL != "" {
			sp.Set(observe.String("ghonce.artifact.url", end.URL))
		}
		if end.Number != 0 {
			sp.Set(observe.Int("ghonce.artifact.number", int64(end.Number)))
		}
		if err != nil {
			sp.Fail(end.Outcome, err.Error())
		}
		sp.End()
	}
	return err
}

// activeSpans maps a key to the span of the action running it in this
// process: the engine records an attempt's end on a context of its own,
// which carries no span.
type activeSpans struct{ m sync.Map }

func (a *activeSpans) put(key string, s *observe.Span)  { a.m.Store(key, s) }
func (a *activeSpans) drop(key string, s *observe.Span) { a.m.CompareAndDelete(key, s) }

// parent is ctx with the span of key's action when ctx carries none.
func (a *activeSpans) parent(ctx context.Context, key string) context.Context {
	if observe.SpanFromContext(ctx) != nil || key == "" {
		return ctx
	}
	if s, ok := a.m.Load(key); ok {
		return observe.ContextWithSpan(ctx, s.(*observe.Span))
	}
	return ctx
}

// tracedLedger makes each of the engine's ledger calls a span.
type tracedLedger struct {
	ledger.Ledger
	t      *observe.Tracer
	active *activeSpans
}

func (l *tracedLedger) span(ctx context.Context, op, key string) (context.Context, *observe.Span) {
	attrs := []observe.Attr{observe.String("db.operation.name", op)}
	if key != "" {
		attrs = append(attrs, observe.String("ghonce.key", key))
	}
	return l.t.Start(l.active.parent(ctx, key), "ledger "+op, observe.Internal, attrs...)
}

func end(s *observe.Span, err error) {
	if err != nil {
		s.Fail("ledger", err.Error())
	}
	s.End()
}

func (l *tracedLedger) Claim(ctx context.Context, p ledger.ClaimParams) (*ledger.Claim, error) {
	ctx, s := l.span(ctx, "claim", p.Key)
	c, err := l.Ledger.Claim(ctx, p)
	if c != nil && s != nil {
		s.Set(observe.String("ghonce.claim", c.State.String()))
	}
	end(s, err)
	return c, err
}

func (l *tracedLedger) Get(ctx context.Context, key string) (*ledger.Entry, error) {
	ctx, s := l.span(ctx, "get", key)
	e, err := l.Ledger.Get(ctx, key)
	if errors.Is(err, ledger.ErrNotFound) {
		s.End() // an answer, not a failure
		return e, err
	}
	end(s, err)
	return e, err
}

func (l *tracedLedger) List(ctx context.Context, p ledger.ListParams) ([]*ledger.Entry, error) {
	ctx, s := l.span(ctx, "list", "")
	es, err := l.Ledger.List(ctx, p)
	end(s, err)
	return es, err
}

func (l *tracedLedger) History(ctx context.Context, key string) ([]ledger.Transition, error) {
	ctx, s := l.span(ctx, "history", key)
	h, err := l.Ledger.History(ctx, key)
	end(s, err)
	return h, err
}

func (l *tracedLedger) Finish(ctx context.Context, p ledger.FinishParams) (*ledger.Entry, error) {
	ctx, s := l.span(ctx, "finish", p.Key)
	if s != nil {
		s.Set(observe.String("ghonce.status", string(p.Status)))
	}
	e, err := l.Ledger.Finish(ctx, p)
	end(s, err)
	return e, err
}

func (l *tracedLedger) SetPayload(ctx context.Context, p ledger.PayloadParams) error {
	ctx, s := l.span(ctx, "set_payload", p.Key)
	err := l.Ledger.SetPayload(ctx, p)
	end(s, err)
	return err
}

func (l *tracedLedger) Renew(ctx context.Context, key string, fence int64, lease time.Duration) error {
	ctx, s := l.span(ctx, "renew", key)
	err := l.Ledger.Renew(ctx, key, fence, lease)
	end(s, err)
	return err
}

func (l *tracedLedger) MarkSending(ctx context.Context, p ledger.SendingParams) error {
	ctx, s := l.span(ctx, "mark_sending", p.Key)
	err := l.Ledger.MarkSending(ctx, p)
	end(s, err)
	return err
}

func (l *tracedLedger) Resolve(ctx context.Context, p ledger.ResolveParams) (*ledger.Entry, error) {
	ctx, s := l.span(ctx, "resolve", p.Key)
	e, err := l.Ledger.Resolve(ctx, p)
	end(s, err)
	return e, err
}
