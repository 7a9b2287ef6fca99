package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/reconcile"
)

// keyOptions is `ghonce key`.
type keyOptions struct {
	f            *factory
	Repo         repoFlag
	Task         taskFlag
	Step         stepFlag
	JSON         bool
	Kind, Target string
}

func newCmdKey(f *factory, runF func(*keyOptions) error) *cobra.Command {
	opts := &keyOptions{f: f}
	c := &cobra.Command{
		Use:   "key --task T [--step S] --kind K [--repo O/R] [--target X]",
		Short: "Print the key of an action, for scripts",
		Long: `Print the key ghonce derives for an action. The target is the kind's part of
the identity: the base branch for pr, the issue number for comment, the branch
name for branch, BRANCH:PATH for file (the default branch's name for a file
put without --branch), --target for exec, empty for issue.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return runOr(c.Context(), opts, runF, keyRun)
		},
	}
	c.Flags().StringVar(&opts.Kind, "kind", reconcile.PR{}.Kind(), "kind: "+strings.Join(kinds.All(), ", "))
	c.Flags().StringVar(&opts.Target, "target", "", "the kind's target (see above)")
	addRepoFlag(c, &opts.Repo)
	addTaskFlag(c, &opts.Task)
	addStepFlag(c, &opts.Step, "")
	addJSONFlag(c, &opts.JSON)
	return c
}

func keyRun(_ context.Context, opts *keyOptions) error {
	f := opts.f
	task, err := opts.Task.orEnv(f.sys.Getenv, f.sys.Err)
	if err != nil {
		return err
	}
	repo := ""
	if kinds.OnGitHub(opts.Kind) {
		if repo, err = opts.Repo.orEnv(f.sys.Getenv); err != nil {
			return err
		}
	}
	// Through the acting verbs' door: a target they refuse is refused.
	key, err := kinds.KeyOfTarget(opts.Kind, opts.Target, task, string(opts.Step), repo)
	if err != nil {
		return effect.Named(err, keyFlag)
	}
	if opts.JSON {
		return f.writeJSON(keyJSON{outcomeJSON: succeeded(), Key: key})
	}
	fmt.Fprintln(f.sys.Out, key)
	return nil
}

// keyFlag is the flag of `ghonce key` that carries field: the target is
// every field of the kind's that its key depends on.
func keyFlag(field string) string {
	switch field {
	case "task", "step", "repo", "kind":
		return flagName(field)
	}
	return "--target"
}
