package ghoncetemporal_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	ghoncetemporal "github.com/ghonce/ghonce/adapters/temporal"
	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger/store"
	"github.com/ghonce/ghonce/reconcile"
)

// Activities are the agent's GitHub writes, each once per activity: the
// engine is built once per worker and shared by every activity it runs.
type Activities struct {
	Engine *reconcile.Engine
}

// OpenPR opens the pull request of an agent's fix, once however often
// Temporal runs this activity.
func (a *Activities) OpenPR(ctx context.Context, fix Fix) (int, error) {
	res, err := ghoncetemporal.Do(ctx, a.Engine, reconcile.Action{Repo: fix.Repo,
		Spec: reconcile.PR{Base: "main", Head: fix.Branch, Title: fix.Title, Body: fix.Body}})
	if err != nil {
		return 0, err // a Temporal application error: retryable when a retry can help
	}
	activity.GetLogger(ctx).Info("pull request", "outcome", res.Outcome, "number", res.Number)
	return res.Number, nil
}

// Fix is what the agent pushed.
type Fix struct {
	Repo, Branch, Title, Body string
}

// FixIssue is the workflow: the agent's work, then the pull request.
func FixIssue(ctx workflow.Context, fix Fix) (int, error) {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second},
	})
	var a *Activities
	var number int
	err := workflow.ExecuteActivity(ctx, a.OpenPR, fix).Get(ctx, &number)
	return number, err
}

// newEngine is a worker's engine: the ledger at GHONCE_LEDGER (a file, or
// a postgres:// ledger every worker shares) and the GitHub token.
func newEngine(ctx context.Context) (*reconcile.Engine, func() error, error) {
	l, err := store.Open(ctx, os.Getenv("GHONCE_LEDGER"), store.Options{Create: store.CreateForAction})
	if err != nil {
		return nil, nil, fmt.Errorf("open ledger: %w", err)
	}
	gh, err := ghcheck.New(ghcheck.Options{BaseURL: os.Getenv("GITHUB_API_URL"), Token: os.Getenv("GH_TOKEN")})
	if err != nil {
		l.Close()
		return nil, nil, fmt.Errorf("github client: %w", err)
	}
	return reconcile.New(reconcile.Config{Ledger: l, GitHub: gh, LedgerNew: l.CannotVouch()}), l.Close, nil
}

// The workflow runs in the SDK's test environment against the fake GitHub,
// twice under one workflow id (as a reset or a workflow retry would run it
// again): one pull request.
func Example() {
	gh := fixtures.NewServer(fixtures.Options{})
	defer gh.Close()
	gh.AddUser("agent-bot", "example-token")
	gh.AddRepo("o", "r", "main")
	gh.SetRef("o", "r", "fix-42", gh.AddCommit("o", "r", "main"))
	dir, err := os.MkdirTemp("", "ghonce-temporal-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Setenv("GHONCE_LEDGER", filepath.Join(dir, "ledger.db"))
	os.Setenv("GITHUB_API_URL", gh.URL())
	os.Setenv("GH_TOKEN", "example-token")

	eng, closeLedger, err := newEngine(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	defer closeLedger()
	fix := Fix{Repo: "o/r", Branch: "fix-42", Title: "Fix crash on start", Body: "Fixes #1."}
	for range 2 {
		var s testsuite.WorkflowTestSuite
		s.SetLogger(tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))) // the output is the example's
		env := s.NewTestWorkflowEnvironment()
		env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: "fix-issue-42"})
		env.RegisterActivity(&Activities{Engine: eng})
		env.ExecuteWorkflow(FixIssue, fix)
		var number int
		if err := env.GetWorkflowResult(&number); err != nil {
			log.Fatal(err)
		}
		fmt.Println("workflow fix-issue-42: pull request", number)
	}
	fmt.Println("pull requests on GitHub:", len(gh.PullRequests("o", "r")))
	// Output:
	// workflow fix-issue-42: pull request 1
	// workflow fix-issue-42: pull request 1
	// pull requests on GitHub: 1
}
