package cli

import (
	"context"
	"errors"
	"fmt"
	"os/user"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/store"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/taskkey"
)

// resolveOptions is `ghonce resolve`.
type resolveOptions struct {
	f           *cmdutil.Factory
	Ledger      cmdutil.LedgerFlag
	Repo        cmdutil.RepoFlag // where the ledger "github" lives
	JSON        bool
	Key         string
	Done, Retry bool
	Force       bool
	Ref, Note   string
}

func newCmdResolve(f *cmdutil.Factory, runF func(*resolveOptions) error) *cobra.Command {
	opts := &resolveOptions{f: f}
	c := &cobra.Command{
		Use:   "resolve KEY (--done [--ref R] | --retry [--force]) [--note TEXT] [--repo O/R]",
		Short: "Settle an entry by hand: it happened (--done) or it did not (--retry)",
		Long: `Record a person's decision about an entry that ghonce could not settle by
looking (a guarded command without --check, say). --done marks it done, with
--ref added to its reference (a done entry keeps the number and URL it has);
--retry marks it failed so the next run performs it. The decision, who made
it and --note are kept in the entry's history.

A done entry points at an artifact that exists; --retry on it is refused
unless --force is given (the artifact was deleted, say). The next run then
looks on GitHub first: what it finds tagged with the key (PR, issue,
comment, branch, file) it records as done again; only if it finds nothing
does it create it again. A guarded command without --check runs again.

An entry a live attempt holds is refused (exit 4) unless --retry --force is
given: use it only when no attempt runs (a claim someone else wrote, a
runner on a machine that is gone). Should that attempt still run, it can no
longer record its outcome, and the next run looks before it acts.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.Key = args[0]
			return cmdutil.RunOr(c.Context(), opts, runF, resolveRun)
		},
	}
	c.Flags().BoolVar(&opts.Done, "done", false, "it happened: mark the entry done")
	c.Flags().BoolVar(&opts.Retry, "retry", false, "it did not happen: let the next run perform it")
	c.Flags().BoolVar(&opts.Force, "force", false, "with --retry: send a done entry back too, or clear one a live attempt holds")
	c.Flags().StringVar(&opts.Ref, "ref", "", "with --done: a reference to what was made (a URL, an id)")
	c.Flags().StringVar(&opts.Note, "note", "", "why; kept in the history")
	cmdutil.AddLedgerFlag(c, &opts.Ledger)
	cmdutil.AddLedgerRepoFlag(c, &opts.Repo, "holds KEY")
	cmdutil.AddJSONFlag(c, &opts.JSON)
	return c
}

func resolveRun(ctx context.Context, opts *resolveOptions) error {
	f, key := opts.f, opts.Key
	if err := checkKeyArg(key); err != nil {
		return err
	}
	switch {
	case opts.Done == opts.Retry:
		return &failure.Keyed{Key: key, Err: cmdutil.Usagef("resolve: give exactly one of --done or --retry")}
	case opts.Ref != "" && !opts.Done:
		return &failure.Keyed{Key: key, Err: cmdutil.Usagef("resolve: --ref goes with --done; a retried entry points at nothing")}
	case opts.Force && !opts.Retry:
		return &failure.Keyed{Key: key, Err: cmdutil.Usagef("resolve: --force goes with --retry")}
	}
	l, err := f.OpenLedgerWith(ctx, opts.Ledger, store.Options{Create: store.CreateNever}, opts.Repo, nil)
	if err != nil {
		return err
	}
	defer l.Close()
	p := ledger.ResolveParams{Key: key, Status: ledger.Failed, Who: whoAmI(f.IO.Getenv), Note: opts.Note, Force: opts.Force}
	if opts.Done {
		p.Status, p.Ref = ledger.Done, ledger.Ref{Text: opts.Ref}
	}
	// The entry as it was, to say what the decision changes; the ledger
	// itself refuses done -> retry without Force (ErrDone), atomically.
	before, err := l.Get(ctx, key)
	var ent *ledger.Entry
	if err == nil {
		ent, err = l.Resolve(ctx, p)
	}
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		return &failure.Keyed{Key: key, Err: fmt.Errorf("resolve %s: no such entry in the ledger; see `ghonce status`: %w", key, err)}
	case errors.Is(err, ledger.ErrBusy):
		return &outcome.InProgressError{Key: key}
	case errors.Is(err, ledger.ErrDone):
		return cmdutil.Usagef("resolve %s: the entry is done (%s), and --retry would make the next run act again; if that artifact is gone, pass --force", key, describeRef(before))
	case err != nil:
		return &failure.Keyed{Key: key, Err: fmt.Errorf("resolve %s: %w", key, err)}
	}
	fmt.Fprintf(f.IO.Err, "ghonce: %s is now %s\n", key, ent.Status)
	switch {
	case ent.Status == ledger.Done && !ent.Ref.IsZero():
		fmt.Fprintf(f.IO.Err, "ghonce: its artifact: %s\n", describeRef(ent))
	case before.Status == ledger.Done:
		fmt.Fprintf(f.IO.Err, "ghonce: it no longer points at %s. %s\n", describeRef(before), retryWillDo(before.Kind))
	}
	if opts.JSON {
		return f.WriteJSON(resolveJSON{OutcomeJSON: cmdutil.Succeeded(), State: ent.Status, entryJSON: newEntryJSON(ent)})
	}
	return nil
}

// checkKeyArg refuses an argument that cannot be a key.
func checkKeyArg(key string) error {
	if !taskkey.Valid(key) {
		return cmdutil.Usagef("invalid key %q: keys look like %s…; see `ghonce status`", key, taskkey.Prefix)
	}
	return nil
}

func whoAmI(getenv func(string) string) string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	if u := getenv("USER"); u != "" {
		return u
	}
	return "unknown"
}

// describeRef names an entry's artifact for a person: "pr #7 URL".
func describeRef(e *ledger.Entry) string {
	if e == nil || e.Ref.IsZero() {
		return "no artifact recorded"
	}
	var parts []string
	if e.Ref.Number != 0 {
		parts = append(parts, fmt.Sprintf("%s #%d", e.Kind, e.Ref.Number))
	} else if e.Ref.SHA != "" {
		parts = append(parts, fmt.Sprintf("%s at %.12s", e.Kind, e.Ref.SHA))
	}
	for _, s := range []string{e.Ref.URL, e.Ref.Text} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		parts = append(parts, fmt.Sprintf("%s id %d", e.Kind, e.Ref.ID))
	}
	return strings.Join(parts, " ")
}

// retryWillDo says what the next run does with a done entry sent back:
// the engine looks before it creates, for every kind but a guarded command
// (the one kind off GitHub) without --check.
func retryWillDo(kind string) string {
	if !kinds.OnGitHub(kind) {
		return "The next run runs the command again, unless its --check finds the effect."
	}
	return "The next run looks on GitHub first and records an artifact tagged with the key as done again; only if it finds none does it create a new one."
}
