package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
)

func parseRepo(s string) (ghcheck.Repo, error) {
	r, err := ghcheck.ParseRepo(s)
	if err != nil {
		return r, &usageError{err}
	}
	return r, nil
}

func newReconcileCmd(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "reconcile [--repo O/R] [--task T] [--json]",
		Short: "Settle entries a crash left attempting, against GitHub; never creates anything",
		Long: `Settle every "attempting" entry (optionally of one repository or task):
found on GitHub → done; absent → failed, so the next run creates it; GitHub
could not answer, or another live process holds it → stays attempting.

reconcile only reads GitHub. Run it after a crash, before restarting agents.

Exit 0 when nothing is left unsettled, 3 when something still needs a rerun
or a person.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			filter := reconcile.Filter{Repo: f.g.repo, Task: f.g.task}
			if filter.Repo != "" {
				if _, err := parseRepo(filter.Repo); err != nil {
					return err
				}
			}
			// Guarded commands need no token; ask for one only when an
			// attempting entry is a GitHub kind.
			l, err := f.openLedger(c.Context())
			if err != nil {
				return err
			}
			pending, err := l.List(c.Context(), ledger.ListParams{Task: filter.Task, Repo: filter.Repo, Status: ledger.Attempting})
			_ = l.Close()
			if err != nil {
				return fmt.Errorf("list ledger: %w", err)
			}
			needGitHub := false
			for _, e := range pending {
				needGitHub = needGitHub || e.Kind != "exec"
			}
			eng, _, closeLedger, err := f.engine(c.Context(), needGitHub, f.sys.Err)
			if err != nil {
				return err
			}
			defer closeLedger()
			out, err := eng.Reconcile(c.Context(), filter)
			if err != nil {
				return err
			}
			unsettled := 0
			for _, s := range out {
				if !s.Settled() {
					unsettled++
				}
			}
			if f.g.json {
				if err := json.NewEncoder(f.sys.Out).Encode(map[string]any{"settled": out, "unsettled": unsettled}); err != nil {
					return err
				}
			} else {
				if len(out) == 0 {
					fmt.Fprintln(f.sys.Err, "ghonce: nothing to reconcile")
				}
				w := tabwriter.NewWriter(f.sys.Out, 0, 4, 2, ' ', 0)
				for _, s := range out {
					ref := s.URL
					fmt.Fprintf(w, "%s\t%s\t%s/%s\t%s → %s\t%s\t%s\n", s.Key, s.Kind, s.Task, s.Step, s.From, s.To, ref, s.Why)
				}
				_ = w.Flush()
				fmt.Fprintf(f.sys.Err, "ghonce: %d settled, %d left unsettled\n", len(out)-unsettled, unsettled)
			}
			if unsettled > 0 {
				return &silentError{ExitUnconfirmed}
			}
			return nil
		},
	}
}

func newResolveCmd(f *factory) *cobra.Command {
	var (
		done, retry bool
		ref, note   string
	)
	c := &cobra.Command{
		Use:   "resolve KEY (--done [--ref R] | --retry) [--note TEXT]",
		Short: "Settle an entry by hand: it happened (--done) or it did not (--retry)",
		Long: `Record a person's decision about an entry that ghonce could not settle by
looking (a guarded command without --check, say). --done marks it done, with
--ref as its reference; --retry marks it failed so the next run performs it.
The decision, who made it and --note are kept in the entry's history.`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			key := args[0]
			if !taskkey.Valid(key) {
				return usagef("invalid key %q: keys look like %s…; see `ghonce status`", key, taskkey.Prefix)
			}
			if done == retry {
				return usagef("give exactly one of --done or --retry")
			}
			l, err := f.openLedger(c.Context())
			if err != nil {
				return err
			}
			defer l.Close()
			p := ledger.ResolveParams{Key: key, Status: ledger.Failed, Who: whoAmI(f.sys.Getenv), Note: note}
			if done {
				p.Status, p.Ref = ledger.Done, ledger.Ref{Text: ref}
			}
			ent, err := l.Resolve(c.Context(), p)
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
				return json.NewEncoder(f.sys.Out).Encode(entryJSON(ent))
			}
			return nil
		},
	}
	c.Flags().BoolVar(&done, "done", false, "it happened: mark the entry done")
	c.Flags().BoolVar(&retry, "retry", false, "it did not happen: let the next run perform it")
	c.Flags().StringVar(&ref, "ref", "", "with --done: a reference to what was made (a URL, an id)")
	c.Flags().StringVar(&note, "note", "", "why; kept in the history")
	return c
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

