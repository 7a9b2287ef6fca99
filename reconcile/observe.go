package reconcile

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/observe"
)

// Outcomes of an action that ended in an error, as metrics and traces name
// them (beside Created, Found and Skipped).
const (
	OutcomeRefused     = "refused"     // GitHub refused, or the name is taken by something not ours: nothing was created
	OutcomeUnconfirmed = "unconfirmed" // it may have happened: the entry stays attempting
	OutcomeInProgress  = "in_progress" // another live process holds the key
	OutcomeError       = "error"       // anything else (the ledger, the configuration)
)

// OutcomeOf names how an action ended: its Result's outcome, or one of the
// error outcomes above.
func OutcomeOf(r *Result, err error) string {
	var (
		uc *UnconfirmedError
		ip *InProgressError
		cf *ConflictError
		ce *effect.CreateError
	)
	switch {
	case err == nil && r != nil:
		return string(r.Outcome)
	case errors.As(err, &uc):
		return OutcomeUnconfirmed
	case errors.As(err, &ip):
		return OutcomeInProgress
	case errors.As(err, &cf), errors.As(err, &ce) && (ce.Class == effect.ClassRefused || ce.Class == effect.ClassNotSent):
		return OutcomeRefused
	}
	return OutcomeError
}

// observed is Do, counted and traced: one span per action, named after its
// kind, with the kind, outcome, key, task, step and repository as
// attributes; the ledger's calls and GitHub's requests are its children.
func (e *Engine) observed(ctx context.Context, p *Prepared) (*Result, error) {
	kind := p.id.Kind
	start := time.Now()
	ctx, sp := e.cfg.Tracer.Start(ctx, "ghonce "+kind, observe.Internal,
		observe.String("ghonce.kind", kind), observe.String("ghonce.key", p.key),
		observe.String("ghonce.task", p.id.Task), observe.String("ghonce.step", p.id.Step),
		observe.String("ghonce.repository", p.a.Repo))
	if sp != nil {
		e.active.put(p.key, sp)
		defer e.active.drop(p.key, sp)
	}
	r, err := e.do(ctx, p)
	outcome := OutcomeOf(r, err)
	e.cfg.Metrics.Action(kind, outcome, time.Since(start))
	if sp != nil {
		sp.Set(observe.String("ghonce.outcome", outcome))
		if r != nil {
			if r.Key != "" && r.Key != p.key {
				sp.Set(observe.String("ghonce.key", r.Key)) // an older ghonce's key for the same work
			}
			if r.URL != "" {
				sp.Set(observe.String("ghonce.artifact.url", r.URL))
			}
			if r.Number != 0 {
				sp.Set(observe.Int("ghonce.artifact.number", int64(r.Number)))
			}
		}
		if err != nil {
			sp.Fail(outcome, err.Error())
		}
		sp.End()
	}
	return r, err
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
