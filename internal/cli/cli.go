// Package cli is ghonce's command line: each verb parses flags into an
// options struct and calls a run function that does the work through the
// reconcile engine. Nothing here touches os.Stdout, the environment or the
// clock directly; they come in through IO.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/reconcile"
)

// Exit codes. Scripts depend on them; keep them stable.
const (
	ExitOK          = 0 // success: created, found or skipped
	ExitError       = 1 // an error: GitHub refused, a conflict, a broken ledger
	ExitUsage       = 2 // bad flags or input, a missing token
	ExitUnconfirmed = 3 // needs a rerun or a person: the outcome could not be confirmed
	ExitInProgress  = 4 // another process holds the same key
	ExitStale       = 5 // status --stale found attempting entries older than the limit
)

const exitCodesHelp = `Exit codes:
  0  success (created, found or skipped)
  1  error (GitHub refused, a conflict, a ledger that cannot be used)
  2  usage (bad flags or input, missing token)
  3  needs a rerun or a person (the outcome could not be confirmed)
  4  in progress elsewhere (another process holds the same key)
  5  stale entries (status --stale)`

// IO is what a command may touch of the outside world.
type IO struct {
	In         io.Reader
	Out, Err   io.Writer
	Getenv     func(string) string
	Now        func() time.Time
	Executable func() (string, error) // for demo, which re-runs this binary
}

// System returns the process's real IO.
func System() IO {
	return IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv, Now: time.Now, Executable: os.Executable}
}

// Main runs ghonce with args and returns the exit code.
func Main(ctx context.Context, args []string, sys IO) int {
	root := newRoot(sys)
	root.SetArgs(args)
	root.SetOut(sys.Out)
	root.SetErr(sys.Err)
	root.SetIn(sys.In)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	code := exitCode(err)
	var se *silentError
	if !errors.As(err, &se) {
		fmt.Fprintln(sys.Err, "ghonce: "+err.Error())
	}
	annotateForActions(sys, code, err)
	if code == ExitUsage && !strings.Contains(err.Error(), "--help") {
		fmt.Fprintln(sys.Err, "Run 'ghonce --help' for usage.")
	}
	return code
}

// usageError marks bad input (exit 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return &usageError{fmt.Errorf(format, args...)} }

// silentError carries an exit code for an outcome already reported.
type silentError struct{ code int }

