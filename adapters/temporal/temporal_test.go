package ghoncetemporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/guard"
	"github.com/ghonce/ghonce/ledger/store"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
	"github.com/ghonce/ghonce/tests/harness"
	"github.com/ghonce/ghonce/tests/testworld"
)

// workerEnv, when set, makes the test binary a worker process that runs one
// activity attempt (its JSON: workerJob) and is killed mid-call.
const workerEnv = "GHONCE_TEMPORAL_TEST_WORKER"

func TestMain(m *testing.M) {
	if job := os.Getenv(workerEnv); job != "" {
		os.Exit(runWorker(job))
	}
	os.Exit(m.Run())
}

// workerJob is one activity attempt handed to a worker process: what
// Temporal delivers to a worker (the activity's info and input) and the
// worker's own configuration.
type workerJob struct {
	Ledger, GitHub, Token string
	Info                  activity.Info
	Title                 string
}

// runWorker is a worker process running the attempt: the adapter's path
// from the activity's info on (do), with an engine of its own process.
func runWorker(raw string) int {
	var job workerJob
	if err := json.Unmarshal([]byte(raw), &job); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	ctx := context.Background()
	l, err := store.Open(ctx, job.Ledger, store.Options{Create: store.CreateForAction})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	defer l.Close()
	gh, err := ghcheck.New(ghcheck.Options{BaseURL: job.GitHub, Token: job.Token})
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	eng := reconcile.New(reconcile.Config{Ledger: l, GitHub: gh, LedgerNew: l.CannotVouch()})
	res, err := do(ctx, eng, job.Info, prAction(job.Title))
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	fmt.Println(res.Outcome, res.Number)
	return 0
}

func prAction(title string) reconcile.Action {
	return reconcile.Action{Repo: testworld.Repo, Spec: reconcile.PR{Base: testworld.Branch, Head: "fix-42", Title: title, Body: "Fixes #1."}}
}

// newWorld is the test's world with the agent's branch fix-42 pushed.
func newWorld(t *testing.T) *testworld.World {
	w := testworld.New(t)
	w.GitHub.SetRef(testworld.Owner, testworld.Name, "fix-42", w.GitHub.AddCommit(testworld.Owner, testworld.Name, testworld.Branch))
	return w
}

func newEnv(t *testing.T, workflowID string) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	s.SetLogger(tlog.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := s.NewTestWorkflowEnvironment()
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: workflowID})
	return env
}

// opened is what the test's activity returns: the outcome of the attempt
// that finished, and which attempt it was.
type opened struct {
	Outcome string
	Number  int
	Attempt int32
}

func openPRWorkflow(ctx workflow.Context, title string) (opened, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 3},
	})
	var out opened
	err := workflow.ExecuteActivity(ctx, "OpenPR", title).Get(ctx, &out)
	return out, err
}

// lossyWorker runs the activity's first attempt in a worker process that
// is killed (harness.Runner: SIGKILL) once GitHub has stored its pull
// request, before the answer is written; later attempts run here, as on a
// surviving worker.
type lossyWorker struct {
	runner *harness.Runner
	github string
	ledger string
	eng    *reconcile.Engine

	mu   sync.Mutex
	dies bool              // the next first attempt runs in a worker that dies
	lost []harness.Outcome // how each worker process ended
}

func (w *lossyWorker) OpenPR(ctx context.Context, title string) (opened, error) {
	info := activity.GetInfo(ctx)
	w.mu.Lock()
	dies := w.dies && info.Attempt == 1
	w.dies = w.dies && !dies
	w.mu.Unlock()
	if dies {
		return opened{}, w.dyingAttempt(ctx, info, title)
	}
	res, err := Do(ctx, w.eng, prAction(title))
	if err != nil {
		return opened{}, err
	}
	return opened{Outcome: string(res.Outcome), Number: res.Number, Attempt: info.Attempt}, nil
}

