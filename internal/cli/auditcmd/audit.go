// Package auditcmd is `ghonce audit`: the duplicates on GitHub, found
// and, with --apply, settled through the engine.
package auditcmd

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/internal/audit"
	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/internal/human"
	"github.com/ghonce/ghonce/ledger/store"
)

// auditOptions is `ghonce audit`.
type auditOptions struct {
	f       *cmdutil.Factory
	Ledger  cmdutil.LedgerFlag
	Repo    cmdutil.RepoFlag
	JSON    bool
	Engine  cmdutil.EngineFlags // --wait and --settle, for --apply's writes
	GitHub  cmdutil.GitHubFlags
	Since   string
	Authors []string
	Kinds   []string
	Summary string
	Apply   bool
	// HumanToo widens --apply to duplicates a person acted on.
	HumanToo bool
}

// NewCmdAudit is `ghonce audit`; runF, when a test gives one, gets the
// parsed options instead of the run.
func NewCmdAudit(f *cmdutil.Factory, runF func(*auditOptions) error) *cobra.Command {
	opts := &auditOptions{f: f, Engine: cmdutil.NewEngineFlags()}
	c := &cobra.Command{
		Use:   "audit [--repo O/R] [--since 30d] [--author LOGIN]... [--kind " + strings.Join(audit.AllKinds, ",") + "] [--json] [--summary FILE] [--apply]",
		Short: "Find the duplicates earlier runs left on a repository, and settle them once with --apply",
		Long: `Find the duplicates that runs without ghonce left on a repository: issues,
pull requests and comments made twice. Only evidence groups them, strongest
first:

  key    more than one artifact carrying the same ghonce key in its marker
         or label (comments: on one thread; a ledger entry only keeps apart)
  exact  issues with the same normalised title and body; comments with the
         same body on the same thread; pull requests on one base whose
         heads are the same commit or the same tree

Only artifacts this token's login (or a trusted login) wrote are grouped
or kept: a key on someone else's artifact proves nothing. Similar text is
never a duplicate: the same title with other text, the same text by
another author, the same body on another thread. Two artifacts the ledger
or their own markers record under different keys are two effects; an
issue filed again after a person closed one as completed is a recurrence;
a head commit GitHub cannot return proves nothing; branches are never
grouped. Look-alikes are listed apart, for a person, and never acted on.

Each group keeps one artifact: the oldest, unless it has no human activity
(comments, reviews, labels, reactions or references by a person, a linked
pull request, a merge, commits or a force-push by anyone but us) and a newer
one has. Issues, pull requests and
comments updated since --since are read in one repository-wide listing each
(never search, which lags); what people did to each artifact that may
group is read whole, whatever --since says; the requests spent are printed
on stderr.

The default is a dry run that says what --apply would do. --apply closes
duplicate issues as duplicates (state_reason) and duplicate pull requests,
each with a comment linking the kept one, and deletes duplicate comments,
but only a duplicate the kept one holds byte for byte after normalising (a
pull request: the same commit or tree); any other is reported for a person.
Right before each write, after waiting for the write pacing, it reads the
duplicate and the kept one again, and leaves the pair alone, saying why, if
either changed or the duplicate has new activity by anyone else. Every write goes through ghonce's engine and
ledger, once per (group, artifact): a second --apply writes nothing, one
killed half-way resumes. It never touches one a person acted on
(--include-human). Where the kept artifact carries a ghonce key, the ledger
records that key done; a ledger entry whose artifact --apply closed or
deleted is pointed at the kept one, so the next run of its task replays
the kept one.

A duplicate left alone keeps audit exiting 6 until a person decides: to
keep both, add the label ghonce-audit:keep to the duplicate (to a comment's
thread); it is then reported as acknowledged and no longer counted.

--json prints one object: {"groups": [...], "requests": N, ...}.
--summary FILE writes the report as Markdown (e.g. $GITHUB_STEP_SUMMARY).

Exit codes: 0 no open duplicate, 6 open duplicates found (after --apply: left
open; acknowledged ones do not count), 1 error, 2 usage.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return cmdutil.RunOr(c.Context(), opts, runF, auditRun)
		},
	}
	c.Flags().StringVar(&opts.Since, "since", "30d", "read issues, pull requests and comments updated since this long ago (30d, 12h, 2w) or this date (2026-11-01); 0 for all")
	c.Flags().StringArrayVar(&opts.Authors, "author", nil, "only groups with an artifact by this login (repeatable)")
	c.Flags().StringSliceVar(&opts.Kinds, "kind", nil, "only these kinds: "+strings.Join(audit.AllKinds, ", ")+" (comma-separated; default "+strings.Join(audit.DefaultKinds, ", ")+")")
	c.Flags().StringVar(&opts.Summary, "summary", "", "also write the report as Markdown to FILE (e.g. $GITHUB_STEP_SUMMARY; appended to)")
	c.Flags().BoolVar(&opts.Apply, "apply", false, "settle the duplicates (default: a dry run that says what it would do)")
	c.Flags().BoolVar(&opts.HumanToo, "include-human", false, "with --apply, also settle duplicates a person acted on")
	cmdutil.AddLedgerFlag(c, &opts.Ledger)
	cmdutil.AddRepoFlag(c, &opts.Repo)
	cmdutil.AddJSONFlag(c, &opts.JSON)
	cmdutil.AddWaitFlag(c, &opts.Engine.Wait)
	cmdutil.AddSettleFlag(c, &opts.Engine.Settle)
	cmdutil.AddGitHubFlags(c, &opts.GitHub)
	return c
}

// parseSince reads --since: a duration with d and w units, a date, or 0.
func parseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "0" || s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{"2006-01-02", time.RFC3339} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	if d, err := cmdutil.ParseAge(s); err == nil {
		return now.Add(-d), nil
	}
	return time.Time{}, cmdutil.Usagef("invalid --since %q: want a duration such as 30d, 12h or 2w, a date such as 2026-11-01, or 0 for all", s)
}

// auditJSON is what audit prints with --json.
type auditJSON struct {
	cmdutil.OutcomeJSON
	*audit.Report
	Requests int64 `json:"requests"`
	// Actions is what --apply did, or would do on a dry run.
	Actions []auditAction `json:"actions"`
	Applied bool          `json:"applied"`
}

// auditAction is one write --apply makes (or would make), or the reason it
// leaves a duplicate alone.
type auditAction struct {
	Kind    string `json:"kind"`
	Target  string `json:"target"`
	Keep    string `json:"keep"`
	Do      string `json:"do"`
	Skipped string `json:"skipped,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	URL     string `json:"url,omitempty"`
	// settled: this run closed, deleted or found it closed or gone.
	settled bool
}

func auditRun(ctx context.Context, opts *auditOptions) error {
	f := opts.f
	repoName, err := opts.Repo.OrEnv(f.IO.Getenv)
	if err != nil {
		return err
	}
	r, err := cmdutil.ParseRepo(repoName)
	if err != nil {
		return err
	}
	since, err := parseSince(opts.Since, f.IO.Now())
	if err != nil {
		return err
	}
	var kinds []string
	for _, k := range opts.Kinds {
		k = strings.TrimSpace(k)
		if !slices.Contains(audit.AllKinds, k) {
			return cmdutil.Usagef("invalid --kind %q: want one of %s", k, strings.Join(audit.AllKinds, ", "))
		}
		kinds = append(kinds, k)
	}
	gh, err := f.GitHub(ctx, opts.GitHub, opts.Repo)
	if err != nil {
		return err
	}
	// The ledger says which key each artifact it recorded is: --apply
	// needs it (made when missing); a dry run reads it when there is one.
	var l *store.Opened
	if opts.Apply {
		l, err = f.OpenLedgerWith(ctx, opts.Ledger, store.Options{Create: store.CreateForAction}, opts.Repo, gh)
	} else if l, err = f.OpenLedgerToRead(ctx, opts.Ledger, opts.Repo); err != nil {
		f.Logf("audit: no ledger to read (%v): the artifacts' own markers and labels alone say which keys are apart", err)
		l, err = nil, nil
	}
	if err != nil {
		return err
	}
	var recorded *ledgerArtifacts
	if l != nil {
		defer l.Close()
		if recorded, err = readLedgerArtifacts(ctx, l, r.String()); err != nil {
			return err
		}
	}
	prog := newAuditProgress(f.IO.Err)
	rep, err := audit.Find(ctx, gh, audit.Options{Repo: r, Since: since, Authors: opts.Authors, Kinds: kinds, Progress: prog.tell, Recorded: recorded.keyOf})
	prog.done()
	if err != nil {
		return err
	}
	actions := planActions(rep, opts)
	failed := 0
	if opts.Apply {
		if failed, err = applyActions(ctx, opts, l, gh, r, rep, actions, recorded); err != nil {
			return err
		}
	}
	left := rep.OpenDuplicates
	if opts.Apply {
		left = 0
		for _, g := range rep.Groups {
			for _, d := range g.Duplicates {
				if d.Open && d.AckedBy == "" && !settledBy(actions, g.Kind, d) {
					left++
				}
			}
		}
	}
	st := gh.Stats()
	if opts.Summary != "" {
		if err := writeAuditSummary(opts.Summary, rep, actions, opts.Apply, st.Requests); err != nil {
			return err
		}
	}
	if opts.JSON {
		out := auditJSON{OutcomeJSON: cmdutil.Succeeded(), Report: rep, Requests: st.Requests, Actions: actions, Applied: opts.Apply}
		if out.Actions == nil {
			out.Actions = []auditAction{}
		}
		switch {
		case failed > 0:
			out.OutcomeJSON = cmdutil.OutcomeJSON{ExitCode: failure.ExitError}
		case left > 0:
			out.OutcomeJSON = cmdutil.OutcomeJSON{ExitCode: failure.ExitDuplicates}
		}
		if err := f.WriteJSON(out); err != nil {
			return err
		}
	} else {
		printAuditTable(f.IO.Out, rep, actions, opts.Apply)
	}
	fmt.Fprintf(f.IO.Err, "ghonce: audit of %s: %d %s, %d open %s%s; read %d %s, %d %s, %d %s in %d GitHub %s\n",
		r, len(rep.Groups), cmdutil.Plural(len(rep.Groups), "group", "groups"), left, cmdutil.Plural(left, "duplicate", "duplicates"), leftWord(opts.Apply),
		rep.Listed["issues"], cmdutil.Plural(rep.Listed["issues"], "issue", "issues"), rep.Listed["prs"], cmdutil.Plural(rep.Listed["prs"], "pull request", "pull requests"),
		rep.Listed["comments"], cmdutil.Plural(rep.Listed["comments"], "comment", "comments"), st.Requests, cmdutil.Plural(int(st.Requests), "request", "requests"))
	if !opts.Apply && len(actions) > 0 {
		fmt.Fprintln(f.IO.Err, "ghonce: a dry run: nothing was changed; --apply makes the writes listed")
	}
	if failed > 0 {
		fmt.Fprintf(f.IO.Err, "ghonce: audit: %d %s failed; rerun 'ghonce audit --apply': what was done is not done again\n", failed, cmdutil.Plural(failed, "write", "writes"))
		return &cmdutil.SilentError{Code: failure.ExitError}
	}
	if left > 0 {
		return &cmdutil.SilentError{Code: failure.ExitDuplicates}
	}
	return nil
}

func leftWord(applied bool) string {
	if applied {
		return " left"
	}
	return ""
}

func settledBy(actions []auditAction, kind string, d audit.Artifact) bool {
	for _, a := range actions {
		if a.Kind == kind && a.Target == d.Ref(kind) && a.settled {
			return true
		}
	}
	return false
}

// planActions says, for each open duplicate, what --apply does to it, or
// why it leaves it alone.
func planActions(rep *audit.Report, opts *auditOptions) []auditAction {
	var out []auditAction
	for _, g := range rep.Groups {
		for _, d := range g.Duplicates {
			if !d.Open {
				continue
			}
			a := auditAction{Kind: g.Kind, Target: d.Ref(g.Kind), Keep: g.Keep.Ref(g.Kind)}
			rule := audit.Rule(g.Kind)
			switch rule.Settle {
			case "close", "close-pr":
				a.Do = "comment linking " + a.Keep + ", close as a duplicate"
			case "delete":
				a.Do = "delete the comment (the kept comment holds the same text)"
			}
			switch {
			case rule.Settle == "":
				a.Skipped = cmp.Or(rule.Leave, "reported only: --apply does not settle a "+g.Kind)
			case !d.Ours: // Find groups only ours; never act on another's
				a.Skipped = "written by " + d.Author + ", not this token's login"
			case d.AckedBy != "":
				a.Skipped = "acknowledged by " + d.AckedBy + " (label " + audit.AckLabel + ")"
			case d.Differs != "":
				a.Skipped = d.Differs + ": for a person (label it " + audit.AckLabel + " to keep both)"
			case d.HumanTouched() && !opts.HumanToo:
				a.Skipped = "a person acted on it: " + d.Human + " (--include-human; or label it " + audit.AckLabel + " to keep both)"
			}
			out = append(out, a)
		}
	}
	return out
}

func printAuditTable(w io.Writer, rep *audit.Report, actions []auditAction, applied bool) {
	if len(rep.Groups) == 0 {
		fmt.Fprintln(w, "no duplicates found")
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KIND\tEVIDENCE\tKEEP\tDUPLICATE\tAPART\tOPEN\tHUMAN\tAUTHOR\tACTION")
		for _, g := range rep.Groups {
			for _, d := range g.Duplicates {
				after := apart(d)
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", g.Kind, g.Evidence, g.Keep.Ref(g.Kind), d.Ref(g.Kind), after,
					yesNo(d.Open), cmdutil.OrDash(d.Human), d.Author, actionWord(actions, g.Kind, d, applied))
			}
		}
		_ = tw.Flush()
		fmt.Fprintln(w)
		for i, g := range rep.Groups {
			fmt.Fprintf(w, "group %d (%s, %s): %s; kept %s: %s\n", i+1, g.Kind, g.Evidence, g.Detail, g.Keep.Ref(g.Kind), keepWhy(g))
		}
	}
	for _, la := range rep.LookAlikes {
		fmt.Fprintf(w, "look-alike, not a duplicate (never acted on): %s %s share the title %q\n", la.Kind, joinInts(la.Numbers), la.Title)
	}
}

