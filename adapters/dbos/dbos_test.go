package ghoncedbos_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"

	ghoncedbos "github.com/ghonce/ghonce/adapters/dbos"
	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ledger/postgres/pgtest"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
	"github.com/ghonce/ghonce/tests/harness"
	"github.com/ghonce/ghonce/tests/testworld"
)

// workerEnv, when set, makes the test binary an application process that
// runs the workflow (run, as the Example does) and is killed mid-step.
const workerEnv = "GHONCE_DBOS_TEST_WORKER"

// The tests and the Example need Postgres, as DBOS's system database and as
// the ledger: without GHONCE_TEST_POSTGRES they are skipped, loudly, except
// under CI=true, where that fails (as every Postgres test of the project).
// Loudly: every test of this module needs it, so a plain `ok` would say
// that tests passed when none ran. None is run, and go test's summary says
// so ("ok ... [no tests to run]"); -v shows why.
func TestMain(m *testing.M) {
	if job := os.Getenv(workerEnv); job != "" {
		os.Exit(runWorker(job))
	}
	if os.Getenv(pgtest.EnvVar) == "" {
		if os.Getenv("CI") == "true" {
			fmt.Fprintf(os.Stderr, "FAIL: %s is empty under CI=true: the DBOS adapter's tests must run in CI (.ci/run sets it)\n", pgtest.EnvVar)
			os.Exit(1)
		}
		fmt.Fprintf(os.Stderr, "SKIPPED: the DBOS adapter's tests and Example need %s=postgres://USER@HOST/DB (make test sets it when Postgres answers on 127.0.0.1:5432)\n", pgtest.EnvVar)
		flag.Parse()
		if err := flag.Set("test.run", "^$"); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: run no test: %v\n", err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}

// world is a test's fake GitHub, DBOS schema and ledger schema, the latter
// two in the test Postgres.
type world struct {
	gh                  *fixtures.Server
	dbosURL, dbosSchema string
	ledger              string
	drops               []func() error
	restore             []func()
}

func newWorld() *world {
	dsn := os.Getenv(pgtest.EnvVar)
	w := &world{gh: fixtures.NewServer(fixtures.Options{}), dbosURL: dsn}
	w.gh.AddUser("agent-bot", "test-token")
	w.gh.AddRepo("o", "r", "main")
	w.gh.SetRef("o", "r", "fix-42", w.gh.AddCommit("o", "r", "main"))
	loc, drop, err := pgtest.NewSchema(dsn, "ghonce_dbos_")
	if err != nil {
		log.Fatal(err)
	}
	w.drops = append(w.drops, drop)
	u, _ := url.Parse(loc)
	w.dbosSchema = u.Query().Get("search_path")
	w.ledger, drop, err = pgtest.NewSchema(dsn, "ghonce_ledger_")
	if err != nil {
		log.Fatal(err)
	}
	w.drops = append(w.drops, drop)
	w.setenv("GHONCE_LEDGER", w.ledger)
	w.setenv("GITHUB_API_URL", w.gh.URL())
	w.setenv("GH_TOKEN", "test-token")
	return w
}

func (w *world) setenv(k, v string) {
	old, had := os.LookupEnv(k)
	os.Setenv(k, v)
	w.restore = append(w.restore, func() {
		if had {
			os.Setenv(k, old)
		} else {
			os.Unsetenv(k)
		}
	})
}

func (w *world) close() {
	w.gh.Close()
	for _, r := range w.restore {
		r()
	}
	for _, d := range w.drops {
		if err := d(); err != nil {
			log.Print(err)
		}
	}
}

// quiet is DBOS's logger in the tests: warnings and errors only, on stderr.
func quiet() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// workerJob is what the application process is started with.
type workerJob struct {
	DBOSURL, DBOSSchema string
	Fix                 Fix
}

// runWorker is the application process: the Example's run, in a process of
// its own (GHONCE_LEDGER, GITHUB_API_URL and GH_TOKEN in its environment).
func runWorker(raw string) int {
	var job workerJob
	if err := json.Unmarshal([]byte(raw), &job); err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 2
	}
	out, err := run(context.Background(), job.DBOSURL, job.DBOSSchema, job.Fix)
	if err != nil {
		fmt.Fprintln(os.Stderr, "worker:", err)
		return 1
	}
	fmt.Println(out.Outcome, out.Number)
	return 0
}

// The application process dies after GitHub committed the step's pull
// request and before the answer reached it. The next process launches DBOS
// on the same system database, which recovers the pending workflow and runs
// the interrupted step again: ghonce takes the key over from the dead
// process and finds the pull request instead of opening a second.
func TestRecoveryAfterTheProcessDiedMidCreateOpensOnePR(t *testing.T) {
	tw := testworld.New(t, testworld.Postgres())
	gh := tw.GitHub
	gh.SetRef(testworld.Owner, testworld.Name, "fix-42", gh.AddCommit(testworld.Owner, testworld.Name, testworld.Branch))
	dbosURL := pgtest.DSN(t)
	loc, drop, err := pgtest.NewSchema(dbosURL, "ghonce_dbos_") // DBOS's system tables, in a schema of the test's own
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drop() })
	u, _ := url.Parse(loc)
	dbosSchema := u.Query().Get("search_path")
	fix := Fix{Repo: testworld.Repo, Branch: "fix-42", Title: "Fix crash on start", Body: "Fixes #1."}

	job, err := json.Marshal(workerJob{DBOSURL: dbosURL, DBOSSchema: dbosSchema, Fix: fix})
	if err != nil {
		t.Fatal(err)
	}
	env := append(tw.Env(), "GHONCE_LEDGER="+tw.Ledger, workerEnv+"="+string(job))
	out, err := harness.NewRunner(gh).Run(context.Background(), os.Args[0], []string{"-test.run=^$"}, env,
		func(c *fixtures.Commit) bool { return c.Kind == "pull" }) // a pull request stored
	if err != nil {
		t.Fatal(err)
	}
	if !out.Killed {
		t.Fatalf("the application process ended with exit %d; want it killed mid-create. Its output:\n%s%s", out.Exit, out.Stdout, out.Stderr)
	}
	if n := len(gh.PullRequests(testworld.Owner, testworld.Name)); n != 1 {
		t.Fatalf("%d pull requests after the crash; want the one the dead process's create committed", n)
	}

	// The restarted application: Launch recovers the workflow, which runs
	// the step again; the retry of the same workflow id answers its result.
	engine = tw.Engine() // Settle off: the fake stores a create before it answers
	got, err := recovered(dbosURL, dbosSchema)
	if err != nil {
		t.Fatal(err)
	}
	prs := gh.PullRequests(testworld.Owner, testworld.Name)
	if len(prs) != 1 {
		t.Fatalf("%d pull requests after recovery; want 1", len(prs))
	}
	if got.Outcome != string(outcome.Found) || got.Number != prs[0].Number {
		t.Fatalf("the recovered step answered %+v; want it to find PR #%d", got, prs[0].Number)
	}
	key := taskkey.Key(taskkey.Identity{Task: "fix-issue-42", Step: got.Step, Kind: "pr", Repo: testworld.Repo, Target: testworld.Branch})
	if got.Step != "step#0" || !taskkey.HasMarker(prs[0].Body, key) {
		t.Fatalf("step %q; PR body %q; want step#0's key %s in it", got.Step, prs[0].Body, key)
	}
}