// dyingAttempt runs the attempt in a worker process and reports it lost
// when the process dies. Temporal would time such an attempt out
// (start-to-close or heartbeat) and schedule the next one under its
// RetryPolicy; the SDK's test environment ends an activity at a timeout
// instead of retrying it, so the lost attempt ends with an error, which
// the same RetryPolicy retries.
func (w *lossyWorker) dyingAttempt(ctx context.Context, info activity.Info, title string) error {
	job, err := json.Marshal(workerJob{Ledger: w.ledger, GitHub: w.github, Token: testworld.Token, Info: info, Title: title})
	if err != nil {
		return err
	}
	out, err := w.runner.Run(ctx, os.Args[0], []string{"-test.run=^$"}, append(os.Environ(), workerEnv+"="+string(job)),
		func(c *fixtures.Commit) bool { return c.Kind == "pull" }) // a pull request stored
	if err != nil {
		return err
	}
	w.mu.Lock()
	w.lost = append(w.lost, out)
	w.mu.Unlock()
	return fmt.Errorf("worker lost: exit %d, killed %v (its output: %q)", out.Exit, out.Killed, out.Stdout+out.Stderr)
}

// The worker running the activity dies after GitHub committed the pull
// request and before the answer reached it; Temporal retries the activity
// on a surviving worker, whose attempt finds that pull request (taking the
// key over from the dead worker) instead of opening a second.
func TestRetryAfterTheWorkerDiedMidCreateOpensOnePR(t *testing.T) {
	tw := newWorld(t)
	gh := tw.GitHub
	w := &lossyWorker{runner: harness.NewRunner(gh), github: gh.URL(), ledger: tw.Ledger, eng: tw.Engine(), dies: true}

	env := newEnv(t, "fix-issue-42")
	env.RegisterWorkflow(openPRWorkflow)
	env.RegisterActivity(w)
	env.ExecuteWorkflow(openPRWorkflow, "Fix crash on start")
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow: %v", err)
	}
	var out opened
	if err := env.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}

	if len(w.lost) != 1 || !w.lost[0].Killed {
		t.Fatalf("the first attempt's worker ended with %v; want it killed mid-create", w.lost)
	}
	prs := gh.PullRequests(testworld.Owner, testworld.Name)
	if len(prs) != 1 {
		t.Fatalf("%d pull requests on GitHub after the retry; want 1", len(prs))
	}
	if out.Attempt != 2 || out.Outcome != string(outcome.Found) || out.Number != prs[0].Number {
		t.Fatalf("the retry answered %+v; want attempt 2 to find PR #%d", out, prs[0].Number)
	}
	// The pull request carries the key of (workflow id, activity type and
	// id): what every attempt of this activity derives.
	key := taskkey.Key(taskkey.Identity{Task: "fix-issue-42", Step: "OpenPR#1", Kind: "pr", Repo: testworld.Repo, Target: testworld.Branch})
	if !taskkey.HasMarker(prs[0].Body, key) {
		t.Fatalf("PR #%d's body %q has no marker of key %s", prs[0].Number, prs[0].Body, key)
	}
	// A rerun of the same workflow (a reset, a workflow retry) is answered
	// from the ledger, without asking GitHub to create anything.
	env2 := newEnv(t, "fix-issue-42")
	env2.RegisterWorkflow(openPRWorkflow)
	env2.RegisterActivity(w)
	env2.ExecuteWorkflow(openPRWorkflow, "Fix crash on start")
	if err := env2.GetWorkflowResult(&out); err != nil {
		t.Fatal(err)
	}
	if n := len(gh.PullRequests(testworld.Owner, testworld.Name)); n != 1 || out.Outcome != string(outcome.Skipped) && out.Outcome != string(outcome.Found) {
		t.Fatalf("a rerun of the workflow: %+v, %d pull requests; want the first one back", out, n)
	}
}

// Bad input is final: Temporal does not retry it, and the workflow sees
// ghonce's kind as the application error's type.
func TestBadInputIsNotRetried(t *testing.T) {
	tw := newWorld(t)
	gh := tw.GitHub
	eng := tw.Engine()
	attempts := 0
	env := newEnv(t, "bad-input")
	env.RegisterWorkflow(openPRWorkflow)
	env.RegisterActivityWithOptions(func(ctx context.Context, title string) (opened, error) {
		attempts++
		_, err := Do(ctx, eng, prAction(title))
		return opened{}, err
	}, activity.RegisterOptions{Name: "OpenPR"})
	env.ExecuteWorkflow(openPRWorkflow, "") // a pull request needs a title
	err := env.GetWorkflowError()
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != ErrorType+"usage" || !appErr.NonRetryable() {
		t.Fatalf("workflow error %v; want a non-retryable %susage application error", err, ErrorType)
	}
	if attempts != 1 || len(gh.PullRequests(testworld.Owner, testworld.Name)) != 0 {
		t.Fatalf("%d attempts, %d pull requests; want 1 attempt and none", attempts, len(gh.PullRequests(testworld.Owner, testworld.Name)))
	}
}

