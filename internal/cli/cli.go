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
	"github.com/spf13/pflag"

	"github.com/ghonce/ghonce/internal/failure"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
)

// Exit codes. Scripts depend on them; keep them stable. They live in
// package failure, with the mapping from an error to its code.
const (
	ExitOK          = failure.ExitOK
	ExitError       = failure.ExitError
	ExitUsage       = failure.ExitUsage
	ExitUnconfirmed = failure.ExitUnconfirmed
	ExitInProgress  = failure.ExitInProgress
	ExitStale       = failure.ExitStale
	ExitDuplicates  = failure.ExitDuplicates
)

const exitCodesHelp = `Exit codes:
  0  success (created, found or skipped)
  1  error (GitHub refused, a conflict, a ledger that cannot be used)
  2  usage (bad flags or input, missing token)
  3  needs a rerun or a person (the outcome could not be confirmed)
  4  in progress elsewhere (another process holds the same key)
  5  stale entries (status --stale)
  6  open duplicates (audit)`

// IO is what a command may touch of the outside world.
type IO struct {
	In         io.Reader
	Out, Err   io.Writer
	Getenv     func(string) string
	Now        func() time.Time
	Executable func() (string, error) // for demo, which re-runs this binary
	// IsTerminal reports whether one of the streams above is a terminal
	// (nil: an *os.File on one); tests inject it.
	IsTerminal func(stream any) bool
}

// System returns the process's real IO.
func System() IO {
	return IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv, Now: time.Now, Executable: os.Executable}
}

// Main runs ghonce with args and returns the exit code. With --json,
// stdout carries exactly one JSON object whatever the outcome: the verb's
// on success (and on the exits a verb reports itself: status --stale,
// reconcile with entries left unsettled), else a failure.Failure.
func Main(ctx context.Context, args []string, sys IO) int {
	root, g := newRoot(sys)
	root.SetArgs(args)
	root.SetOut(sys.Out)
	root.SetErr(sys.Err)
	root.SetIn(sys.In)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	err = lookupError(cmd, err)
	var se *silentError
	if errors.As(err, &se) {
		annotateForActions(sys, se.code, err)
		return se.code
	}
	verb := ""
	if cmd != nil && cmd != root {
		verb = strings.TrimPrefix(cmd.CommandPath(), root.Name()+" ")
	}
	fail := failure.Describe(err, verb)
	fmt.Fprintln(sys.Err, "ghonce: "+fail.Error.Message)
	if fail.Key != "" && !strings.Contains(fail.Error.Message, fail.Key) {
		fmt.Fprintln(sys.Err, "ghonce: key "+fail.Key)
	}
	if (g.json || jsonRequested(args)) && takesJSON(verb) && !g.printedJSON {
		if jerr := encodeJSON(sys.Out, fail); jerr != nil {
			fmt.Fprintln(sys.Err, "ghonce: write JSON: "+jerr.Error())
		}
	}
	annotateForActions(sys, fail.ExitCode, err)
	if fail.ExitCode == ExitUsage && fail.Error.Kind == failure.Usage {
		fmt.Fprintf(sys.Err, "Run '%s --help' for usage.\n", strings.TrimSpace("ghonce "+verb))
	}
	return fail.ExitCode
}

// takesJSON reports whether verb prints JSON with --json (a usage error
// before any verb was found does too).
func takesJSON(verb string) bool {
	which, ok := verbFlags[verb]
	return !ok || which&flagJSON != 0
}

// jsonRequested reports whether --json is among args before "--", for a
// run whose flags failed to parse before --json was reached.
func jsonRequested(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "--json", "--json=true", "--json=1":
			return true
		}
	}
	return false
}

// usage marks err as bad input (exit 2).
func usage(err error) error { return &failure.UsageError{Err: err} }

func usagef(format string, args ...any) error { return failure.Usagef(format, args...) }

