package cli

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/store"
	"github.com/ghonce/ghonce/offgithub"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
)

// reconcileOptions is `ghonce reconcile`. Its filters come from --repo and
// --task only: see FilterFlags.
type reconcileOptions struct {
	f      *cmdutil.Factory
	Ledger cmdutil.LedgerFlag
	Filter cmdutil.FilterFlags
	JSON   bool
	Engine cmdutil.EngineFlags // --settle
	GitHub cmdutil.GitHubFlags
}

func newCmdReconcile(f *cmdutil.Factory, runF func(*reconcileOptions) error) *cobra.Command {
	opts := &reconcileOptions{f: f, Engine: cmdutil.NewEngineFlags()}
	c := &cobra.Command{
		Use:   "reconcile [--repo O/R] [--task T] [--json]",
		Short: "Settle entries a crash left attempting, against GitHub; never creates anything",
		Long: `Settle every "attempting" entry (optionally of one repository or task):
found on GitHub → done; absent → failed, so the next run creates it; GitHub
could not answer, or another live process holds it → stays attempting.

reconcile only reads GitHub. Run it after a crash, before restarting agents.
` + cmdutil.FilterHelp + `
Exit 0 when nothing is left unsettled, 3 when something still needs a rerun
or a person.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return cmdutil.RunOr(c.Context(), opts, runF, reconcileRun)
		},
	}
	cmdutil.AddLedgerFlag(c, &opts.Ledger)
	cmdutil.AddFilterFlags(c, &opts.Filter)
	cmdutil.AddJSONFlag(c, &opts.JSON)
	cmdutil.AddSettleFlag(c, &opts.Engine.Settle)
	cmdutil.AddGitHubFlags(c, &opts.GitHub)
	return c
}

func reconcileRun(ctx context.Context, opts *reconcileOptions) error {
	f := opts.f
	filter, err := opts.Filter.Filter(f.IO.Getenv)
	if err != nil {
		return err
	}
	filter.Repo = f.NarrowIn(opts.Ledger, filter.Repo)
	l, err := f.OpenLedgerWith(ctx, opts.Ledger, store.Options{Create: store.CreateNever}, opts.Filter.Repo, nil)
	if err != nil {
		return err
	}
	defer l.Close()
	// Guarded commands need no token; ask for one only when an attempting
	// entry is a GitHub kind.
	pending, err := l.List(ctx, ledger.ListParams{Task: filter.Task, Repo: filter.Repo, Status: ledger.Attempting})
	if err != nil {
		return fmt.Errorf("list ledger: %w", err)
	}
	var gh reconcile.GitHub
	var client *ghcheck.Client
	for _, e := range pending {
		if kinds.OnGitHub(e.Kind) {
			// --repo narrows the view; it also finds a GitHub App's
			// installation, as in every verb that reads it.
			if client, err = f.GitHubOn(ctx, opts.GitHub, opts.Filter.Repo, l); err != nil {
				return err
			}
			gh = client
			break
		}
	}
	bar := &progress{w: f.IO.Err, what: "reconcile"}
	// Each engine settles its own kinds: a command's entries by its
	// --check, the rest on GitHub.
	off, err := f.OffEngine(l, f.IO.Err, opts.Engine).Reconcile(ctx, offgithub.Filter{Repo: filter.Repo, Task: filter.Task})
	var out []outcome.Settlement
	if err == nil {
		filter.Kind = kinds.OnGitHub
		out, err = f.Engine(l, gh, opts.Engine, func(c *reconcile.Config) { c.Progress = bar }).Reconcile(ctx, filter)
	}
	out = append(off, out...)
	bar.Finish()
	if err != nil {
		return err
	}
	t := tallyOf(out)
	unsettled := t.left
	if opts.JSON {
		res := reconcileJSON{OutcomeJSON: cmdutil.Succeeded(), Settled: out, Unsettled: unsettled}
		if out == nil {
			res.Settled = []outcome.Settlement{}
		}
		if unsettled > 0 {
			res.OutcomeJSON = cmdutil.OutcomeJSON{ExitCode: failure.ExitUnconfirmed}
			res.Error = &failure.Error{Kind: failure.Unconfirmed, Message: fmt.Sprintf("%d %s could not be settled: GitHub could not answer, or another process holds %s", unsettled, cmdutil.Plural(unsettled, "entry", "entries"), cmdutil.Plural(unsettled, "it", "them"))}
			res.Next = failure.Next(failure.Unconfirmed, "")
		}
		if err := f.WriteJSON(res); err != nil {
			return err
		}
	} else {
		if len(out) == 0 {
			fmt.Fprintln(f.IO.Err, "ghonce: nothing to reconcile")
		}
		w := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
		for _, s := range out {
			fmt.Fprintf(w, "%s\t%s\t%s/%s\t%s → %s\t%s\t%s\n", s.Key, s.Kind, s.Task, s.Step, s.From, s.To, s.URL, s.Why)
		}
		_ = w.Flush()
	}
	fmt.Fprintln(f.IO.Err, "ghonce: "+summarize(t, client))
	if unsettled > 0 {
		return &cmdutil.SilentError{Code: failure.ExitUnconfirmed}
	}
	return nil
}