// Which errors a retry can help, as a workflow sees them.
func TestErrKinds(t *testing.T) {
	for _, tc := range []struct {
		err       error
		kind      string
		retryable bool
	}{
		{&outcome.UnconfirmedError{Key: "gk1_x", Err: errors.New("connection reset")}, "unconfirmed", true},
		{&outcome.InProgressError{Key: "gk1_x"}, "in_progress", true},
		{&reconcile.InvalidError{Err: errors.New("title is empty")}, "usage", false},
		{&outcome.ConflictError{Key: "gk1_x", Err: errors.New("branch taken")}, "conflict", false},
		{&reconcile.ChangedError{Key: "gk1_x", Changed: []string{"title"}, Result: &outcome.Result{Kind: "pr", Number: 1}}, "changed", false},
		{errors.New("something else"), "error", true},
	} {
		var appErr *temporal.ApplicationError
		if err := Err(tc.err); !errors.As(err, &appErr) {
			t.Errorf("Err(%T) = %v; want an application error", tc.err, err)
			continue
		}
		if appErr.Type() != ErrorType+tc.kind || appErr.NonRetryable() == tc.retryable || !errors.Is(appErr, tc.err) {
			t.Errorf("Err(%T): type %s, non-retryable %v; want %s%s, retryable %v, wrapping it", tc.err, appErr.Type(), appErr.NonRetryable(), ErrorType, tc.kind, tc.retryable)
		}
	}
	if Err(nil) != nil {
		t.Error("Err(nil) != nil")
	}
}

// The identity ignores the attempt and the run id, and WithStep hands it to
// the go-github transport; outside an activity both refuse.
func TestIdentity(t *testing.T) {
	a := activity.Info{WorkflowExecution: workflow.Execution{ID: "wf", RunID: "run-1"}, ActivityID: "5", ActivityType: activity.Type{Name: "OpenPR"}, Attempt: 1}
	b := a
	b.WorkflowExecution.RunID, b.Attempt = "run-2", 7
	ta, sa := identity(a)
	tb, sb := identity(b)
	if ta != "wf" || sa != "OpenPR#5" || ta != tb || sa != sb {
		t.Fatalf("identity: %q %q and %q %q; want wf, OpenPR#5 for both", ta, sa, tb, sb)
	}
	if _, _, err := Identity(context.Background()); err == nil {
		t.Fatal("Identity outside an activity: no error")
	}
	if _, err := WithStep(context.Background()); err == nil {
		t.Fatal("WithStep outside an activity: no error")
	}
	var env testsuite.WorkflowTestSuite
	aenv := env.NewTestActivityEnvironment()
	aenv.RegisterActivityWithOptions(func(ctx context.Context) (string, error) {
		ctx, err := WithStep(ctx)
		if err != nil {
			return "", err
		}
		task, step, _ := guard.StepFrom(ctx)
		return task + " " + step, nil
	}, activity.RegisterOptions{Name: "Push"})
	v, err := aenv.ExecuteActivity("Push")
	if err != nil {
		t.Fatal(err)
	}
	var got string
	if err := v.Get(&got); err != nil || !strings.HasPrefix(got, "default-test-workflow-id Push#") {
		t.Fatalf("guard.StepFrom in an activity: %q, %v; want the activity's identity", got, err)
	}
}

