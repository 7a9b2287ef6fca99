package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/internal/human"
	"github.com/ghonce/ghonce/internal/procid"
	"github.com/ghonce/ghonce/ledger"
)

// statusOptions is `ghonce status`. Its filters come from --repo and --task
// only: see FilterFlags.
type statusOptions struct {
	f      *cmdutil.Factory
	Ledger cmdutil.LedgerFlag
	Filter cmdutil.FilterFlags
	JSON   bool
	Key    string // one entry and its history; empty: list
	State  string
	Stale  time.Duration
	Table  bool // one line per entry instead of the summary per task
}

func newCmdStatus(f *cmdutil.Factory, runF func(*statusOptions) error) *cobra.Command {
	opts := &statusOptions{f: f}
	c := &cobra.Command{
		Use:   "status [KEY] [--task T] [--repo O/R] [--state S] [--stale DURATION] [--json]",
		Short: "Show the ledger; with --stale, exit 5 if an attempting entry is older than DURATION",
		Long: `Show the ledger's entries, optionally of one task, repository or state.

For people: per task, a summary line (its steps done, failed and
attempting, and what is stuck and for how long), then each step: its state,
its artifact's link (or its last error) and its age. A
step attempting without a live holder is stuck: a crash or an unconfirmed
outcome left it, and 'ghonce reconcile' (or the same command again)
settles it. Tasks with stuck steps come first. The counts per status go to
stderr. With --table, one entry a line instead (AGE is the time since the
entry last moved toward done, "3m", "2h", "4d": a reconcile or a rerun that
settles nothing keeps it; long tasks and errors end in "…";
newlines and tabs inside a value are shown as \n and \t). With KEY, that
entry as a record, its last error in full, and its history: every
transition, which process or person made it and why (the --note of
'ghonce resolve' included).

With --stale DURATION, list only the attempting entries older than
DURATION, and exit 5 if there are any: for a monitor. They are what a
crash left behind: run 'ghonce reconcile', and settle by hand ('ghonce
resolve') what stays attempting. An entry reconcile cannot settle keeps its
age, so it stays stale until a person settles it.

With --json, one object: entries, counts per status, stale; with KEY also
key, state and each entry's history.
` + cmdutil.FilterHelp,
		Args: cobra.MaximumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Key = args[0]
			}
			return cmdutil.RunOr(c.Context(), opts, runF, statusRun)
		},
	}
	c.Flags().StringVar(&opts.State, "state", "", "only entries in this state: attempting, done or failed")
	c.Flags().DurationVar(&opts.Stale, "stale", 0, "list only attempting entries older than this (e.g. 15m); exit 5 if there are any")
	c.Flags().BoolVar(&opts.Table, "table", false, "one line per entry (key, status, kind, task, step, repo, ref, tries, age, last error) instead of the summary per task")
	cmdutil.AddLedgerFlag(c, &opts.Ledger)
	cmdutil.AddFilterFlags(c, &opts.Filter)
	cmdutil.AddJSONFlag(c, &opts.JSON)
	return c
}

func statusRun(ctx context.Context, opts *statusOptions) error {
	f := opts.f
	filter, err := opts.Filter.Filter(f.IO.Getenv)
	if err != nil {
		return err
	}
	p := ledger.ListParams{Task: filter.Task, Repo: f.NarrowIn(opts.Ledger, filter.Repo), Status: ledger.Status(opts.State)}
	if opts.State != "" && !p.Status.Valid() {
		return cmdutil.Usagef("invalid --state %q: want attempting, done or failed", opts.State)
	}
	if opts.Stale < 0 {
		return cmdutil.Usagef("invalid --stale %s: want a positive duration such as 15m", opts.Stale)
	}
	if opts.Key != "" {
		if err := checkKeyArg(opts.Key); err != nil {
			return err
		}
	}
	l, err := f.OpenLedgerToRead(ctx, opts.Ledger, opts.Filter.Repo)
	if err != nil {
		return err
	}
	defer l.Close()
	// Ages are read on the ledger's clock, which dated the entries (on
	// Postgres the server's), not on this machine's.
	now, err := l.Now(ctx)
	if err != nil {
		return &failure.LedgerError{Err: err}
	}
	if opts.Stale > 0 && (p.Status == "" || p.Status == ledger.Attempting) {
		// The ledger selects the stale entries itself (from its index of
		// entries not done), rather than all of them for the loop below.
		p.Status, p.UpdatedBefore = ledger.Attempting, now.Add(-opts.Stale)
	}
	entries, history, err := readStatus(ctx, l, opts.Key, p)
	if err != nil {
		return err
	}
	stale := 0
	if opts.Stale > 0 {
		// --stale lists only the stale entries: what a person must look at
		// (this also judges the one entry of `status KEY`).
		kept := entries[:0:0]
		for _, e := range entries {
			if e.Status == ledger.Attempting && now.Sub(e.UpdatedAt) > opts.Stale {
				kept = append(kept, e)
			}
		}
		entries, stale = kept, len(kept)
	}
	switch {
	case opts.JSON:
		err = printStatusJSON(f, opts, now, entries, history, stale)
	case opts.Key != "" && len(entries) == 1:
		printStatusRecord(f.IO.Out, now, entries[0], history)
	case opts.Key == "" && opts.Table:
		printStatusTable(f, now, entries)
	case opts.Key == "":
		printStatusSummary(f, now, entries)
	}
	if err != nil {
		return err
	}
	if stale > 0 {
		fmt.Fprintf(f.IO.Err, "ghonce: %d attempting %s older than %s: %s\n",
			stale, cmdutil.Plural(stale, "entry", "entries"), human.Duration(opts.Stale), failure.Next(failure.Stale, ""))
		return &cmdutil.SilentError{Code: failure.ExitStale}
	}
	return nil
}

