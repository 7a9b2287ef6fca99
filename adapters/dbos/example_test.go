package ghoncedbos_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"

	ghoncedbos "github.com/ghonce/ghonce/adapters/dbos"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger/store"
	"github.com/ghonce/ghonce/reconcile"
)

// Fix is what the agent pushed.
type Fix struct {
	Repo, Branch, Title, Body string
}

// Opened is the workflow's result.
type Opened struct {
	Outcome string
	Number  int
	Step    string
}

// engine is the process's ghonce engine, shared by every workflow it runs.
var engine *reconcile.Engine

// FixIssue is the workflow: the agent's work, then the pull request, in a
// step that DBOS may run more than once and ghonce runs once.
func FixIssue(ctx dbos.Context, fix Fix) (Opened, error) {
	return dbos.RunAsStep(ctx, func(ctx context.Context) (Opened, error) {
		res, err := ghoncedbos.Do(ctx, engine, reconcile.Action{Repo: fix.Repo,
			Spec: reconcile.PR{Base: "main", Head: fix.Branch, Title: fix.Title, Body: fix.Body}})
		if err != nil {
			return Opened{}, err
		}
		return Opened{Outcome: string(res.Outcome), Number: res.Number, Step: res.Step}, nil
	}, dbos.WithStepName("open-pr"), dbos.WithStepMaxRetries(20), dbos.WithStepMaxInterval(30*time.Second),
		dbos.WithStepRetryPredicate(ghoncedbos.Retryable))
}

// newEngine opens the ledger at GHONCE_LEDGER (the Postgres DBOS uses can
// hold it too) and the GitHub client.
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

// run is the application: the engine, DBOS launched, then one workflow
// run under the id of the work.
func run(ctx context.Context, dbosURL, schema string, fix Fix) (Opened, error) {
	eng, closeLedger, err := newEngine(ctx)
	if err != nil {
		return Opened{}, err
	}
	defer closeLedger()
	engine = eng
	dctx, err := launch(ctx, dbosURL, schema)
	if err != nil {
		return Opened{}, err
	}
	defer dbos.Shutdown(dctx, 10*time.Second)
	h, err := dbos.RunWorkflow(dctx, FixIssue, fix, dbos.WithWorkflowID("fix-issue-42"))
	if err != nil {
		return Opened{}, err
	}
	return h.GetResult()
}

// launch starts DBOS on its system database with the workflow registered;
// Launch recovers the workflows a dead process of this application left.
func launch(ctx context.Context, dbosURL, schema string) (dbos.Context, error) {
	dctx, err := dbos.NewContext(ctx, dbos.Config{AppName: "fix-agent", DatabaseURL: dbosURL, DatabaseSchema: schema,
		ApplicationVersion: "v1", Logger: quiet()})
	if err != nil {
		return nil, err
	}
	dbos.RegisterWorkflow(dctx, FixIssue)
	if err := dbos.Launch(dctx); err != nil {
		dbos.Shutdown(dctx, 10*time.Second)
		return nil, err
	}
	return dctx, nil
}

// The workflow opens the pull request on the fake GitHub, keyed by the
// workflow id and the step's; DBOS and the ledger share the test Postgres.
func Example() {
	w := newWorld()
	defer w.close()
	out, err := run(context.Background(), w.dbosURL, w.dbosSchema, Fix{Repo: "o/r", Branch: "fix-42", Title: "Fix crash on start", Body: "Fixes #1."})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s PR %d (task fix-issue-42, step %s)\n", out.Outcome, out.Number, out.Step)
	fmt.Println("pull requests on GitHub:", len(w.gh.PullRequests("o", "r")))
	// Output:
	// created PR 1 (task fix-issue-42, step step#0)
	// pull requests on GitHub: 1
}