func newStatusCmd(f *factory) *cobra.Command {
	var (
		state string
		stale time.Duration
	)
	c := &cobra.Command{
		Use:   "status [KEY] [--task T] [--repo O/R] [--state S] [--stale DURATION] [--json]",
		Short: "Show the ledger; with --stale, exit 5 if an attempting entry is older than DURATION",
		Long: `Show the ledger's entries, optionally of one task, repository or state.

With KEY, show that entry and its history: every transition, which process
or person made it and why (the --note of 'ghonce resolve' included).

With --stale DURATION, exit 5 if an attempting entry was last updated longer
ago than DURATION: for a monitor.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			p := ledger.ListParams{Task: f.g.task, Repo: f.g.repo, Status: ledger.Status(state)}
			if state != "" && !p.Status.Valid() {
				return usagef("invalid --state %q: want attempting, done or failed", state)
			}
			if stale < 0 {
				return usagef("invalid --stale %s: want a positive duration such as 15m", stale)
			}
			l, err := f.openLedger(c.Context())
			if err != nil {
				return err
			}
			defer l.Close()
			var (
				entries []*ledger.Entry
				history []ledger.Transition
			)
			if len(args) == 1 {
				key := args[0]
				if !taskkey.Valid(key) {
					return usagef("invalid key %q: keys look like %s…; see `ghonce status`", key, taskkey.Prefix)
				}
				e, err := l.Get(c.Context(), key)
				if errors.Is(err, ledger.ErrNotFound) {
					return fmt.Errorf("status %s: no such entry in the ledger; see `ghonce status`", key)
				}
				if err != nil {
					return err
				}
				if history, err = l.History(c.Context(), key); err != nil {
					return err
				}
				entries = []*ledger.Entry{e}
			} else if entries, err = l.List(c.Context(), p); err != nil {
				return fmt.Errorf("list ledger: %w", err)
			}
			now := f.sys.Now()
			var stales []*ledger.Entry
			if stale > 0 {
				for _, e := range entries {
					if e.Status == ledger.Attempting && now.Sub(e.UpdatedAt) > stale {
						stales = append(stales, e)
					}
				}
			}
			if f.g.json {
				rows := make([]map[string]any, 0, len(entries))
				for _, e := range entries {
					rows = append(rows, entryJSON(e))
				}
				if len(args) == 1 {
					hist := make([]map[string]any, 0, len(history))
					for _, h := range history {
						hist = append(hist, map[string]any{"at": h.At, "owner": h.Owner, "from": h.From, "to": h.To, "fence": h.Fence, "why": h.Why})
					}
					rows[0]["history"] = hist
				}
				if err := json.NewEncoder(f.sys.Out).Encode(map[string]any{"entries": rows, "stale": len(stales)}); err != nil {
					return err
				}
			} else {
				w := tabwriter.NewWriter(f.sys.Out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(w, "KEY\tSTATUS\tKIND\tTASK\tSTEP\tREPO\tREF\tATTEMPTS\tUPDATED\tLAST ERROR")
				for _, e := range entries {
					fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", e.Key, e.Status, e.Kind, e.Task, e.Step, e.Repo,
						refText(e.Ref), e.Attempts, e.UpdatedAt.UTC().Format(time.RFC3339), oneLine(e.LastError, 60))
				}
				if len(args) == 1 {
					fmt.Fprintln(w, "\nHISTORY\tFROM\tTO\tBY\tWHY")
					for _, h := range history {
						from := string(h.From)
						if from == "" {
							from = "-"
						}
						fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", h.At.UTC().Format(time.RFC3339), from, h.To, h.Owner, oneLine(h.Why, 80))
					}
				}
				_ = w.Flush()
			}
			if len(stales) > 0 {
				fmt.Fprintf(f.sys.Err, "ghonce: %d attempting entries older than %s; run `ghonce reconcile`\n", len(stales), stale)
				return &silentError{ExitStale}
			}
			return nil
		},
	}
	c.Flags().StringVar(&state, "state", "", "only entries in this state: attempting, done or failed")
	c.Flags().DurationVar(&stale, "stale", 0, "exit 5 if any attempting entry was last updated longer ago than this")
	return c
}

func entryJSON(e *ledger.Entry) map[string]any {
	return map[string]any{
		"key": e.Key, "status": e.Status, "kind": e.Kind, "task": e.Task, "step": e.Step, "repo": e.Repo, "target": e.Target,
		"outcome": e.Outcome, "number": e.Ref.Number, "url": e.Ref.URL, "id": e.Ref.ID, "sha": e.Ref.SHA, "ref": e.Ref.Text,
		"attempts": e.Attempts, "last_error": e.LastError, "created_at": e.CreatedAt, "updated_at": e.UpdatedAt,
	}
}

func refText(r ledger.Ref) string {
	switch {
	case r.URL != "":
		return r.URL
	case r.SHA != "":
		return r.SHA
	case r.Number != 0:
		return fmt.Sprintf("#%d", r.Number)
	}
	return r.Text
}

func oneLine(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len([]rune(s)) > n {
		return string([]rune(s)[:n-1]) + "…"
	}
	return s
}

func newInitCmd(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "init [--ledger PATH]",
		Short: "Create the ledger ahead of the first run, and print its path",
		Long: `Create the ledger (if it does not exist yet) and print its path on stdout.

Run it once when you set an agent up. A ledger that a run creates itself may
be replacing one that was lost, so a guarded command ('ghonce exec') without
--check refuses to run on it (exit 3); a ledger made by 'ghonce init' is
known to be new. init is idempotent and never changes an existing ledger.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			l, err := f.openLedger(c.Context())
			if err != nil {
				return err
			}
			defer l.Close()
			word := "exists"
			if l.Created {
				word = "created"
			}
			fmt.Fprintf(f.sys.Err, "ghonce: ledger %s\n", word)
			fmt.Fprintln(f.sys.Out, l.Location)
			return nil
		},
	}
}