// While ghonce waits (here: for GitHub to answer the create), Do heartbeats
// an activity that has a heartbeat timeout, so Temporal does not take a
// slow create for a lost worker and run a second attempt beside it.
func TestDoHeartbeatsWhileItWaits(t *testing.T) {
	tw := newWorld(t)
	eng := tw.Engine()
	beats := make(chan struct{}, 100)
	const want = 3
	// The create is held until the activity has heartbeated want times
	// (at most 30 s: then the activity has long timed out, and the test
	// fails on the workflow's error).
	tw.GitHub.BeforeWrite(func(w *fixtures.PendingWrite) bool {
		if w.Method != "POST" || !strings.HasSuffix(w.Path, "/pulls") {
			return true
		}
		deadline := time.After(30 * time.Second)
		for range want {
			select {
			case <-beats:
			case <-deadline:
				return true
			}
		}
		return true
	})
	env := newEnv(t, "slow-create")
	env.SetTestTimeout(time.Minute) // the environment's 3 s idle bound would end the wait first
	env.SetOnActivityHeartbeatListener(func(*activity.Info, converter.EncodedValues) { beats <- struct{}{} })
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context, title string) (int, error) {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: time.Minute,
			HeartbeatTimeout:    time.Second,
			RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
		})
		var n int
		err := workflow.ExecuteActivity(ctx, "OpenPR", title).Get(ctx, &n)
		return n, err
	}, workflow.RegisterOptions{Name: "SlowCreate"})
	env.RegisterActivityWithOptions(func(ctx context.Context, title string) (int, error) {
		res, err := Do(ctx, eng, prAction(title))
		if err != nil {
			return 0, err
		}
		return res.Number, nil
	}, activity.RegisterOptions{Name: "OpenPR"})
	env.ExecuteWorkflow("SlowCreate", "Fix crash on start")
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("workflow: %v; want the slow create to finish within the heartbeat timeout's renewals", err)
	}
	if n := len(tw.GitHub.PullRequests(testworld.Owner, testworld.Name)); n != 1 {
		t.Fatalf("%d pull requests; want 1", n)
	}
}

// batchWorkflow opens the pull request of one batch of a chain that
// continues as new, with the activity id given (or Temporal's default).
func batchWorkflow(ctx workflow.Context, head, activityID string) (opened, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		ActivityID:          activityID,
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	})
	var out opened
	err := workflow.ExecuteActivity(ctx, "OpenBatchPR", head).Get(ctx, &out)
	return out, err
}

// Continue-as-new starts a run under the same workflow id whose activity
// ids count from the start again: with the default ids, the next run's
// activity derives the earlier run's key; its title reads as another pull
// request, so the default --on-change auto answers with the facts, a
// final ghonce.same_or_another error, and nothing is opened (as
// documented); with ids of their own, each run opens its own.
func TestContinueAsNewNeedsActivityIDsOfItsOwn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		ids    [2]string
		want   [2]outcome.Outcome // "" for a run that must fail as ghonce.same_or_another
		numPRs int
	}{
		{"default ids", [2]string{"", ""}, [2]outcome.Outcome{outcome.Created, ""}, 1},
		{"ids of their own", [2]string{"open-pr-1", "open-pr-2"}, [2]outcome.Outcome{outcome.Created, outcome.Created}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tw := newWorld(t)
			tw.GitHub.SetRef(testworld.Owner, testworld.Name, "fix-43", tw.GitHub.AddCommit(testworld.Owner, testworld.Name, testworld.Branch))
			eng := tw.Engine()
			// Each run of the chain, as the activity sees it: the same
			// workflow id, the activity counter from the start.
			for run, head := range []string{"fix-42", "fix-43"} {
				env := newEnv(t, "batches")
				env.RegisterWorkflow(batchWorkflow)
				env.RegisterActivityWithOptions(func(ctx context.Context, head string) (opened, error) {
					res, err := Do(ctx, eng, reconcile.Action{Repo: testworld.Repo,
						Spec: reconcile.PR{Base: testworld.Branch, Head: head, Title: "Batch " + head}})
					if err != nil {
						return opened{}, err
					}
					return opened{Outcome: string(res.Outcome), Number: res.Number}, nil
				}, activity.RegisterOptions{Name: "OpenBatchPR"})
				env.ExecuteWorkflow(batchWorkflow, head, tc.ids[run])
				var out opened
				err := env.GetWorkflowResult(&out)
				if tc.want[run] == "" {
					if err == nil || !strings.Contains(err.Error(), "type: ghonce.same_or_another") {
						t.Fatalf("run %d (activity id %q): %+v, %v; want a ghonce.same_or_another error", run+1, tc.ids[run], out, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("run %d: %v", run+1, err)
				}
				if out.Outcome != string(tc.want[run]) {
					t.Fatalf("run %d (activity id %q): %s; want %s", run+1, tc.ids[run], out.Outcome, tc.want[run])
				}
			}
			if n := len(tw.GitHub.PullRequests(testworld.Owner, testworld.Name)); n != tc.numPRs {
				t.Fatalf("%d pull requests; want %d", n, tc.numPRs)
			}
		})
	}
}
