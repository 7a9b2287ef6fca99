package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/reconcile"
)

// prCreateOptions is `ghonce pr create`.
type prCreateOptions struct {
	f    *factory
	Act  actFlags
	PR   reconcile.PR
	Body bodyFlags
}

func newCmdPRCreate(f *factory, runF func(*prCreateOptions) error) *cobra.Command {
	opts := &prCreateOptions{f: f}
	c := &cobra.Command{
		Use:   "create --task T --base B --head H --title X (--body Y | --body-file F)",
		Short: "Open a pull request once per (task, step)",
		Long: `Open a pull request once per (task, step, repository, base).

The key does not include the head, title or body: a retry after a crash that
rewords the body or pushed to another branch gets the first pull request back
(outcome "found" or "skipped", payload_changed true, changed naming the fields
that differ), never a second one. --on-change says what then: auto (default,
or GHONCE_ON_CHANGE: a reworded retry is warned of, and a title that reads as
another pull request fails with exit 1, naming the first and the --step to
use; docs/design/same-act.md), warn (a warning, the pull request as it is),
fail (exit 1, nothing changed) or update (edit its title and body to this
run's; its head cannot move). A second pull request in the same task needs
its own --step.

Prints the pull request's URL on stdout; with --json one object with key,
outcome (created|found|skipped), number, url, payload_changed, changed and
updated.

` + exitCodesHelp,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			opts.Body.set = c.Flags().Changed("body")
			return runOr(c.Context(), opts, runF, prCreateRun)
		},
	}
	fl := c.Flags()
	fl.StringVarP(&opts.PR.Base, "base", "B", "", "branch to merge into (required)")
	fl.StringVarP(&opts.PR.Head, "head", "H", "", "branch with the changes, or OWNER:BRANCH for a fork (required)")
	fl.StringVarP(&opts.PR.Title, "title", "t", "", "title (required)")
	fl.BoolVarP(&opts.PR.Draft, "draft", "d", false, "open as a draft")
	fl.StringArrayVarP(&opts.PR.Labels, "label", "l", nil, "add a label (repeatable)")
	opts.Body.add(c)
	addActFlags(c, &opts.Act)
	return c
}

func prCreateRun(ctx context.Context, opts *prCreateOptions) error {
	return actWithBody(ctx, actOptions{f: opts.f, flags: opts.Act}, &opts.Body, func(body string) reconcile.Spec {
		p := opts.PR
		p.Body = body
		return p
	})
}