// recovered is the restarted application: DBOS launched on the same system
// database recovers the workflow, whose result it then answers.
func recovered(dbosURL, dbosSchema string) (Opened, error) {
	dctx, err := launch(context.Background(), dbosURL, dbosSchema)
	if err != nil {
		return Opened{}, err
	}
	defer dbos.Shutdown(dctx, 10*time.Second)
	h, err := dbos.RetrieveWorkflow[Opened](dctx, "fix-issue-42")
	if err != nil {
		return Opened{}, err
	}
	return h.GetResult()
}

// Identity outside a DBOS workflow is an error, and bad input is final.
func TestOutsideAWorkflowAndRetryable(t *testing.T) {
	if _, _, err := ghoncedbos.Identity(context.Background()); err == nil {
		t.Fatal("Identity outside a workflow: no error")
	}
	_, err := ghoncedbos.Do(context.Background(), nil, reconcile.Action{Repo: "o/r", Spec: reconcile.PR{Base: "main", Head: "x", Title: "t"}})
	if err == nil || ghoncedbos.Retryable(err) {
		t.Fatalf("Do outside a workflow: %v (retryable %v); want a final error", err, ghoncedbos.Retryable(err))
	}
	if !ghoncedbos.Retryable(&outcome.UnconfirmedError{Key: "gk1_x", Err: fmt.Errorf("reset")}) ||
		!ghoncedbos.Retryable(&outcome.InProgressError{Key: "gk1_x"}) {
		t.Fatal("unconfirmed and in-progress errors must be retryable")
	}
}

