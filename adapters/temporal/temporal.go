// Package ghoncetemporal runs ghonce's GitHub writes inside Temporal
// activities, keyed by the activity's identity, so that an activity Temporal
// retries (after a timeout, an error, or a worker that died mid-call) opens
// one pull request, not one per attempt.
//
//	func (a *Activities) OpenPR(ctx context.Context, title string) (int, error) {
//		res, err := ghoncetemporal.Do(ctx, a.Engine, reconcile.Action{Repo: "o/r",
//			Spec: reconcile.PR{Base: "main", Head: "fix-42", Title: title}})
//		...
//	}
//
// # The key
//
// Do fills the action's Task with the workflow id and its Step with the
// activity's type and id ("OpenPR#5"), the identity Temporal keeps for every
// attempt of one scheduled activity. Neither the attempt number nor the run
// id is part of it:
//
//   - A retried attempt (an error, a start-to-close or heartbeat timeout, a
//     worker lost mid-call) has the same workflow id, activity id and type:
//     it finds what an earlier attempt made.
//   - A reset replays the workflow up to the reset point and schedules the
//     same activities with the same ids under a new run id: the re-executed
//     activity finds the pull request the first run opened, instead of
//     opening a second. So does a workflow retry (its RetryPolicy), which
//     starts a new run under the same workflow id.
//   - Continue-as-new starts a new run whose activity ids count from the
//     start again. An activity of the new run with the default id would
//     take the key of the earlier run's activity with the same type and
//     number: answered with the earlier artifact when its text is the
//     same, else with the facts for the workflow to judge (a final
//     ghonce.same_or_another error; docs/design/same-act.md).
//     A workflow that continues
//     as new gives its writing activities ids unique across the chain
//     (workflow.ActivityOptions.ActivityID, e.g. "open-pr-" + the batch),
//     or names the step itself (Action.Step).
//   - Cron workflows (a new run per schedule, same workflow id) are the same
//     case as continue-as-new; Temporal Schedules start each action under a
//     new workflow id and need nothing.
//
// The task is the bare workflow id, so `ghonce status --task <workflow id>`
// lists what a workflow did. Two namespaces that reuse workflow ids and share
// one ledger set Action.Task themselves (namespace and workflow id).
//
// # Errors
//
// Do returns ghonce's errors as Temporal application errors whose type says
// what happened and whether a retry can help ([Err]):
//
//	ghonce.unconfirmed       retryable   the create may have happened; the retry settles it
//	ghonce.in_progress       retryable   another attempt holds the key (a lost worker's lease)
//	ghonce.error             retryable   anything else (the key makes a retry harmless)
//	ghonce.usage             final       bad input: nothing was recorded or sent
//	ghonce.credentials       final       no token, or one GitHub rejects
//	ghonce.refused           final       GitHub refused the create; nothing was created
//	ghonce.conflict          final       the name is taken by something that is not ours
//	ghonce.ledger            final       the ledger cannot be opened or used
//	ghonce.changed           final       done under another description, and Action.OnChange is "fail"
//	ghonce.same_or_another   final       done from another text: the same act (nothing to do) or another (another step)
//
// A worker that died holding a key leaves a lease (reconcile.Config.Lease,
// 2 minutes by default) that a worker on another machine waits out; the
// activity's RetryPolicy must keep retrying at least that long (Temporal's
// default policy retries without limit). A worker on the same machine proves
// the holder gone and takes over at once.
//
// # Telemetry
//
// A worker that already traces with the SDK's OpenTelemetry interceptor
// (go.temporal.io/sdk/contrib/opentelemetry) gives ghonce the same
// providers, and one trace shows the workflow, the activity and ghonce's
// look-up, create and GitHub requests; ghonce's counters (ghonce_actions_total
// and the rest) go to the worker's meter under the same names:
//
//	tracer, metrics := ghoncetemporal.Telemetry(tp, mp)
//	gh, _ := ghcheck.New(ghcheck.Options{Token: token, Tracer: tracer, Metrics: metrics})
//	eng := reconcile.New(reconcile.Config{Ledger: l, GitHub: gh, Tracer: tracer, Metrics: metrics})
//
// Another host (a Prometheus registry, another tracing system) implements
// observe.HostTracer and observe.HostMeter the same way.
//
// # Depending on it
//
// This is a Go module of its own, so the core module (and the ghonce binary)
// does not carry the Temporal SDK:
//
//	go get github.com/ghonce/ghonce/adapters/temporal
//
// Its go.mod requires the core module; the replace directive in it points
// at this repository's root for development and is ignored in your build.
package ghoncetemporal

