package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/store"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
)

func newCmdLabels(f *cmdutil.Factory) *cobra.Command {
	return noun(&cobra.Command{Use: "labels", Short: "The ghonce:KEY labels on GitHub: describe, prune"},
		newCmdLabelsDescribe(f, nil), newCmdLabelsPrune(f, nil))
}

// labelsDescribeOptions is `ghonce labels describe`.
type labelsDescribeOptions struct {
	f      *cmdutil.Factory
	Repo   cmdutil.RepoFlag
	JSON   bool
	GitHub cmdutil.GitHubFlags
}

func newCmdLabelsDescribe(f *cmdutil.Factory, runF func(*labelsDescribeOptions) error) *cobra.Command {
	opts := &labelsDescribeOptions{f: f}
	c := &cobra.Command{
		Use:   "describe [--repo O/R] [--json]",
		Short: "Give the repository's ghonce:KEY labels their description",
		Long: `Give every ghonce:KEY label of the repository that has no description one
saying what it is and that it can go once the work has settled, in the key
label's neutral colour.

ghonce spends no request on a key label when it creates: GitHub makes the
label as the issue or pull request is created or labelled with it, in the
same colour but without a description. Run this off the hot path (after a
batch of work, or from a scheduled workflow); it reads the repository's
labels and changes only bare key labels, one request each. Never needed for
ghonce to work.

Prints how many labels it changed on stderr; --json prints {"described": N}.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return cmdutil.RunOr(c.Context(), opts, runF, labelsDescribeRun)
		},
	}
	cmdutil.AddRepoFlag(c, &opts.Repo)
	cmdutil.AddJSONFlag(c, &opts.JSON)
	cmdutil.AddGitHubFlags(c, &opts.GitHub)
	return c
}

func labelsDescribeRun(ctx context.Context, opts *labelsDescribeOptions) error {
	f := opts.f
	name, err := opts.Repo.OrEnv(f.IO.Getenv)
	if err != nil {
		return err
	}
	r, err := cmdutil.ParseRepo(name)
	if err != nil {
		return err
	}
	gh, err := f.GitHub(ctx, opts.GitHub, opts.Repo)
	if err != nil {
		return err
	}
	n, err := gh.DescribeKeyLabels(ctx, r)
	fmt.Fprintf(f.IO.Err, "ghonce: described %d key labels in %s\n", n, r)
	if err != nil {
		return fmt.Errorf("labels describe: %w", err)
	}
	if opts.JSON {
		return f.WriteJSON(struct {
			cmdutil.OutcomeJSON
			Described int `json:"described"`
		}{cmdutil.Succeeded(), n})
	}
	return nil
}

// labelsPruneOptions is `ghonce labels prune`.
type labelsPruneOptions struct {
	f         *cmdutil.Factory
	Ledger    cmdutil.LedgerFlag
	Filter    cmdutil.FilterFlags
	JSON      bool
	GitHub    cmdutil.GitHubFlags
	OlderThan string
	DryRun    bool
}

func newCmdLabelsPrune(f *cmdutil.Factory, runF func(*labelsPruneOptions) error) *cobra.Command {
	opts := &labelsPruneOptions{f: f}
	c := &cobra.Command{
		Use:   "prune --older-than AGE [--repo O/R] [--dry-run] [--json]",
		Short: "Delete the ghonce:KEY labels of pull requests and issues settled long ago",
		Long: `Delete from GitHub the ghonce:KEY label of every pull request and issue this
ledger has recorded as done more than AGE ago (30d, 12h, 90m). Labels of
entries that are not done, that are newer, or that this ledger does not know
are never touched. A deleted label leaves every artifact that carried it.

What the label buys, and what pruning gives up: with the ledger intact a
pruned key is still skipped (the ledger says done). Only if the ledger is
lost as well does a rerun have to find the artifact on GitHub, and then an
issue is no longer found (ghonce finds issues by their label: the rerun files
a second one); a pull request is still found by its head branch, or among the
100 most recent pull requests, and lost only when its head changed and more
than 100 pull requests were opened since. Choose AGE longer than any rerun
of that work can come.
` + cmdutil.FilterHelp + `
Prints each label it deletes (with --dry-run: would delete) on stdout, one
per line as REPO LABEL NUMBER; --json prints one object.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return cmdutil.RunOr(c.Context(), opts, runF, labelsPruneRun)
		},
	}
	c.Flags().StringVar(&opts.OlderThan, "older-than", "", "prune keys done longer ago than this: 30d, 12h, 90m (required)")
	c.Flags().BoolVar(&opts.DryRun, "dry-run", false, "list what would be deleted, delete nothing")
	cmdutil.AddLedgerFlag(c, &opts.Ledger)
	cmdutil.AddFilterFlags(c, &opts.Filter)
	cmdutil.AddJSONFlag(c, &opts.JSON)
	cmdutil.AddGitHubFlags(c, &opts.GitHub)
	return c
}