// readStatus reads one entry and its history (key set) or the entries p
// selects.
func readStatus(ctx context.Context, l ledger.Ledger, key string, p ledger.ListParams) ([]*ledger.Entry, []ledger.Transition, error) {
	if key == "" {
		entries, err := l.List(ctx, p)
		if err != nil {
			return nil, nil, &failure.LedgerError{Err: fmt.Errorf("list ledger: %w", err)}
		}
		return entries, nil, nil
	}
	e, err := l.Get(ctx, key)
	if errors.Is(err, ledger.ErrNotFound) {
		return nil, nil, &failure.Keyed{Key: key, Err: fmt.Errorf("status %s: no such entry in the ledger; see `ghonce status`: %w", key, err)}
	}
	if err != nil {
		return nil, nil, &failure.Keyed{Key: key, Err: &failure.LedgerError{Err: fmt.Errorf("read %s: %w", key, err)}}
	}
	history, err := l.History(ctx, key)
	if err != nil {
		return nil, nil, &failure.Keyed{Key: key, State: e.Status, Err: &failure.LedgerError{Err: fmt.Errorf("read history of %s: %w", key, err)}}
	}
	return []*ledger.Entry{e}, history, nil
}

// countStatus counts entries per status; every status is present.
func countStatus(entries []*ledger.Entry) map[ledger.Status]int {
	n := map[ledger.Status]int{ledger.Attempting: 0, ledger.Done: 0, ledger.Failed: 0}
	for _, e := range entries {
		n[e.Status]++
	}
	return n
}

func printStatusJSON(f *cmdutil.Factory, opts *statusOptions, now time.Time, entries []*ledger.Entry, history []ledger.Transition, stale int) error {
	out := statusJSON{OutcomeJSON: cmdutil.Succeeded(), Entries: make([]entryJSON, 0, len(entries)), Stale: stale, Counts: countStatus(entries)}
	for _, e := range entries {
		j := newEntryJSON(e)
		if e.LeaseLive(now) {
			j.Holder = &holderJSON{ID: e.Owner.ID, Host: e.Owner.Host, PID: e.Owner.PID, LeaseUntil: e.LeaseUntil.UTC(), State: holderState(e).String()}
		}
		out.Entries = append(out.Entries, j)
	}
	if opts.Key != "" {
		out.Key = opts.Key
		if len(entries) == 1 {
			out.State = string(entries[0].Status)
			hist := make([]transitionJSON, 0, len(history))
			for _, h := range history {
				hist = append(hist, transitionJSON{At: h.At, Owner: h.Owner, From: h.From, To: h.To, Fence: h.Fence, Why: h.Why})
			}
			out.Entries[0].History = hist
		}
	}
	if stale > 0 {
		out.OutcomeJSON = cmdutil.OutcomeJSON{ExitCode: failure.ExitStale}
		out.Error = &failure.Error{Kind: failure.Stale, Message: fmt.Sprintf("%d attempting %s older than %s", stale, cmdutil.Plural(stale, "entry", "entries"), human.Duration(opts.Stale))}
		out.Next = failure.Next(failure.Stale, "")
	}
	return f.WriteJSON(out)
}

// Widths of the table's free-text columns; longer values end in "…".
const (
	taskWidth  = 24
	stepWidth  = 16
	errorWidth = 48
)