import (
	"context"
	"errors"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/guard"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
)

// Identity is the (task, step) ghonce keys a write in this activity by:
// the workflow id, and the activity's type and id. It fails outside an
// activity.
func Identity(ctx context.Context) (task, step string, err error) {
	if !activity.IsActivity(ctx) {
		return "", "", errors.New("ghoncetemporal: not called from a Temporal activity: pass the activity's context")
	}
	task, step = identity(activity.GetInfo(ctx))
	return task, step, nil
}

// identity derives the key's task and step from what Temporal keeps for
// every attempt of one scheduled activity: never the attempt or the run id.
func identity(info activity.Info) (task, step string) {
	return info.WorkflowExecution.ID, info.ActivityType.Name + "#" + info.ActivityID
}

// Do performs a once inside the activity ctx: its Task and Step, when
// empty, are the activity's Identity. The action is validated (reconcile.Prepare)
// and run by eng; while it runs, Do heartbeats when the activity has a
// heartbeat timeout, since ghonce may wait for another holder of the key or
// for an earlier attempt's create to settle. Errors are Temporal application
// errors (see Err).
func Do(ctx context.Context, eng *reconcile.Engine, a reconcile.Action) (*outcome.Result, error) {
	if !activity.IsActivity(ctx) {
		return nil, Err(&reconcile.InvalidError{Err: errors.New("ghoncetemporal.Do: not called from a Temporal activity: pass the activity's context")})
	}
	return do(ctx, eng, activity.GetInfo(ctx), a)
}

func do(ctx context.Context, eng *reconcile.Engine, info activity.Info, a reconcile.Action) (*outcome.Result, error) {
	if info.HeartbeatTimeout > 0 {
		stop := heartbeat(ctx, info.HeartbeatTimeout/3)
		defer stop()
	}
	task, step := identity(info)
	res, err := eng.DoAs(ctx, a, task, step)
	if err != nil {
		return nil, Err(err)
	}
	return res, nil
}

// heartbeat records a heartbeat every interval until stop.
func heartbeat(ctx context.Context, every time.Duration) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(max(every, 10*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(done); <-finished }
}

// WithStep returns ctx carrying the activity's Identity for ghonce's
// go-github transport (package guard): a client whose transport is a
// guard.Transport then sends its pull requests, issues, comments, branches
// and files once per activity.
func WithStep(ctx context.Context) (context.Context, error) {
	task, step, err := Identity(ctx)
	if err != nil {
		return ctx, err
	}
	return guard.WithStep(ctx, task, step), nil
}

// ErrorType prefixes the type of every application error Err returns
// ("ghonce.unconfirmed", ...), which a RetryPolicy's NonRetryableErrorTypes
// and a workflow's errors.As can match.
const ErrorType = "ghonce."

// Err turns an error of ghonce's engine (Do's, or a guarded go-github
// call's) into a Temporal application error of type ErrorType + its kind,
// non-retryable when no retry can change the answer (bad input, credentials,
// a refusal, a conflict, a broken ledger). The original error is its cause.
// nil stays nil.
func Err(err error) error {
	if err == nil {
		return nil
	}
	kind := string(failure.Describe(err, "", nil).Error.Kind)
	var changed *reconcile.ChangedError
	if errors.As(err, &changed) {
		kind = "changed" // Action.OnChange "fail": the same action fails again
	}
	msg := failure.Message(err)
	if failure.Retryable(err) {
		return temporal.NewApplicationErrorWithCause(msg, ErrorType+kind, err)
	}
	return temporal.NewNonRetryableApplicationError(msg, ErrorType+kind, err)
}
