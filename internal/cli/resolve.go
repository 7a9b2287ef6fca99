package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/ghonce/ghonce/ledger/store"
	"os/user"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
)

// resolveOptions is `ghonce resolve`.
type resolveOptions struct {
	f           *factory
	ctx         context.Context
	Key         string
	Done, Retry bool
	Ref, Note   string
}

func newCmdResolve(f *factory, runF func(*resolveOptions) error) *cobra.Command {
	opts := &resolveOptions{f: f}
	c := &cobra.Command{
		Use:   "resolve KEY (--done [--ref R] | --retry) [--note TEXT]",
		Short: "Settle an entry by hand: it happened (--done) or it did not (--retry)",
		Long: `Record a person's decision about an entry that ghonce could not settle by
looking (a guarded command without --check, say). --done marks it done, with
--ref as its reference; --retry marks it failed so the next run performs it.
The decision, who made it and --note are kept in the entry's history.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.ctx = c.Context()
			opts.Key = args[0]
			return runOr(opts, runF, resolveRun)
		},
	}
	c.Flags().BoolVar(&opts.Done, "done", false, "it happened: mark the entry done")
	c.Flags().BoolVar(&opts.Retry, "retry", false, "it did not happen: let the next run perform it")
	c.Flags().StringVar(&opts.Ref, "ref", "", "with --done: a reference to what was made (a URL, an id)")
	c.Flags().StringVar(&opts.Note, "note", "", "why; kept in the history")
	return c
}

func resolveRun(opts *resolveOptions) error {
	f, key := opts.f, opts.Key
	if err := checkKeyArg(key); err != nil {
		return err
	}
	if opts.Done == opts.Retry {
		return usagef("give exactly one of --done or --retry")
	}
	l, err := f.openLedger(opts.ctx, store.CreateNever)
	if err != nil {
		return err
	}
	defer l.Close()
	p := ledger.ResolveParams{Key: key, Status: ledger.Failed, Who: whoAmI(f.sys.Getenv), Note: opts.Note}
	if opts.Done {
		p.Status, p.Ref = ledger.Done, ledger.Ref{Text: opts.Ref}
	}
	ent, err := l.Resolve(opts.ctx, p)
	switch {
	case errors.Is(err, ledger.ErrNotFound):
		return fmt.Errorf("resolve %s: no such entry in the ledger; see `ghonce status`", key)
	case errors.Is(err, ledger.ErrBusy):
		return &reconcile.InProgressError{Key: key}
	case err != nil:
		return fmt.Errorf("resolve %s: %w", key, err)
	}
	fmt.Fprintf(f.sys.Err, "ghonce: %s is now %s\n", key, ent.Status)
	if f.g.json {
		return json.NewEncoder(f.sys.Out).Encode(newEntryJSON(ent))
	}
	return nil
}

// checkKeyArg refuses an argument that cannot be a key.
func checkKeyArg(key string) error {
	if !taskkey.Valid(key) {
		return usagef("invalid key %q: keys look like %s…; see `ghonce status`", key, taskkey.Prefix)
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