// printStatusTable prints entries as a table on stdout, one line each
// (every field escaped so a newline or tab in it cannot break a line), and
// the counts per status on stderr.
func printStatusTable(f *cmdutil.Factory, now time.Time, entries []*ledger.Entry) {
	n := countStatus(entries)
	summary := fmt.Sprintf("ghonce: %d %s: %d attempting, %d done, %d failed",
		len(entries), cmdutil.Plural(len(entries), "entry", "entries"), n[ledger.Attempting], n[ledger.Done], n[ledger.Failed])
	if len(entries) == 0 {
		fmt.Fprintln(f.IO.Err, summary)
		return
	}
	w := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "KEY\tSTATUS\tKIND\tTASK\tSTEP\tREPO\tREF\tTRIES\tAGE\tLAST ERROR")
	for _, e := range entries {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n",
			escape(e.Key), e.Status, escape(e.Kind), truncate(escape(e.Task), taskWidth), truncate(escape(e.Step), stepWidth),
			cmdutil.OrDash(escape(e.Repo)), cmdutil.OrDash(escape(refText(e.Ref))), e.Attempts, human.Age(now.Sub(e.UpdatedAt)),
			cmdutil.OrDash(truncate(escape(e.LastError), errorWidth)))
	}
	_ = w.Flush()
	fmt.Fprintln(f.IO.Err, summary)
}

// printStatusSummary prints, for a person, each task's summary line and
// its steps (state, artifact link or last error, age), the tasks with
// stuck steps first, then the most recently active; the counts per status
// go to stderr as with the table.
func printStatusSummary(f *cmdutil.Factory, now time.Time, entries []*ledger.Entry) {
	n := countStatus(entries)
	counts := fmt.Sprintf("ghonce: %d %s: %d attempting, %d done, %d failed",
		len(entries), cmdutil.Plural(len(entries), "entry", "entries"), n[ledger.Attempting], n[ledger.Done], n[ledger.Failed])
	type task struct {
		name    string
		steps   []*ledger.Entry
		stuck   time.Duration // the longest a step has been stuck; 0: none
		nStuck  int
		latest  time.Time
		perStat map[ledger.Status]int
	}
	byName := map[string]*task{}
	var tasks []*task
	for _, e := range entries {
		t := byName[e.Task]
		if t == nil {
			t = &task{name: e.Task, perStat: map[ledger.Status]int{}}
			byName[e.Task] = t
			tasks = append(tasks, t)
		}
		t.steps = append(t.steps, e)
		t.perStat[e.Status]++
		if e.UpdatedAt.After(t.latest) {
			t.latest = e.UpdatedAt
		}
		if stuck(e, now) {
			t.nStuck++
			t.stuck = max(t.stuck, now.Sub(e.UpdatedAt))
		}
	}
	slices.SortStableFunc(tasks, func(a, b *task) int {
		if (a.nStuck > 0) != (b.nStuck > 0) {
			if a.nStuck > 0 {
				return -1
			}
			return 1
		}
		return b.latest.Compare(a.latest)
	})
	out := f.IO.Out
	for i, t := range tasks {
		if i > 0 {
			fmt.Fprintln(out)
		}
		var parts []string
		for _, st := range []ledger.Status{ledger.Done, ledger.Failed, ledger.Attempting} {
			if k := t.perStat[st]; k > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", k, st))
			}
		}
		head := fmt.Sprintf("%s: %d %s, %s", escape(t.name), len(t.steps), cmdutil.Plural(len(t.steps), "step", "steps"), strings.Join(parts, ", "))
		if t.nStuck > 0 {
			head += fmt.Sprintf("; %d stuck, the longest for %s: run `ghonce reconcile`", t.nStuck, human.Age(t.stuck))
		}
		fmt.Fprintln(out, head)
		slices.SortStableFunc(t.steps, func(a, b *ledger.Entry) int { return a.CreatedAt.Compare(b.CreatedAt) })
		w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		for _, e := range t.steps {
			state, what := string(e.Status), cmdutil.OrDash(escape(artifactLink(e)))
			switch {
			case stuck(e, now):
				state = "attempting, stuck " + human.Age(now.Sub(e.UpdatedAt))
				if e.LeaseLive(now) {
					state += fmt.Sprintf(" (its process %d on %s is dead)", e.Owner.PID, escape(e.Owner.Host))
				}
				what = cmdutil.OrDash(truncate(escape(e.LastError), errorWidth))
			case e.Status == ledger.Attempting && holderState(e) == holderUnknown:
				holder := "a process on another machine" // a repository ledger's holder is opaque
				if e.Owner.PID != 0 {
					holder = fmt.Sprintf("process %d on %s", e.Owner.PID, escape(e.Owner.Host))
				}
				state = fmt.Sprintf("attempting, held by %s until %s (another machine: alive or not, ghonce cannot see)",
					holder, e.LeaseUntil.UTC().Format(time.TimeOnly))
			case e.Status == ledger.Attempting:
				state = fmt.Sprintf("attempting, running (process %d on %s)", e.Owner.PID, escape(e.Owner.Host))
			case e.Status == ledger.Failed:
				what = cmdutil.OrDash(truncate(escape(e.LastError), errorWidth))
			}
			fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s ago\n", truncate(escape(e.Step), stepWidth), escape(e.Kind), state, what, human.Age(now.Sub(e.UpdatedAt)))
		}
		_ = w.Flush()
	}
	fmt.Fprintln(f.IO.Err, counts)
}