// silentError carries an exit code for an outcome the verb has reported
// itself, on stderr and (with --json) in its own object on stdout.
type silentError struct{ code int }

func (e *silentError) Error() string { return fmt.Sprintf("exit %d", e.code) }

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
	printedJSON  bool      // the run's one JSON object is out: a later failure adds none
	errOut       io.Writer // where a derived default (the task in Actions) is reported
}

func newRoot(sys IO) (*cobra.Command, *global) {
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
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usage(err) })
	addVersion(root)

	f := &factory{sys: sys, g: g}
	root.AddCommand(
		newCmdPR(f), newCmdIssue(f), newCmdBranch(f), newCmdFile(f), newCmdExec(f, nil),
		newCmdInit(f, nil), newCmdReconcile(f, nil), newCmdResolve(f, nil), newCmdStatus(f, nil), newCmdKey(f, nil), newCmdDemo(f, nil),
		newCmdMCP(f, nil), newCmdVersion(f), newCmdLabels(f), newCmdAudit(f, nil), newCmdShim(f),
	)
	// Each verb's help lists only the shared flags it reads. The others
	// are still accepted, hidden, so a wrapper that passes --repo to every
	// call keeps working; giving one says on stderr that it does nothing.
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() && c != root {
			which, ok := verbFlags[strings.TrimPrefix(c.CommandPath(), root.Name()+" ")]
			if !ok {
				which = flagsActing // a verb not in the table yet: offer everything
			}
			g.addFlags(c.Flags())
			hideUnused(c.Flags(), which)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	typeArgErrors(root)
	// Before the verb too (`ghonce --json pr create`), as in earlier
	// releases: hidden on the root, where they never show in help.
	g.addFlags(root.PersistentFlags())
	hideUnused(root.PersistentFlags(), 0)
	root.PersistentPreRun = func(c *cobra.Command, _ []string) {
		c.Flags().Visit(func(fl *pflag.Flag) {
			if fl.Hidden && sharedFlag(fl.Name) {
				fmt.Fprintf(sys.Err, "ghonce: --%s has no effect on '%s'; ignored\n", fl.Name, c.CommandPath())
			}
		})
	}
	return root, g
}

// sharedFlags selects the flags several verbs share.
type sharedFlags uint

const (
	flagLedger sharedFlags = 1 << iota
	flagRepo
	flagTask
	flagStep
	flagJSON
	flagWait
	flagSettle
	flagTrust // --trust-author
	flagApp   // --app-id, --app-private-key-file, --app-installation-id
	flagTrustLedger

	flagsGitHub = flagTrust | flagApp
	flagsActing = flagLedger | flagRepo | flagTask | flagStep | flagJSON | flagWait | flagSettle | flagsGitHub | flagTrustLedger
)

// verbFlags says which shared flags each verb reads.
var verbFlags = map[string]sharedFlags{
	"pr create":     flagsActing,
	"pr comment":    flagsActing,
	"issue create":  flagsActing,
	"issue comment": flagsActing,
	"branch create": flagsActing,
	"file put":      flagsActing,
	"exec":          flagLedger | flagTask | flagStep | flagJSON | flagWait | flagSettle,
	"init":          flagLedger | flagJSON,
	"reconcile":     flagLedger | flagRepo | flagTask | flagJSON | flagSettle | flagsGitHub,
	"resolve":       flagLedger | flagJSON,
	"status":        flagLedger | flagRepo | flagTask | flagJSON,
	"key":           flagRepo | flagTask | flagStep | flagJSON,
	"branch name":   flagRepo | flagTask | flagStep | flagJSON,
	"mcp":           flagLedger | flagRepo | flagTask | flagWait | flagSettle | flagsGitHub | flagTrustLedger,
	"audit":         flagLedger | flagRepo | flagJSON | flagWait | flagSettle | flagsGitHub,
	"demo":          0,
	"shim":          0,
	"version":       flagJSON,

	// Off the hot path: key labels' description (docs/design/wire.md).
	"labels describe": flagRepo | flagJSON | flagsGitHub,
}

