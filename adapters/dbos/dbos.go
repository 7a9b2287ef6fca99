// Package ghoncedbos runs ghonce's GitHub writes inside DBOS steps
// (github.com/dbos-inc/dbos-transact-golang), keyed by the workflow's id and
// the step's, so that a step DBOS runs again (a retry, or the recovery of a
// workflow whose process died in the middle of the step) opens one pull
// request, not one per execution.
//
//	number, err := dbos.RunAsStep(ctx, func(ctx context.Context) (int, error) {
//		res, err := ghoncedbos.Do(ctx, eng, reconcile.Action{Repo: "o/r", Spec: reconcile.PR{...}})
//		...
//	}, dbos.WithStepMaxRetries(10), dbos.WithStepRetryPredicate(ghoncedbos.Retryable))
//
// # The key
//
// Do fills the action's Task with the workflow id and its Step with the
// step's id ("step#2"): DBOS numbers a workflow's steps in the order the
// workflow runs them, and recovery replays the workflow to the step that was
// running, with the same number, so every execution of one step derives one
// key. The task is the bare workflow id: `ghonce status --task <workflow id>`
// lists what a workflow did.
//
// A fork (ForkWorkflow) is a new workflow under a new id: a step it runs
// again is a new key, and opens its own pull request. A workflow whose forks
// must find the original's artifacts sets Action.Task itself, to an id of
// the work (an issue, a ticket) that every fork carries.
//
// # Errors
//
// DBOS records a step's error as its outcome once its retries are spent.
// An error ghonce returns because the create may have happened
// (outcome.UnconfirmedError) or because another execution holds the key
// (outcome.InProgressError: a dead process's lease, two minutes by
// default, when the recovering process runs on another machine) is settled
// by running the same step again: give the step retries
// (dbos.WithStepMaxRetries) and Retryable as its retry predicate, which
// stops at once on errors no retry changes (bad input, a refusal, a
// conflict, credentials, a broken ledger).
//
// # Depending on it
//
// This is a Go module of its own, so the core module (and the ghonce binary)
// does not carry the DBOS SDK:
//
//	go get github.com/ghonce/ghonce/adapters/dbos
//
// Its go.mod requires the core module; the replace directive in it points
// at this repository's root for development and is ignored in your build.
package ghoncedbos

import (
	"context"
	"errors"
	"strconv"

	"github.com/dbos-inc/dbos-transact-golang/dbos"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/guard"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
)

// Identity is the (task, step) ghonce keys a write in this step by: the
// workflow id, and the step's id. ctx is the context DBOS passes the step
// function (or the workflow's); Identity fails outside a workflow.
func Identity(ctx context.Context) (task, step string, err error) {
	dctx, ok := ctx.(dbos.Context)
	if !ok {
		return "", "", errors.New("ghoncedbos: not called with a DBOS context: pass the context DBOS gives the step function")
	}
	task, err = dbos.GetWorkflowID(dctx)
	if err != nil {
		return "", "", errors.New("ghoncedbos: not called from a DBOS workflow: " + err.Error())
	}
	id, err := dbos.GetStepID(dctx)
	if err != nil {
		return "", "", errors.New("ghoncedbos: not called from a DBOS workflow: " + err.Error())
	}
	return task, stepName(id), nil
}

func stepName(id int) string { return "step#" + strconv.Itoa(id) }

// Do performs a once inside the DBOS step ctx: its Task and Step, when
// empty, are the step's Identity. The action is validated
// (reconcile.Prepare) and run by eng; the errors are the engine's (see
// Retryable).
func Do(ctx context.Context, eng *reconcile.Engine, a reconcile.Action) (*outcome.Result, error) {
	task, step, err := Identity(ctx)
	if err != nil && (a.Task == "" || a.Step == "") {
		return nil, &reconcile.InvalidError{Err: err}
	}
	return eng.DoAs(ctx, a, task, step)
}

// WithStep returns ctx carrying the step's Identity for ghonce's go-github
// transport (package guard): a client whose transport is a guard.Transport
// then sends its pull requests, issues, comments, branches and files once
// per step.
func WithStep(ctx context.Context) (context.Context, error) {
	task, step, err := Identity(ctx)
	if err != nil {
		return ctx, err
	}
	return guard.WithStep(ctx, task, step), nil
}

// Retryable says whether running the same step again can succeed where err
// failed, for dbos.WithStepRetryPredicate: when the create may have
// happened, when another execution holds the key, and for errors ghonce
// cannot classify (a retry is harmless: the key makes it find what was
// made). Bad input, credentials, a refusal, a conflict, a broken ledger and
// a changed description under OnChange "fail" or a text the caller must
// judge (same_or_another) are final.
func Retryable(err error) bool { return failure.Retryable(err) }
