// Package adapt is the front door the engine adapters (adapters/temporal,
// adapters/dbos) share: an action whose task and step, when empty, are the
// durable-execution engine's identity of the running step, validated and
// run by ghonce's engine.
package adapt

import (
	"context"

	"github.com/ghonce/ghonce/reconcile"
)

// Do fills a's empty Task and Step with task and step (a step it fills is
// derived, not named: Action.StepDerived), prepares it
// (reconcile.Prepare: an *InvalidError is bad input, nothing recorded) and
// runs it with eng.
func Do(ctx context.Context, eng *reconcile.Engine, a reconcile.Action, task, step string) (*reconcile.Result, error) {
	if a.Task == "" {
		a.Task = task
	}
	if a.Step == "" {
		a.Step, a.StepDerived = step, true
	}
	p, err := reconcile.Prepare(a)
	if err != nil {
		return nil, err
	}
	return eng.Do(ctx, p)
}