// sharedFlagNames maps each shared flag to its bit.
var sharedFlagNames = map[string]sharedFlags{
	"ledger": flagLedger, "repo": flagRepo, "task": flagTask, "step": flagStep, "json": flagJSON,
	"wait": flagWait, "settle": flagSettle, "trust-author": flagTrust, "trust-ledger": flagTrustLedger,
	"app-id": flagApp, "app-private-key-file": flagApp, "app-installation-id": flagApp,
}

func sharedFlag(name string) bool { _, ok := sharedFlagNames[name]; return ok }

// hideUnused hides the shared flags outside which from the help.
func hideUnused(fs *pflag.FlagSet, which sharedFlags) {
	for name, bit := range sharedFlagNames {
		if which&bit == 0 {
			_ = fs.MarkHidden(name)
		}
	}
}

// addFlags defines every shared flag on fs; hideUnused then hides, per verb,
// those it does not read.
func (g *global) addFlags(fs *pflag.FlagSet) {
	fs.Var(ledgerValue{&g.ledgerPath}, "ledger", "ledger file (default $GHONCE_LEDGER, else $XDG_STATE_HOME/ghonce/ledger.db)")
	fs.StringVarP(&g.repo, "repo", "R", "", "repository OWNER/NAME (default $GH_REPO, else $GITHUB_REPOSITORY)")
	fs.StringVar(&g.task, "task", "", "task id: the unit of work (default $GHONCE_TASK)")
	fs.StringVar(&g.step, "step", "", "step within the task (default: the verb, e.g. pr-create)")
	fs.BoolVar(&g.json, "json", false, "print one JSON object on stdout, whatever the outcome")
	fs.DurationVar(&g.wait, "wait", 30*time.Second, "how long to wait for another process working on the same key")
	fs.DurationVar(&g.settle, "settle", reconcile.DefaultSettle, "after an attempt that died or was unconfirmed with its create in flight, wait this long from the moment that create was sent (GitHub's 10s request limit plus a margin) before concluding it does not exist; an attempt that sent nothing costs no wait")
	fs.StringArrayVar(&g.trustAuthors, "trust-author", nil, "also count artifacts by this login as ours (repeatable), e.g. my-app[bot]")
	g.app.add(fs)
	fs.BoolVar(&g.trustLedger, "trust-ledger", false, "create a key this established ledger has never seen without looking on GitHub first: only when every run of these tasks uses this ledger (docs/guide/rate-limits.md)")
}

// repoOrEnv resolves the repository from --repo, GH_REPO, GITHUB_REPOSITORY,
// in any form gh takes (see repoRef), as OWNER/NAME.
func (g *global) repoOrEnv(getenv func(string) string) (string, error) {
	for _, r := range []string{g.repo, getenv("GH_REPO"), getenv("GITHUB_REPOSITORY")} {
		if strings.TrimSpace(r) != "" {
			return repoRef(r, getenv("GITHUB_API_URL"))
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
func (g *global) filter(getenv func(string) string) (reconcile.Filter, error) {
	repo := g.repo
	if strings.TrimSpace(repo) != "" {
		var err error
		if repo, err = repoRef(repo, getenv("GITHUB_API_URL")); err != nil {
			return reconcile.Filter{}, err
		}
	}
	task := g.task
	if task != "" {
		// The one rule for ids: " T-1" and "T-1\n" narrow to T-1, as the
		// ledger stores it; "T-1\nT-2" is a usage error.
		if err := taskkey.CheckID("task", task); err != nil {
			return reconcile.Filter{}, usage(err)
		}
		task = taskkey.CleanID(task)
	}
	return reconcile.Filter{Repo: repo, Task: task}, nil
}

func (g *global) stepOr(def string) string {
	if g.step != "" {
		return g.step
	}
	return def
}
