package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/reconcile"
)

// issueCreateOptions is `ghonce issue create`.
type issueCreateOptions struct {
	f     *factory
	Act   actFlags
	Issue reconcile.Issue
	Body  bodyFlags
}

func newCmdIssueCreate(f *factory, runF func(*issueCreateOptions) error) *cobra.Command {
	opts := &issueCreateOptions{f: f}
	c := &cobra.Command{
		Use:   "create --task T --title X (--body Y | --body-file F) [--label L]...",
		Short: "File an issue once per (task, step)",
		Long: `File an issue once per (task, step, repository).

The issue carries the label ghonce:<key> (set when it is created) and a hidden
marker with the key; both are looked for before filing.

` + exitCodesHelp,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			opts.Body.set = c.Flags().Changed("body")
			return runOr(c.Context(), opts, runF, issueCreateRun)
		},
	}
	c.Flags().StringVarP(&opts.Issue.Title, "title", "t", "", "title (required)")
	c.Flags().StringArrayVarP(&opts.Issue.Labels, "label", "l", nil, "add a label (repeatable)")
	opts.Body.add(c)
	addActFlags(c, &opts.Act)
	return c
}

func issueCreateRun(ctx context.Context, opts *issueCreateOptions) error {
	return actWithBody(ctx, actOptions{f: opts.f, flags: opts.Act}, &opts.Body, func(body string) reconcile.Spec {
		is := opts.Issue
		is.Body = body
		return is
	})
}
