package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
)

// branchNameOptions is `ghonce branch name`.
type branchNameOptions struct {
	f *factory
}

func newCmdBranchName(f *factory, runF func(*branchNameOptions) error) *cobra.Command {
	opts := &branchNameOptions{f: f}
	return &cobra.Command{
		Use:   "name --task T [--step S]",
		Short: "Print a deterministic branch name for a task, for agents that push with git",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runOr(c.Context(), opts, runF, branchNameRun)
		},
	}
}

func branchNameRun(_ context.Context, opts *branchNameOptions) error {
	f := opts.f
	task, err := f.g.taskOrEnv(f.sys.Getenv)
	if err != nil {
		return err
	}
	repo, _ := f.g.repoOrEnv(f.sys.Getenv)
	name := taskkey.BranchName(taskkey.Identity{Task: task, Step: f.g.stepOr("branch"), Kind: reconcile.Branch{}.Kind(), Repo: repo})
	if f.g.json {
		return f.writeJSON(branchNameJSON{outcomeJSON: succeeded(), Branch: name})
	}
	fmt.Fprintln(f.sys.Out, name)
	return nil
}
