package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/reconcile"
)

// keyOptions is `ghonce key`.
type keyOptions struct {
	f            *cmdutil.Factory
	Repo         cmdutil.RepoFlag
	Task         cmdutil.TaskFlag
	Step         cmdutil.StepFlag
	JSON         bool
	Kind, Target string
}

func newCmdKey(f *cmdutil.Factory, runF func(*keyOptions) error) *cobra.Command {
	opts := &keyOptions{f: f}
	c := &cobra.Command{
		Use:   "key --task T [--step S] --kind K [--repo O/R] [--target X]",
		Short: "Print the key of an action, for scripts",
		Long: `Print the key ghonce derives for an action. The target is the kind's part of
the identity: the base branch for pr, the issue number for comment, the pull
request number for review, the branch name for branch, BRANCH:PATH for file (the default branch's name for a file
put without --branch), --target for exec, empty for issue.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return cmdutil.RunOr(c.Context(), opts, runF, keyRun)
		},
	}
	c.Flags().StringVar(&opts.Kind, "kind", reconcile.PR{}.Kind(), "kind: "+strings.Join(kinds.All(), ", "))
	c.Flags().StringVar(&opts.Target, "target", "", "the kind's target (see above)")
	cmdutil.AddRepoFlag(c, &opts.Repo)
	cmdutil.AddTaskFlag(c, &opts.Task)
	cmdutil.AddStepFlag(c, &opts.Step, "")
	cmdutil.AddJSONFlag(c, &opts.JSON)
	return c
}

func keyRun(_ context.Context, opts *keyOptions) error {
	f := opts.f
	task, err := opts.Task.OrEnv(f.IO.Getenv, f.IO.Err)
	if err != nil {
		return err
	}
	repo := ""
	if kinds.OnGitHub(opts.Kind) {
		if repo, err = opts.Repo.OrEnv(f.IO.Getenv); err != nil {
			return err
		}
	}
	// Through the acting verbs' door: a target they refuse is refused.
	key, err := kinds.KeyOfTarget(opts.Kind, opts.Target, task, string(opts.Step), repo)
	if err != nil {
		return effect.Named(err, keyFlag)
	}
	if opts.JSON {
		return f.WriteJSON(keyJSON{OutcomeJSON: cmdutil.Succeeded(), Key: key})
	}
	fmt.Fprintln(f.IO.Out, key)
	return nil
}

// keyFlag is the flag of `ghonce key` that carries field: the target is
// every field of the kind's that its key depends on.
func keyFlag(field string) string {
	switch field {
	case "task", "step", "repo", "kind":
		return cmdutil.FlagName(field)
	}
	return "--target"
}