// prunedJSON is one label in `labels prune --json`.
type prunedJSON struct {
	Repo   string    `json:"repo"`
	Key    string    `json:"key"`
	Label  string    `json:"label"`
	Kind   string    `json:"kind"`
	Number int       `json:"number,omitempty"`
	DoneAt time.Time `json:"done_at"`
	// Deleted is false when GitHub had no such label (deleted before) or
	// with --dry-run.
	Deleted bool   `json:"deleted"`
	Error   string `json:"error,omitempty"`
}

type pruneJSON struct {
	DryRun bool         `json:"dry_run"`
	Before time.Time    `json:"before"`
	Labels []prunedJSON `json:"labels"`
}

// metaPruned names the meta value that records a pruned key's label, so
// the next prune does not ask GitHub about it again.
func metaPruned(key string) string { return "label_pruned:" + key }

func labelsPruneRun(ctx context.Context, opts *labelsPruneOptions) error {
	f := opts.f
	if opts.OlderThan == "" {
		return cmdutil.Usagef("labels prune: --older-than is required, e.g. --older-than 30d")
	}
	age, err := cmdutil.ParseAge(opts.OlderThan)
	if err != nil {
		return cmdutil.Usage(err)
	}
	filter, err := opts.Filter.Filter(f.IO.Getenv)
	if err != nil {
		return err
	}
	l, err := f.OpenLedgerWith(ctx, opts.Ledger, store.Options{Create: store.CreateNever}, opts.Filter.Repo, nil)
	if err != nil {
		return err
	}
	defer l.Close()
	// Ages on the ledger's clock, which dated the entries.
	now, err := l.Now(ctx)
	if err != nil {
		return err
	}
	before := now.Add(-age)
	entries, err := l.List(ctx, ledger.ListParams{Repo: filter.Repo, Task: filter.Task, Status: ledger.Done, UpdatedBefore: before})
	if err != nil {
		return fmt.Errorf("list ledger: %w", err)
	}
	out := pruneJSON{DryRun: opts.DryRun, Before: before.UTC(), Labels: []prunedJSON{}}
	var gh *ghcheck.Client
	failed := 0
	for _, e := range entries {
		// Only pull requests and issues carry the key's label.
		if !reconcile.CarriesKeyLabel(e.Kind) {
			continue
		}
		if _, err := l.GetMeta(ctx, metaPruned(e.Key)); err == nil {
			continue
		}
		p := prunedJSON{Repo: e.Repo, Key: e.Key, Label: taskkey.Label(e.Key), Kind: e.Kind, Number: e.Ref.Number, DoneAt: e.UpdatedAt.UTC()}
		if p.Repo == "" {
			// A repository ledger's claim names its repository by digest
			// only, which the listing matched against --repo.
			p.Repo = filter.Repo
		}
		if !opts.DryRun {
			if gh == nil {
				if gh, err = f.GitHub(ctx, opts.GitHub, opts.Filter.Repo); err != nil {
					return err
				}
			}
			r, err := ghcheck.ParseRepo(p.Repo)
			if err == nil {
				p.Deleted, err = gh.DeleteKeyLabel(ctx, r, e.Key)
			}
			if err != nil {
				failed++
				p.Error = err.Error()
				fmt.Fprintf(f.IO.Err, "ghonce: %v\n", err)
			} else if _, err := l.PutMeta(ctx, metaPruned(e.Key), f.IO.Now().UTC().Format(time.RFC3339), false); err != nil {
				return fmt.Errorf("labels prune: record %s as pruned: %w", p.Label, err)
			}
		}
		out.Labels = append(out.Labels, p)
		if !opts.JSON && p.Error == "" {
			fmt.Fprintf(f.IO.Out, "%s %s %d\n", p.Repo, p.Label, p.Number)
		}
	}
	if opts.JSON {
		if err := f.WriteJSON(out); err != nil {
			return err
		}
	}
	verb := "deleted"
	if opts.DryRun {
		verb = "would delete"
	}
	fmt.Fprintf(f.IO.Err, "ghonce: %s %d key labels of pull requests and issues done before %s\n", verb, len(out.Labels)-failed, before.UTC().Format(time.RFC3339))
	if failed > 0 {
		return &cmdutil.SilentError{Code: failure.ExitError}
	}
	return nil
}
