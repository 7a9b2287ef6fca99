package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/ledger"
	ghledger "github.com/ghonce/ghonce/ledger/github"
	"github.com/ghonce/ghonce/ledger/store"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
)

// pruneOptions is `ghonce prune`.
type pruneOptions struct {
	f         *cmdutil.Factory
	Ledger    cmdutil.LedgerFlag
	Repo      cmdutil.RepoFlag
	JSON      bool
	OlderThan string
	DryRun    bool
	Keys      []string
}

func newCmdPrune(f *cmdutil.Factory, runF func(*pruneOptions) error) *cobra.Command {
	opts := &pruneOptions{f: f}
	c := &cobra.Command{
		Use:   "prune (--older-than AGE | KEY...) [--ledger github] [--repo O/R] [--dry-run] [--json]",
		Short: "Delete the repository ledger's claims of actions done long ago, or the claims named",
		Long: `Delete from a repository ledger (--ledger github or github://OWNER/REPO) the
claim ref of every pull request, issue, comment, branch and file done more
than AGE ago (30d, 12h, 90m), on GitHub's clock. Claims that are not done,
or newer, and every guarded command's (exec) claim are kept: GitHub cannot be
asked whether a command ran, so its claim is the only record.

The ghonce:KEY label of each pruned pull request and issue goes first, as
'ghonce labels prune' deletes it: once the claim is gone no ledger knows the
label, and nothing could remove it later. A label GitHub refuses to delete
keeps its claim (exit 1), for the next prune.

What pruning gives up: a pruned key is as if this ledger had never recorded
it. A rerun of it looks the artifact up on GitHub by its other tags (the
hidden marker, the branch name, a pull request's head), as after a lost
ledger, and finds it there, except an issue, which only its label found: a
rerun files it again. With --trust-ledger a rerun would not look at all, so
do not prune a ledger that runs use with --trust-ledger. Choose AGE longer
than any rerun of that work can come.

With KEY... instead, it deletes the claim of each key named, whatever it
holds: an attempting or failed claim, a guarded command's, or a ref that
holds no claim of its key (someone who can push wrote it). It says for each
what that gives up: a guarded command's claim was the only record that it
ran, so the next run of it runs it again unless its --check finds the
effect; an attempt that may still be running may still create its artifact.

Prints each key it deletes (with --dry-run: would delete) on stdout, one per
line; --json prints one object.`,
		RunE: func(c *cobra.Command, args []string) error {
			opts.Keys = args
			return cmdutil.RunOr(c.Context(), opts, runF, pruneRun)
		},
	}
	c.Flags().StringVar(&opts.OlderThan, "older-than", "", "prune claims done longer ago than this: 30d, 12h, 90m (required)")
	c.Flags().BoolVar(&opts.DryRun, "dry-run", false, "list what would be deleted, delete nothing")
	cmdutil.AddLedgerFlag(c, &opts.Ledger)
	cmdutil.AddRepoFlag(c, &opts.Repo)
	cmdutil.AddJSONFlag(c, &opts.JSON)
	return c
}

type prunedClaimJSON struct {
	Key    string    `json:"key"`
	Kind   string    `json:"kind"`
	Repo   string    `json:"repo"`
	DoneAt time.Time `json:"done_at,omitzero"`
	// Label is the ghonce:KEY label deleted with a pull request's or an
	// issue's claim (with --dry-run: to delete).
	Label string `json:"label,omitempty"`
	// Status and GivesUp, for a claim named by its key: what it held
	// ("" for a ref that held no claim of its key) and what removing it
	// gives up.
	Status  ledger.Status `json:"status,omitempty"`
	GivesUp string        `json:"gives_up,omitempty"`
}

type pruneClaimsJSON struct {
	DryRun bool              `json:"dry_run"`
	Before time.Time         `json:"before,omitzero"`
	Claims []prunedClaimJSON `json:"claims"`
}

