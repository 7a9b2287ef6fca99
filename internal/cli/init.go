package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/store"
)

// initOptions is `ghonce init`.
type initOptions struct {
	f      *cmdutil.Factory
	Ledger cmdutil.LedgerFlag
	Repo   cmdutil.RepoFlag // where the ledger "github" lives
	JSON   bool
}

func newCmdInit(f *cmdutil.Factory, runF func(*initOptions) error) *cobra.Command {
	opts := &initOptions{f: f}
	c := &cobra.Command{
		Use:   "init [--ledger PATH] [--repo O/R]",
		Short: "Create the ledger ahead of the first run, and print its path",
		Long: `Create the ledger (if it does not exist yet) and print its path on stdout.

Run it once when you set an agent up. A ledger that a run creates itself may
be replacing one that was lost, so a guarded command ('ghonce exec') without
--check refuses to run on it (exit 3); a ledger made by 'ghonce init' is
known to be new, and records so in itself (origin "init"). init is
idempotent and never changes an existing ledger. The verbs that only look at
or settle the ledger (status, reconcile, resolve, labels prune) never create
one: a missing ledger is exit 1.

With a token set (GH_TOKEN or GITHUB_TOKEN), init also records the token's
login in the ledger, under a fingerprint of the token (never the token), so
the first action spends no request on GET /user. If GitHub cannot be asked
now, init says so and succeeds: the first run asks instead.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return cmdutil.RunOr(c.Context(), opts, runF, initRun)
		},
	}
	cmdutil.AddLedgerFlag(c, &opts.Ledger)
	cmdutil.AddLedgerRepoFlag(c, &opts.Repo, "to create")
	cmdutil.AddJSONFlag(c, &opts.JSON)
	return c
}

func initRun(ctx context.Context, opts *initOptions) error {
	f := opts.f
	l, err := f.OpenLedgerWith(ctx, opts.Ledger, store.Options{Create: store.CreateForInit}, opts.Repo, nil)
	if err != nil {
		return err
	}
	defer l.Close()
	word := "exists"
	if l.Created {
		word = "created"
	}
	fmt.Fprintf(f.IO.Err, "ghonce: ledger %s%s\n", word, originNote(ctx, l))
	if msg := recordLogin(ctx, f, l); msg != "" {
		fmt.Fprintln(f.IO.Err, "ghonce: "+msg)
	}
	if opts.JSON {
		return f.WriteJSON(initJSON{OutcomeJSON: cmdutil.Succeeded(), Ledger: l.Location, Created: l.Created})
	}
	fmt.Fprintln(f.IO.Out, l.Location)
	return nil
}

// originNote says how an existing ledger came to be, as it records itself.
func originNote(ctx context.Context, l *store.Opened) string {
	if l.Created {
		return ""
	}
	at, _ := l.GetMeta(ctx, ledger.MetaCreatedAt)
	if t, err := time.Parse(time.RFC3339Nano, at); err == nil {
		at = " on " + t.UTC().Format(time.RFC3339)
	}
	switch l.Origin {
	case ledger.OriginInit:
		return " (made by `ghonce init`" + at + ")"
	case ledger.OriginAction:
		return " (made by a first action" + at + ", not by `ghonce init`; it vouches for what ran against it since)"
	}
	return " (from before ledgers recorded their origin)"
}

// recordLogin caches the token's login in l, best effort, and says what it
// did ("" when there is no token, or a GitHub App mints them: an App's
// identity comes from GET /app, not from the cache).
func recordLogin(ctx context.Context, f *cmdutil.Factory, l *store.Opened) string {
	if _, err := f.Token(); err != nil || l.InRepository {
		return ""
	}
	if app, err := f.GitHubApp(cmdutil.AppFlags{}, ""); err != nil || app != nil {
		return ""
	}
	c, err := f.GitHubOn(ctx, cmdutil.GitHubFlags{}, "", l)
	if err != nil {
		return fmt.Sprintf("did not record the token's login: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	login, err := c.Login(ctx)
	switch {
	case err != nil:
		return fmt.Sprintf("could not read the token's login now (%v); the first run will ask", err)
	case login == "":
		return "" // an installation token: nothing to record
	}
	return fmt.Sprintf("recorded the token's login (%s) in the ledger", login)
}
