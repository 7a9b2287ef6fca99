package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/store"
)

// statusOptions is `ghonce status`. Its filters come from --repo and --task
// only: see filterFlags.
type statusOptions struct {
	f     *factory
	ctx   context.Context
	Key   string // one entry and its history; empty: list
	State string
	Stale time.Duration
}

func newCmdStatus(f *factory, runF func(*statusOptions) error) *cobra.Command {
	opts := &statusOptions{f: f}
	c := &cobra.Command{
		Use:   "status [KEY] [--task T] [--repo O/R] [--state S] [--stale DURATION] [--json]",
		Short: "Show the ledger; with --stale, exit 5 if an attempting entry is older than DURATION",
		Long: `Show the ledger's entries, optionally of one task, repository or state.

With KEY, show that entry and its history: every transition, which process
or person made it and why (the --note of 'ghonce resolve' included).

With --stale DURATION, exit 5 if an attempting entry was last updated longer
ago than DURATION: for a monitor.
` + filterHelp,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.ctx = c.Context()
			if len(args) == 1 {
				opts.Key = args[0]
			}
			return runOr(opts, runF, statusRun)
		},
	}
	c.Flags().StringVar(&opts.State, "state", "", "only entries in this state: attempting, done or failed")
	c.Flags().DurationVar(&opts.Stale, "stale", 0, "exit 5 if any attempting entry was last updated longer ago than this")
	return c
}

func statusRun(opts *statusOptions) error {
	f := opts.f
	filter, err := f.g.filter()
	if err != nil {
		return err
	}
	p := ledger.ListParams{Task: filter.Task, Repo: filter.Repo, Status: ledger.Status(opts.State)}
	if opts.State != "" && !p.Status.Valid() {
		return usagef("invalid --state %q: want attempting, done or failed", opts.State)
	}
	if opts.Stale < 0 {
		return usagef("invalid --stale %s: want a positive duration such as 15m", opts.Stale)
	}
	if opts.Key != "" {
		if err := checkKeyArg(opts.Key); err != nil {
			return err
		}
	}
	l, err := f.openLedger(opts.ctx, store.CreateNever)
	if err != nil {
		return err
	}
	defer l.Close()
	entries, history, err := readStatus(opts.ctx, l, opts.Key, p)
	if err != nil {
		return err
	}
	now := f.sys.Now()
	var stales []*ledger.Entry
	if opts.Stale > 0 {
		for _, e := range entries {
			if e.Status == ledger.Attempting && now.Sub(e.UpdatedAt) > opts.Stale {
				stales = append(stales, e)
			}
		}
	}
	if f.g.json {
		err = printStatusJSON(f, entries, history, opts.Key != "", len(stales))
	} else {
		printStatusTable(f, entries, history, opts.Key != "")
	}
	if err != nil {
		return err
	}
	if len(stales) > 0 {
		fmt.Fprintf(f.sys.Err, "ghonce: %d attempting entries older than %s; run `ghonce reconcile`\n", len(stales), opts.Stale)
		return &silentError{ExitStale}
	}
	return nil
}

// readStatus reads one entry and its history (key set) or the entries p
// selects.
func readStatus(ctx context.Context, l ledger.Ledger, key string, p ledger.ListParams) ([]*ledger.Entry, []ledger.Transition, error) {
	if key == "" {
		entries, err := l.List(ctx, p)
		if err != nil {
			return nil, nil, fmt.Errorf("list ledger: %w", err)
		}
		return entries, nil, nil
	}
	e, err := l.Get(ctx, key)
	if errors.Is(err, ledger.ErrNotFound) {
		return nil, nil, fmt.Errorf("status %s: no such entry in the ledger; see `ghonce status`", key)
	}
	if err != nil {
		return nil, nil, err
	}
	history, err := l.History(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	return []*ledger.Entry{e}, history, nil
}

func printStatusJSON(f *factory, entries []*ledger.Entry, history []ledger.Transition, withHistory bool, stale int) error {
	out := statusJSON{Entries: make([]entryJSON, 0, len(entries)), Stale: stale}
	for _, e := range entries {
		out.Entries = append(out.Entries, newEntryJSON(e))
	}
	if withHistory {
		hist := make([]transitionJSON, 0, len(history))
		for _, h := range history {
			hist = append(hist, transitionJSON{At: h.At, Owner: h.Owner, From: h.From, To: h.To, Fence: h.Fence, Why: h.Why})
		}
		out.Entries[0].History = hist
	}
	return json.NewEncoder(f.sys.Out).Encode(out)
}

func printStatusTable(f *factory, entries []*ledger.Entry, history []ledger.Transition, withHistory bool) {
	w := tabwriter.NewWriter(f.sys.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "KEY\tSTATUS\tKIND\tTASK\tSTEP\tREPO\tREF\tATTEMPTS\tUPDATED\tLAST ERROR")
	for _, e := range entries {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", e.Key, e.Status, e.Kind, e.Task, e.Step, e.Repo,
			refText(e.Ref), e.Attempts, e.UpdatedAt.UTC().Format(time.RFC3339), oneLine(e.LastError, 60))
	}
	if withHistory {
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