func pruneRun(ctx context.Context, opts *pruneOptions) error {
	f := opts.f
	var age time.Duration
	switch {
	case len(opts.Keys) > 0 && opts.OlderThan != "":
		return cmdutil.Usagef("prune: give the keys to delete or --older-than, not both")
	case len(opts.Keys) > 0:
		for _, key := range opts.Keys {
			if err := checkKeyArg(key); err != nil {
				return err
			}
		}
	case opts.OlderThan == "":
		return cmdutil.Usagef("prune: --older-than or the keys to delete is required, e.g. --older-than 30d")
	default:
		var err error
		if age, err = cmdutil.ParseAge(opts.OlderThan); err != nil {
			return cmdutil.Usage(err)
		}
		if age < reconcile.MinPruneAge {
			// A first create's look-up runs beside its claim, trusting that no
			// claim of its key lives and is removed meanwhile.
			return cmdutil.Usagef("prune: --older-than %s is younger than %s: a claim that young may belong to a create still in progress", opts.OlderThan, reconcile.MinPruneAge)
		}
	}
	l, err := f.OpenLedgerWith(ctx, opts.Ledger, store.Options{Create: store.CreateNever}, opts.Repo, nil)
	if err != nil {
		return err
	}
	defer l.Close()
	gl, ok := l.Ledger.(*ghledger.Ledger)
	if !ok {
		return cmdutil.Usagef("prune works on a repository ledger (--ledger github or github://OWNER/REPO); %s keeps its entries (`ghonce resolve KEY --retry --force` clears one)", l.Location)
	}
	if len(opts.Keys) > 0 {
		return pruneKeys(ctx, opts, l, gl)
	}
	now, err := l.Now(ctx)
	if err != nil {
		return err
	}
	before := now.Add(-age)
	keep := func(e *ledger.Entry) bool { return !kinds.OnGitHub(e.Kind) }
	unlabeled, failed, err := pruneKeyLabels(ctx, f, gl, opts, ghledger.PruneParams{Before: before, DryRun: true, Keep: keep})
	if err != nil {
		return err
	}
	gone, err := gl.Prune(ctx, ghledger.PruneParams{Before: before, DryRun: opts.DryRun,
		Keep: func(e *ledger.Entry) bool { return keep(e) || reconcile.CarriesKeyLabel(e.Kind) && !unlabeled[e.Key] }})
	out := pruneClaimsJSON{DryRun: opts.DryRun, Before: before.UTC(), Claims: []prunedClaimJSON{}}
	labels := 0
	for _, e := range gone {
		c := prunedClaimJSON{Key: e.Key, Kind: e.Kind, Repo: e.Repo, DoneAt: e.UpdatedAt.UTC()}
		if reconcile.CarriesKeyLabel(e.Kind) {
			c.Label, labels = taskkey.Label(e.Key), labels+1
		}
		out.Claims = append(out.Claims, c)
		if !opts.JSON {
			fmt.Fprintln(f.IO.Out, e.Key)
		}
	}
	if err != nil {
		return err
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
	fmt.Fprintf(f.IO.Err, "ghonce: %s %d claims done before %s in %s, and the key labels of %d pull requests and issues\n",
		verb, len(gone), before.UTC().Format(time.RFC3339), l.Location, labels)
	if failed > 0 {
		return &cmdutil.SilentError{Code: failure.ExitError}
	}
	return nil
}

// pruneKeyLabels deletes the ghonce:KEY label of each pull request and
// issue whose claim p would prune, before the claim goes (after it, no
// ledger knows the label). It returns the keys whose label is gone (with
// p.DryRun, would go) and how many GitHub refused, each said on stderr:
// their claims stay, for the next prune.
func pruneKeyLabels(ctx context.Context, f *cmdutil.Factory, gl *ghledger.Ledger, opts *pruneOptions, p ghledger.PruneParams) (map[string]bool, int, error) {
	due, err := gl.Prune(ctx, p)
	if err != nil {
		return nil, 0, err
	}
	done, failed := map[string]bool{}, 0
	for _, e := range due {
		if !reconcile.CarriesKeyLabel(e.Kind) {
			continue
		}
		if !opts.DryRun {
			gh, err := f.GitHub(ctx, cmdutil.GitHubFlags{}, opts.Repo)
			if err != nil {
				return nil, 0, err
			}
			// A claim names its repository by digest only: prune works
			// in the ledger's, the one --repo named.
			r, err := gl.Repo(), error(nil)
			if e.Repo != "" {
				r, err = ghcheck.ParseRepo(e.Repo)
			}
			if err == nil {
				_, err = gh.DeleteKeyLabel(ctx, r, e.Key)
			}
			if err != nil {
				failed++
				fmt.Fprintf(f.IO.Err, "ghonce: %v; its claim %s is kept\n", err, e.Key)
				continue
			}
		}
		done[e.Key] = true
	}
	return done, failed, nil
}

// pruneKeys deletes from gl (l) the claims of the keys named, whatever
// they hold, and says what each deletion gives up.
func pruneKeys(ctx context.Context, opts *pruneOptions, l *store.Opened, gl *ghledger.Ledger) error {
	f := opts.f
	verb := "deleted"
	if opts.DryRun {
		verb = "would delete"
	}
	out := pruneClaimsJSON{DryRun: opts.DryRun, Claims: []prunedClaimJSON{}}
	for _, key := range opts.Keys {
		e, err := gl.Remove(ctx, key, opts.DryRun)
		if errors.Is(err, ledger.ErrNotFound) {
			return &failure.Keyed{Key: key, Err: fmt.Errorf("prune %s: %s holds no claim of it; see `ghonce status`", key, l.Location)}
		}
		if err != nil {
			return &failure.Keyed{Key: key, Err: fmt.Errorf("prune %s: %w", key, err)}
		}
		j := prunedClaimJSON{Key: key, GivesUp: givesUp(e)}
		if e != nil {
			j.Kind, j.Repo, j.Status = e.Kind, e.Repo, e.Status
		}
		out.Claims = append(out.Claims, j)
		if !opts.JSON {
			fmt.Fprintln(f.IO.Out, key)
		}
		fmt.Fprintf(f.IO.Err, "ghonce: %s the claim of %s: %s\n", verb, key, j.GivesUp)
	}
	if opts.JSON {
		return f.WriteJSON(out)
	}
	return nil
}

// givesUp says what deleting the claim that held e gives up; e is nil for
// a ref that held no claim of its key.
func givesUp(e *ledger.Entry) string {
	switch {
	case e == nil:
		return "it held no claim of its key, so nothing; the next run claims the key anew"
	case !kinds.OnGitHub(e.Kind):
		return "it was the only record that the command ran: the next run of it runs it again, unless its --check finds the effect"
	case e.Status == ledger.Attempting:
		return "an attempt that may still run may still create its artifact; the next run looks on GitHub by its tags before it creates"
	}
	return "the next run looks the artifact up on GitHub by its tags, as after a lost ledger (with --trust-ledger it would not look)"
}