func (e *silentError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func exitCode(err error) int {
	var (
		ue *usageError
		se *silentError
		uc *reconcile.UnconfirmedError
		ip *reconcile.InProgressError
	)
	switch {
	case errors.As(err, &se):
		return se.code
	case errors.As(err, &ue):
		return ExitUsage
	case errors.As(err, &uc):
		return ExitUnconfirmed
	case errors.As(err, &ip):
		return ExitInProgress
	case isCobraUsage(err):
		return ExitUsage
	}
	return ExitError
}

func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown flag", "unknown shorthand flag", "unknown command", "flag needs an argument", "invalid argument", "required flag", "accepts ", "requires at least", "if any flags in the group"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// global holds the flags every verb shares.
type global struct {
	ledgerPath   string
	repo         string
	task         string
	step         string
	json         bool
	wait         time.Duration
	settle       time.Duration
	trustAuthors []string
	trustLedger  bool
	app          appFlags
	errOut       io.Writer // where a derived default (the task in Actions) is reported
}

func newRoot(sys IO) *cobra.Command {
	g := &global{errOut: sys.Err}
	root := &cobra.Command{
		Use:   "ghonce",
		Short: "Make an agent's side effects on GitHub happen once per (task, step)",
		Long: `ghonce makes each side effect an agent performs on GitHub (a pull request, an
issue, a comment, a branch, a file, or any guarded command) happen once per
(task, step), across crashes, retries, lost local state and racing runners.

It records the intent in a durable ledger before acting, tags what it creates
so it can be found again, checks GitHub with consistent reads before creating,
and settles entries a crash left "attempting" against GitHub reality.

Environment:
  GH_TOKEN, GITHUB_TOKEN  token (GH_TOKEN wins)
  GITHUB_API_URL          API root (default https://api.github.com; GHES: https://HOST/api/v3)
  GH_REPO, GITHUB_REPOSITORY  default repository when --repo is not given
  GHONCE_TASK             default task when --task is not given
  GHONCE_LEDGER           ledger path (default $XDG_STATE_HOME/ghonce/ledger.db; in GitHub Actions $RUNNER_TEMP/ghonce/ledger.db)
  GHONCE_APP_ID, GHONCE_APP_PRIVATE_KEY(_FILE), GHONCE_APP_INSTALLATION_ID  authenticate as a GitHub App
  GITHUB_ACTIONS=true     inside a workflow: default task from workflow, job and issue/PR (else run id),
                          step outputs, a job-summary line, errors as ::error::/::warning:: commands

` + exitCodesHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return &usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&g.ledgerPath, "ledger", "", "ledger file (default $GHONCE_LEDGER, else $XDG_STATE_HOME/ghonce/ledger.db)")
	pf.StringVarP(&g.repo, "repo", "R", "", "repository OWNER/NAME (default $GH_REPO, else $GITHUB_REPOSITORY)")
	pf.StringVar(&g.task, "task", "", "task id: the unit of work (default $GHONCE_TASK)")
	pf.StringVar(&g.step, "step", "", "step within the task (default: the verb, e.g. pr-create)")
	pf.BoolVar(&g.json, "json", false, "print one JSON object on stdout")
	pf.DurationVar(&g.wait, "wait", 30*time.Second, "how long to wait for another process working on the same key")
	pf.DurationVar(&g.settle, "settle", 2*time.Second, "after a crashed or unconfirmed attempt, wait this long from its last ledger write before looking, so its requests in flight land first")
	pf.StringArrayVar(&g.trustAuthors, "trust-author", nil, "also count artifacts by this login as ours (repeatable), e.g. my-app[bot]")
	pf.BoolVar(&g.trustLedger, "trust-ledger", false, "create a key this established ledger has never seen without looking on GitHub first: only when every run of these tasks uses this ledger (README: When ghonce trusts the ledger)")
	g.app.add(pf)

	f := &factory{sys: sys, g: g}
	root.AddCommand(
		newCmdPR(f), newCmdIssue(f), newCmdBranch(f), newCmdFile(f), newCmdExec(f, nil),
		newCmdInit(f, nil), newCmdReconcile(f, nil), newCmdResolve(f, nil), newCmdStatus(f, nil), newCmdKey(f, nil), newCmdDemo(f, nil),
		newCmdMCP(f, nil),
	)
	return root
}

// repoOrEnv resolves the repository from --repo, GH_REPO, GITHUB_REPOSITORY.
func (g *global) repoOrEnv(getenv func(string) string) (string, error) {
	for _, r := range []string{g.repo, getenv("GH_REPO"), getenv("GITHUB_REPOSITORY")} {
		if r != "" {
			return r, nil
		}
	}
	return "", usagef("no repository: pass --repo OWNER/NAME or set GH_REPO")
}

// taskOrEnv resolves the task from --task, GHONCE_TASK.
func (g *global) taskOrEnv(getenv func(string) string) (string, error) {
	t := g.task
	if t == "" {
		t = getenv("GHONCE_TASK")
	}
	if t == "" {
		var err error
		if t, err = g.actionsTask(getenv); err != nil {
			return "", err
		}
	}
	if strings.TrimSpace(t) == "" {
		return "", usagef("no task: pass --task ID or set GHONCE_TASK (an id that names the work, never a time or a random value)")
	}
	return t, nil
}

// filterHelp tells the ledger verbs' users where their filters come from.
const filterHelp = `
Only --repo and --task narrow it. GH_REPO, GITHUB_REPOSITORY and GHONCE_TASK
name the action an acting verb performs; they never narrow a view of the
ledger, which would hide entries without a word (a guarded command's entry
has no repository, and GitHub Actions sets GITHUB_REPOSITORY on every run).
`

// filter is the entry filter of the ledger verbs (reconcile, status), from
// --repo and --task only: see filterHelp.
func (g *global) filter() (reconcile.Filter, error) {
	if g.repo != "" {
		if _, err := parseRepo(g.repo); err != nil {
			return reconcile.Filter{}, err
		}
	}
	return reconcile.Filter{Repo: g.repo, Task: g.task}, nil
}

func (g *global) stepOr(def string) string {
	if g.step != "" {
		return g.step
	}
	return def
}
