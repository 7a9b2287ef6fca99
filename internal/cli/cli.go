// Package cli is ghonce's command line: the command tree, which wires the
// programs (ghshim, mcpcmd, auditcmd, democmd) on the core they share
// (cmdutil), and the acting verbs and ledger commands. Each verb parses
// flags into an options struct and calls a run function that does the work
// through the reconcile engine. Nothing here touches os.Stdout, the
// environment or the clock directly; they come in through IO.
package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/internal/actions"
	"github.com/ghonce/ghonce/internal/cli/auditcmd"
	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/internal/cli/democmd"
	"github.com/ghonce/ghonce/internal/cli/ghshim"
	"github.com/ghonce/ghonce/internal/cli/mcpcmd"
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
type IO = cmdutil.IO

// System returns the process's real IO.
func System() IO { return cmdutil.System() }

// Main runs ghonce with args and returns the exit code. With --json,
// stdout carries exactly one JSON object whatever the outcome: the verb's
// on success (and on the exits a verb reports itself: status --stale,
// reconcile with entries left unsettled), else a failure.Failure.
func Main(ctx context.Context, args []string, sys IO) int {
	root, f := newRoot(sys)
	root.SetArgs(args)
	root.SetOut(sys.Out)
	root.SetErr(sys.Err)
	root.SetIn(sys.In)
	cmd, err := root.ExecuteContextC(ctx)
	f.CloseTelemetry()
	if err == nil {
		return failure.ExitOK
	}
	err = lookupError(cmd, err)
	var se *cmdutil.SilentError
	if errors.As(err, &se) {
		cmdutil.AnnotateForActions(sys, se.Code, err, nil, f.RunSecrets())
		return se.Code
	}
	verb := ""
	if cmd != nil && cmd != root {
		verb = strings.TrimPrefix(cmd.CommandPath(), root.Name()+" ")
	}
	fail := failure.Describe(err, verb, cmdutil.WordsFor(sys.Getenv))
	fail.Error.Message = actions.Scrub(fail.Error.Message, f.RunSecrets())
	fmt.Fprintln(sys.Err, "ghonce: "+fail.Error.Message)
	if fail.Key != "" && !strings.Contains(fail.Error.Message, fail.Key) {
		fmt.Fprintln(sys.Err, "ghonce: key "+fail.Key)
	}
	if (cmdutil.JSONGiven(cmd) || jsonRequested(args)) && cmdutil.TakesJSON(cmd) && !f.PrintedJSON {
		if jerr := cmdutil.EncodeJSON(sys.Out, fail); jerr != nil {
			fmt.Fprintln(sys.Err, "ghonce: write JSON: "+jerr.Error())
		}
	}
	cmdutil.AnnotateForActions(sys, fail.ExitCode, err, cmdutil.WordsFor(sys.Getenv), f.RunSecrets())
	if fail.ExitCode == failure.ExitUsage && fail.Error.Kind == failure.Usage {
		fmt.Fprintf(sys.Err, "Run '%s --help' for usage.\n", strings.TrimSpace("ghonce "+verb))
	}
	return fail.ExitCode
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

func newRoot(sys IO) (*cobra.Command, *cmdutil.Factory) {
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
  GHONCE_SETTLE           default of --settle, a Go duration (15s; 0 waits not at all)
  GHONCE_METRICS_FILE     add each run's counters to this Prometheus textfile (node_exporter's textfile collector)
  OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_*  export a trace of each action with OTLP/HTTP (off when unset)
  GHONCE_ON_CHANGE        default of --on-change (auto), also for the gh shim, the MCP tools and guard
  GHONCE_TRUST_AUTHOR     default of --trust-author, logins separated by commas, also for the gh shim
  GHONCE_APP_ID, GHONCE_APP_PRIVATE_KEY(_FILE), GHONCE_APP_INSTALLATION_ID  authenticate as a GitHub App
  GITHUB_ACTIONS=true     inside a workflow: default task from workflow, job and issue/PR (else run id),
                          step outputs, a job-summary line, errors as ::error::/::warning:: commands

` + exitCodesHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return cmdutil.Usage(err) })
	addVersion(root)

	f := &cmdutil.Factory{IO: sys, Version: readVersion().Version}
	root.AddCommand(newCmdNouns(f)...)
	root.AddCommand(
		newCmdExec(f, nil),
		newCmdInit(f, nil), newCmdReconcile(f, nil), newCmdResolve(f, nil), newCmdStatus(f, nil), newCmdKey(f, nil), democmd.NewCmdDemo(f, nil),
		mcpcmd.NewCmdMCP(f, nil), newCmdVersion(f, nil), newCmdLabels(f), auditcmd.NewCmdAudit(f, nil), ghshim.NewCmdShim(f), newCmdPrune(f, nil),
	)
	// `ghonce` alone shows its help; given flags but no command (`ghonce
	// --json`), it is a usage error, as a noun without a verb is.
	root.RunE = func(c *cobra.Command, args []string) error {
		if c.Flags().NFlag() == 0 {
			return c.Help()
		}
		return noVerb(c, args)
	}
	typeArgErrors(root)
	cmdutil.AddWrapperFlags(root)
	root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
		if !c.HasSubCommands() { // a group without its command is refused anyway (noVerb)
			cmdutil.WarnIgnored(root, c, sys.Err)
		}
		if err := cmdutil.OnChangeDefault(c, sys.Getenv); err != nil {
			return err
		}
		if err := cmdutil.TrustDefault(c, sys.Getenv); err != nil {
			return err
		}
		return cmdutil.SettleDefault(c, sys.Getenv)
	}
	return root, f
}

// GhMain runs ghonce invoked as gh, through `ghonce shim DIR` (package
// ghshim), and returns the exit code.
func GhMain(ctx context.Context, argv []string, sys IO) int {
	return ghshim.Main(ctx, argv, sys, readVersion().Version)
}
