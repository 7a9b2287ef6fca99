package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/reconcile"
)

// filePutOptions is `ghonce file put`.
type filePutOptions struct {
	f           *factory
	Act         actFlags
	File        reconcile.File
	Content     string
	ContentSet  bool   // --content was given (empty content is content)
	ContentFile string // a path, or "-" for standard input
}

func newCmdFilePut(f *factory, runF func(*filePutOptions) error) *cobra.Command {
	opts := &filePutOptions{f: f}
	c := &cobra.Command{
		Use:   "put PATH [--branch B] --message M (--content S | --content-file F)",
		Short: "Write a file on a branch through the contents API, once per (task, step)",
		Long: `Write a file on a branch once per (task, step, repository, branch, path).

It counts as done when the file on the branch already has exactly the intended
content (git blob hashes, computed locally); different content means not yet.

Without --branch, the file goes to the repository's default branch, read from
GitHub first; the key is the same as with --branch set to that branch (ghonce
key --kind file --target BRANCH:PATH prints it).

` + exitCodesHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.File.Path = args[0]
			opts.ContentSet = c.Flags().Changed("content")
			return runOr(c.Context(), opts, runF, filePutRun)
		},
	}
	c.Flags().StringVar(&opts.File.Branch, "branch", "", "branch to commit to (default: the repository's default branch)")
	c.Flags().StringVarP(&opts.File.Message, "message", "m", "", "commit message (required)")
	c.Flags().StringVar(&opts.Content, "content", "", "file content")
	c.Flags().StringVar(&opts.ContentFile, "content-file", "", `read the content from a file ("-" for standard input)`)
	c.Flags().StringVar(&opts.File.Replaces, "replaces", "", "blob SHA of the file as you read it: refuse to write if it has changed since (default: replace whatever is there)")
	addActFlags(c, &opts.Act)
	return c
}

func filePutRun(ctx context.Context, opts *filePutOptions) error {
	fs := opts.File
	switch {
	case opts.ContentSet && opts.ContentFile != "":
		return usagef("give only one of --content or --content-file")
	case opts.ContentSet:
		fs.Content = []byte(opts.Content)
	case opts.ContentFile != "":
		data, err := readPathOrStdin("--content-file", "content", opts.ContentFile, opts.f.sys.In)
		if err != nil {
			return err
		}
		fs.Content = data
	default:
		return usagef("no content: %s", wordsFor(opts.f.sys.Getenv).Set(effect.Option{Name: "content"}))
	}
	return runAction(ctx, actOptions{f: opts.f, flags: opts.Act, spec: fs})
}