// GitHub stores the create and the answer is lost (the connection drops):
// Do answers *outcome.UnconfirmedError, which Retryable lets the step's
// retries settle, and the retry finds the pull request instead of opening
// a second.
func TestStepRetrySettlesALostAnswer(t *testing.T) {
	tw := testworld.New(t, testworld.Postgres())
	gh := tw.GitHub
	gh.SetRef(testworld.Owner, testworld.Name, "fix-42", gh.AddCommit(testworld.Owner, testworld.Name, testworld.Branch))
	gh.Inject(fixtures.Fault{Match: fixtures.MatchMethodPath("POST", "/repos/"+testworld.Repo+"/pulls"), Kind: fixtures.DropAfterCommit})
	dbosURL := pgtest.DSN(t)
	loc, drop, err := pgtest.NewSchema(dbosURL, "ghonce_dbos_")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { drop() })
	u, _ := url.Parse(loc)
	engine = tw.Engine()

	dctx, err := launch(context.Background(), dbosURL, u.Query().Get("search_path"))
	if err != nil {
		t.Fatal(err)
	}
	defer dbos.Shutdown(dctx, 10*time.Second)
	h, err := dbos.RunWorkflow(dctx, FixIssue, Fix{Repo: testworld.Repo, Branch: "fix-42", Title: "Fix crash on start"}, dbos.WithWorkflowID("lost-answer"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := h.GetResult()
	if err != nil {
		t.Fatalf("workflow: %v; want the step's retry to settle the lost answer", err)
	}
	prs := gh.PullRequests(testworld.Owner, testworld.Name)
	if len(prs) != 1 || out.Outcome != string(outcome.Found) || out.Number != prs[0].Number {
		t.Fatalf("the step answered %+v with %d pull requests; want the retry to find the one the lost create made", out, len(prs))
	}
}

// Without Postgres this module's tests never pass in silence: this binary,
// run again without GHONCE_TEST_POSTGRES, runs no test and says so (go
// test's summary then ends in "[no tests to run]"), and under CI=true it
// fails.
func TestWithoutPostgresNothingPassesInSilence(t *testing.T) {
	for _, c := range []struct {
		ci   string
		exit int
		says string
	}{{"", 0, "testing: warning: no tests to run"}, {"true", 1, "FAIL: " + pgtest.EnvVar + " is empty under CI=true"}} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestOutsideAWorkflowAndRetryable$")
		cmd.Env = append(os.Environ(), pgtest.EnvVar+"=", "CI="+c.ci)
		out, err := cmd.CombinedOutput()
		code := 0
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.exit || !strings.Contains(string(out), c.says) || !strings.Contains(string(out), "SKIPPED") && c.ci == "" {
			t.Errorf("CI=%q, no %s: exit %d, output:\n%s\nwant exit %d saying %q", c.ci, pgtest.EnvVar, code, out, c.exit, c.says)
		}
	}
}
