package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/reconcile"
)

// branchCreateOptions is `ghonce branch create`.
type branchCreateOptions struct {
	f      *factory
	Act    actFlags
	Branch reconcile.Branch
	From   string // a ref to resolve on GitHub instead of --sha
}

func newCmdBranchCreate(f *factory, runF func(*branchCreateOptions) error) *cobra.Command {
	opts := &branchCreateOptions{f: f}
	c := &cobra.Command{
		Use:   "create NAME [--sha SHA | --from REF]",
		Short: "Create a branch once per (task, step)",
		Long: `Create a branch once per (task, step, repository, name).

The branch is found by an exact ref read. If it exists at the intended commit,
or at a commit that descends from it, it counts as done; a branch of that name
at an unrelated commit is someone else's: exit 1, never adopted.

--from REF is resolved on GitHub while the branch is looked for (one round
trip for both); the commit REF names then is recorded in the ledger before the
branch is created. A rerun resolves REF again, never starting from a commit the
ledger recorded: a branch an earlier attempt made at REF's head of then (which
REF's head now descends from) is found; one it did not make is created at REF's
head now.
With neither --sha nor --from, the branch starts from the default branch.

` + exitCodesHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Branch.Name = args[0]
			return runOr(c.Context(), opts, runF, branchCreateRun)
		},
	}
	c.Flags().StringVar(&opts.Branch.SHA, "sha", "", "commit the branch points at")
	c.Flags().StringVar(&opts.From, "from", "", "branch, tag or commit to start from (resolved on GitHub)")
	addActFlags(c, &opts.Act)
	return c
}

func branchCreateRun(ctx context.Context, opts *branchCreateOptions) error {
	b := opts.Branch
	if b.SHA != "" && opts.From != "" {
		return usagef("give --sha SHA or --from REF, not both")
	}
	// --from is resolved on GitHub while the branch is looked for, in the
	// same round trip; the commit chosen is recorded before the create,
	// and a rerun starts from it (reconcile.Branch).
	b.From = opts.From
	return runAction(ctx, actOptions{f: opts.f, flags: opts.Act, spec: b})
}