// stuck reports whether e is attempting with no live holder: a crash or
// an unconfirmed outcome left it for the next run or `ghonce reconcile`.
// A lease whose process on this machine is proven dead holds nothing: the
// next run takes it over at once.
func stuck(e *ledger.Entry, now time.Time) bool {
	return e.Status == ledger.Attempting && (!e.LeaseLive(now) || holderState(e) == holderDead)
}

// What this machine can tell of an entry's holder.
type holderSeen string

const (
	holderRunning holderSeen = "running" // a process of this machine that runs
	holderDead    holderSeen = "dead"    // a process of this machine that is gone
	holderUnknown holderSeen = "unknown" // another machine, boot or namespace, or an identity too old to tell
)

func (h holderSeen) String() string { return string(h) }

// holderState is what this machine can prove of e's holder (procid).
func holderState(e *ledger.Entry) holderSeen {
	switch procid.Check(e.Owner.Proc()) {
	case procid.Alive:
		return holderRunning
	case procid.Gone:
		return holderDead
	}
	return holderUnknown
}

// holderText says who holds e's live lease, until when, and what this
// machine can tell of it.
func holderText(e *ledger.Entry) string {
	h := fmt.Sprintf("process %d on %s (%s), lease until %s", e.Owner.PID, escape(e.Owner.Host), escape(e.Owner.ID), e.LeaseUntil.UTC().Format(time.RFC3339))
	switch holderState(e) {
	case holderRunning:
		return h + ": running"
	case holderDead:
		return h + ": dead (the next run takes it over at once)"
	}
	return h + ": on another machine; whether it still runs, ghonce cannot see"
}

// artifactLink is what a person follows to the artifact: its URL, else its
// name or what a guarded command's check printed.
func artifactLink(e *ledger.Entry) string {
	if e.Ref.URL != "" {
		return e.Ref.URL
	}
	return refText(e.Ref)
}

// printStatusRecord prints one entry as a vertical record, its last error
// in full, then its history.
func printStatusRecord(out io.Writer, now time.Time, e *ledger.Entry, history []ledger.Transition) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	when := func(t time.Time) string {
		return fmt.Sprintf("%s (%s ago)", t.UTC().Format(time.RFC3339), human.Age(now.Sub(t)))
	}
	for _, kv := range [][2]string{
		{"key", e.Key}, {"status", string(e.Status)}, {"kind", e.Kind}, {"task", escape(e.Task)}, {"step", escape(e.Step)},
		{"repo", cmdutil.OrDash(e.Repo)}, {"target", cmdutil.OrDash(escape(e.Target))}, {"outcome", cmdutil.OrDash(e.Outcome)},
		{"ref", cmdutil.OrDash(escape(refText(e.Ref)))}, {"attempts", fmt.Sprint(e.Attempts)},
		{"created", when(e.CreatedAt)}, {"updated", when(e.UpdatedAt)},
	} {
		fmt.Fprintf(w, "%s:\t%s\n", kv[0], kv[1])
	}
	if e.LeaseLive(now) {
		fmt.Fprintf(w, "holder:\t%s\n", holderText(e))
	}
	_ = w.Flush()
	// The last error in full: its lines indented under the label.
	if e.LastError == "" {
		fmt.Fprintln(out, "last error:  -")
	} else {
		fmt.Fprintln(out, "last error:")
		for _, line := range strings.Split(strings.TrimRight(e.LastError, "\n"), "\n") {
			fmt.Fprintln(out, "  "+strings.ReplaceAll(line, "\t", " "))
		}
	}
	fmt.Fprintln(out, "history:")
	hw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	for _, h := range history {
		from := string(h.From)
		if from == "" {
			from = "-"
		}
		fmt.Fprintf(hw, "  %s\t%s ago\t%s → %s\tby %s\t%s\n", h.At.UTC().Format(time.RFC3339), human.Age(now.Sub(h.At)), from, h.To, escape(h.Owner), escape(h.Why))
	}
	_ = hw.Flush()
}

// refText is the ref column: the artifact's name, or what a guarded
// command's check printed.
func refText(r ledger.Ref) string {
	if n := r.Name(); n != "" {
		return n
	}
	return r.Text
}

// escape shows the characters that would break a line or a column as Go
// escapes (\n, \r, \t), so a value stays on its line and in its column.
func escape(s string) string {
	return strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
}

// truncate cuts s to n characters, the last one "…".
func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
