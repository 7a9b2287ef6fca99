package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/offgithub"
)

// execOptions is `ghonce exec`.
type execOptions struct {
	f *cmdutil.Factory
	// Act holds the acting flags exec reads: not --trust-ledger or the
	// GitHub flags (a guarded command does not touch GitHub); --repo only
	// says where a repository ledger ("github") lives, never the key.
	Act  cmdutil.ActFlags
	Exec offgithub.Exec
	// dashAt is where "--" was among the arguments (-1: absent).
	dashAt int
}

func newCmdExec(f *cmdutil.Factory, runF func(*execOptions) error) *cobra.Command {
	opts := &execOptions{f: f, Act: cmdutil.ActFlags{Engine: cmdutil.NewEngineFlags()}}
	c := &cobra.Command{
		Use:   "exec --task T --step S [--check CMD] [--on-unconfirmed fail|retry] -- COMMAND [ARGS...]",
		Short: "Run a command with a side effect ghonce cannot see, once per (task, step)",
		Long: `Run COMMAND once per (task, step[, target]).

The key is exported to COMMAND (and to --check) as GHONCE_KEY: hand it to a
service that dedupes on it. Both inherit ghonce's environment except a
GHONCE_LEDGER that is a URL (it may hold the ledger's password): pass
--pass-ledger to hand it on. A ledger file path is passed on as it is. --check CMD is your "does it already exist?": exit
0 yes (its output is stored as the reference), exit 1 no, anything else
"cannot answer", and the command does not run: on an entry no attempt ran,
the run fails (exit 1) and the next asks again; after an attempt that may
have run, the entry stays unconfirmed (exit 3) until a check answers or
'ghonce resolve' settles it. Make the check answer 1, not an error, before
anything exists: grep exits 2 on a missing file, so write

  --check 'test -f sent.log && grep -qF "$GHONCE_KEY" sent.log'

rather than a bare grep, which would keep COMMAND from ever running.
ghonce stopped (SIGTERM, SIGINT) while any of
the command's processes still runs stops them and ends unconfirmed (exit 3),
never done. Without --check, an attempt that a crash left unconfirmed is settled
by --on-unconfirmed: fail (default: exit 3 and say how to settle it with
'ghonce resolve') or retry (for commands that are safe to repeat).

` + exitCodesHelp,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.dashAt = c.ArgsLenAtDash()
			opts.Exec.Argv = args
			return cmdutil.RunOr(c.Context(), opts, runF, execRun)
		},
	}
	c.Flags().StringVar(&opts.Exec.Check, "check", "", "shell command that exits 0 if the effect already exists, 1 if not")
	c.Flags().StringVar(&opts.Exec.OnUnconfirmed, "on-unconfirmed", offgithub.OnUnconfirmedFail, "what to do when an earlier attempt may have run: fail or retry")
	c.Flags().StringVar(&opts.Exec.Tgt, "target", "", "narrow the key, e.g. a recipient")
	c.Flags().BoolVar(&opts.Exec.PassLedger, "pass-ledger", false, "pass a GHONCE_LEDGER URL (and its password) on to COMMAND and --check")
	cmdutil.AddLedgerFlag(c, &opts.Act.Ledger)
	c.Flags().StringVarP((*string)(&opts.Act.Repo), "repo", "R", "", "with --ledger github: the repository that holds the claim (default $GH_REPO, else $GITHUB_REPOSITORY)")
	cmdutil.AddTaskFlag(c, &opts.Act.Task)
	cmdutil.AddStepFlag(c, &opts.Act.Step, "required")
	cmdutil.AddJSONFlag(c, &opts.Act.JSON)
	cmdutil.AddWaitFlag(c, &opts.Act.Engine.Wait)
	cmdutil.AddSettleFlag(c, &opts.Act.Engine.Settle)
	return c
}

func execRun(ctx context.Context, opts *execOptions) error {
	if opts.dashAt != 0 {
		return cmdutil.Usagef("put the command after --, e.g. ghonce exec --task T --step S -- ./notify.sh")
	}
	return cmdutil.RunAction(ctx, cmdutil.ActOptions{Factory: opts.f, Flags: opts.Act, Off: opts.Exec})
}