// apart is the time between a duplicate and the kept one: "4s later",
// "2m before" (a newer one kept for its human activity).
func apart(d audit.Artifact) string {
	if d.AfterSeconds == nil {
		return "-"
	}
	s := *d.AfterSeconds
	word := "later"
	if s < 0 {
		s, word = -s, "before"
	}
	return human.Duration(time.Duration(s*float64(time.Second))) + " " + word
}

func keepWhy(g audit.Group) string {
	if g.Keep.Human != "" {
		return "the oldest with human activity (" + g.Keep.Human + ")"
	}
	return "the oldest, nobody acted on a newer one"
}

func actionWord(actions []auditAction, kind string, d audit.Artifact, applied bool) string {
	for _, a := range actions {
		if a.Kind != kind || a.Target != d.Ref(kind) {
			continue
		}
		switch {
		case a.Skipped != "":
			return "left alone: " + a.Skipped
		case applied && a.Outcome != "":
			return a.Outcome
		case applied:
			return a.Do
		}
		return "would " + a.Do
	}
	return "-"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func joinInts(ns []int) string {
	var s []string
	for _, n := range ns {
		s = append(s, "#"+strconv.Itoa(n))
	}
	return strings.Join(s, ", ")
}

// writeAuditSummary appends the report to path as Markdown: the job
// summary of a scheduled workflow.
func writeAuditSummary(path string, rep *audit.Report, actions []auditAction, applied bool, requests int64) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## ghonce audit of %s\n\n", rep.Repo)
	open := rep.OpenDuplicates
	fmt.Fprintf(&b, "%d %s, %d open %s; %d GitHub requests.\n\n", len(rep.Groups), cmdutil.Plural(len(rep.Groups), "group", "groups"), open, cmdutil.Plural(open, "duplicate", "duplicates"), requests)
	if len(rep.Groups) > 0 {
		b.WriteString("| kind | evidence | keep | duplicate | open | human | author | action |\n|---|---|---|---|---|---|---|---|\n")
		for _, g := range rep.Groups {
			for _, d := range g.Duplicates {
				fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", g.Kind, g.Evidence, mdLink(g.Keep.Ref(g.Kind), g.Keep.URL), mdLink(d.Ref(g.Kind), d.URL),
					yesNo(d.Open), mdCell(cmdutil.OrDash(d.Human)), mdCell(d.Author), mdCell(actionWord(actions, g.Kind, d, applied)))
			}
		}
		b.WriteString("\n")
	}
	for _, la := range rep.LookAlikes {
		fmt.Fprintf(&b, "- look-alike, not a duplicate: %s %s share the title %q\n", la.Kind, joinInts(la.Numbers), la.Title)
	}
	fl, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return cmdutil.Usagef("write --summary: %v", err)
	}
	if _, err := fl.WriteString(b.String()); err != nil {
		fl.Close()
		return fmt.Errorf("write summary %s: %w", path, err)
	}
	if err := fl.Close(); err != nil {
		return fmt.Errorf("write summary %s: %w", path, err)
	}
	return nil
}

func mdLink(text, url string) string {
	if url == "" {
		return mdCell(text)
	}
	return "[" + mdCell(text) + "](" + url + ")"
}

func mdCell(s string) string { return strings.NewReplacer("|", `\|`, "\n", " ").Replace(s) }

// auditProgress shows, on a terminal only, how much of each listing has
// been read.
type auditProgress struct {
	w    io.Writer
	on   bool
	last string
}

func newAuditProgress(w io.Writer) *auditProgress {
	return &auditProgress{w: w, on: cmdutil.IsTerminal(w)}
}

func (p *auditProgress) tell(what string, n int) {
	if !p.on {
		return
	}
	p.last = what
	fmt.Fprintf(p.w, "\rghonce: reading %s: %d\x1b[K", what, n)
}

func (p *auditProgress) done() {
	if p.on && p.last != "" {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
