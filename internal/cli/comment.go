package cli

import (
	"context"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/reconcile"
)

// commentOptions is `ghonce pr comment N` and `ghonce issue comment N`.
type commentOptions struct {
	f      *factory
	Act    actFlags
	Noun   string // "pr" or "issue": only the default step differs
	Number string // as given; checked by commentRun
	Body   bodyFlags
}

// newCmdComment is `ghonce pr comment N` and `ghonce issue comment N`: both
// are issue comments on GitHub and share the "comment" kind, so the key is the
// same whichever verb an agent uses.
func newCmdComment(f *factory, noun string, runF func(*commentOptions) error) *cobra.Command {
	opts := &commentOptions{f: f, Noun: noun}
	c := &cobra.Command{
		Use:   "comment NUMBER (--body Y | --body-file F)",
		Short: "Comment on a " + map[string]string{"pr": "pull request", "issue": "issue"}[noun] + " once per (task, step)",
		Long: `Post a comment once per (task, step, repository, number).

GitHub has no uniqueness for comments: ghonce puts a hidden marker with the
key on the comment's first line and, before posting, reads every page of the
thread for a comment by you that carries it. A retry with a reworded body gets
the first comment back.

` + exitCodesHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Number = args[0]
			opts.Body.set = c.Flags().Changed("body")
			return runOr(c.Context(), opts, runF, commentRun)
		},
	}
	opts.Body.add(c)
	addActFlags(c, &opts.Act)
	return c
}

func commentRun(ctx context.Context, opts *commentOptions) error {
	n, err := strconv.Atoi(opts.Number)
	if err != nil { // a number Prepare refuses (0) is its to word
		return usagef("invalid number %q: want the issue or pull request number, e.g. 42", opts.Number)
	}
	return actWithBody(ctx, actOptions{f: opts.f, flags: opts.Act}, &opts.Body, func(body string) reconcile.Spec {
		return reconcile.Comment{Number: n, Body: body}
	})
}
