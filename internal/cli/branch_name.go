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
	f    *factory
	Repo repoFlag
	Task taskFlag
	Step stepFlag
	JSON bool
}

func newCmdBranchName(f *factory, runF func(*branchNameOptions) error) *cobra.Command {
	opts := &branchNameOptions{f: f}
	c := &cobra.Command{
		Use:   "name --task T [--step S]",
		Short: "Print a deterministic branch name for a task, for agents that push with git",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runOr(c.Context(), opts, runF, branchNameRun)
		},
	}
	addRepoFlag(c, &opts.Repo)
	addTaskFlag(c, &opts.Task)
	addStepFlag(c, &opts.Step, "default: branch")
	addJSONFlag(c, &opts.JSON)
	return c
}

func branchNameRun(_ context.Context, opts *branchNameOptions) error {
	f := opts.f
	task, err := opts.Task.orEnv(f.sys.Getenv, f.sys.Err)
	if err != nil {
		return err
	}
	repo, _ := opts.Repo.orEnv(f.sys.Getenv)
	name := taskkey.BranchName(taskkey.Identity{Task: task, Step: opts.Step.or("branch"), Kind: reconcile.Branch{}.Kind(), Repo: repo})
	if opts.JSON {
		return f.writeJSON(branchNameJSON{outcomeJSON: succeeded(), Branch: name})
	}
	fmt.Fprintln(f.sys.Out, name)
	return nil
}
