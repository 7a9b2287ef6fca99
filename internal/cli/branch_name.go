package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
)

// branchNameOptions is `ghonce branch name`.
type branchNameOptions struct {
	f    *cmdutil.Factory
	Repo cmdutil.RepoFlag
	Task cmdutil.TaskFlag
	Step cmdutil.StepFlag
	JSON bool
}

func newCmdBranchName(f *cmdutil.Factory, runF func(*branchNameOptions) error) *cobra.Command {
	opts := &branchNameOptions{f: f}
	c := &cobra.Command{
		Use:   "name --task T [--step S]",
		Short: "Print a deterministic branch name for a task, for agents that push with git",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return cmdutil.RunOr(c.Context(), opts, runF, branchNameRun)
		},
	}
	cmdutil.AddRepoFlag(c, &opts.Repo)
	cmdutil.AddTaskFlag(c, &opts.Task)
	cmdutil.AddStepFlag(c, &opts.Step, "default: branch")
	cmdutil.AddJSONFlag(c, &opts.JSON)
	return c
}

func branchNameRun(_ context.Context, opts *branchNameOptions) error {
	f := opts.f
	task, err := opts.Task.OrEnv(f.IO.Getenv, f.IO.Err)
	if err != nil {
		return err
	}
	repo, _ := opts.Repo.OrEnv(f.IO.Getenv)
	name := taskkey.BranchName(taskkey.Identity{Task: task, Step: opts.Step.Or("branch"), Kind: reconcile.Branch{}.Kind(), Repo: repo})
	if opts.JSON {
		return f.WriteJSON(branchNameJSON{OutcomeJSON: cmdutil.Succeeded(), Branch: name})
	}
	fmt.Fprintln(f.IO.Out, name)
	return nil
}
