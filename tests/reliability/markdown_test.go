package reliability

import (
	_ "embed"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/reconcile"
)

// reportMD is the report's prose and tables; reportView is what it reads.
//
//go:embed report.md.tmpl
var reportMD string

var reportTemplate = template.Must(template.New("report.md.tmpl").Funcs(template.FuncMap{"join": strings.Join}).Parse(reportMD))

// reportView is a Report as the template reads it: figures, and table
// cells already escaped for Markdown.
type reportView struct {
	Command, Profile, Started, Machine, Runtime              string
	KillRuns, RandomRuns, RaceRounds, FaultRuns, MaxAttempts int
	Seed                                                     int64
	PG, GH, GHFaultsAll                                      bool
	PGLabel, PGEnv, GHLabel                                  string
	PGKillRuns, PGMachines, PGRandomRuns, PGRaceRounds       int
	GHRandomRuns                                             int
	Settle, DefaultSettle                                    string
	Totals                                                   [][]string
	NSSkipped, NSSkippedRaw                                  string
	Findings                                                 int
	Failures                                                 []string

	Kill, Random, Race, Fault, NS, Audit, Bad [][]string
	RandomInfo                                []string
	NSLease, NSRacerWait                      time.Duration
	SecretOutputs, SecretFiles                int
	Leaks                                     []string
	Panics, Locked                            int
	Measured                                  []measured
	UnlabelledPRs, RecentPRs                  int
}

// measured is a row marked finding, in Measured findings.
type measured struct {
	Kind, What, Ledger       string
	Runs, Dups, Lost, Person int
	Causes, Notes            string
}

// Markdown renders the report.
func (rep *Report) Markdown() string { return rep.render("report") }

// Summary is the report's head: how it was made, what it counts, and the
// totals.
func (rep *Report) Summary() string { return rep.render("summary") }

func (rep *Report) render(name string) string {
	var b strings.Builder
	if err := reportTemplate.ExecuteTemplate(&b, name, rep.view()); err != nil {
		panic(err) // the template is embedded: an error is a bug in it, which every test of the report shows
	}
	return b.String()
}

func (rep *Report) view() *reportView {
	cfg, pr := rep.cfg, rep.cfg.Profile
	v := &reportView{
		Command: commandFor(pr.name), Profile: pr.name, Started: rep.started.UTC().Format("2006-01-02 15:04 MST"),
		Machine: machine(), Runtime: rep.dur.Round(time.Second).String(),
		KillRuns: pr.killRuns, RandomRuns: pr.randomRuns, RaceRounds: pr.raceRounds, FaultRuns: pr.faultRuns, MaxAttempts: pr.maxAttempts,
		Seed: cfg.Seed, PG: rep.pg, GH: rep.gh, GHFaultsAll: pr.ghFaultsAll,
		PGLabel: pgLabel, PGEnv: pgEnv, GHLabel: ghLabel,
		PGKillRuns: pr.pgKillRuns, PGMachines: pgMachines, PGRandomRuns: pr.pgRandomRuns, PGRaceRounds: pr.pgRaceRounds, GHRandomRuns: pr.ghRandomRuns,
		Settle: matrixSettle.String(), DefaultSettle: reconcile.DefaultSettle.String(),
		NSSkipped: md(rep.nsSkipped), NSSkippedRaw: rep.nsSkipped,
		RandomInfo: rep.randomInfo, NSLease: nsLease, NSRacerWait: nsRacerWait,
		SecretOutputs: rep.secrets.outputs, SecretFiles: rep.secrets.files, Leaks: rep.secrets.leaks,
		Panics: len(rep.secrets.panics), Locked: len(rep.secrets.locked), RecentPRs: ghcheck.RecentPRs,
	}
	for _, f := range rep.Failures() {
		v.Failures = append(v.Failures, md(f))
	}
	for _, part := range []struct {
		name string
		rows []*row
	}{{"kill points", rep.kill}, {"randomised kills", rep.random}, {"races", rep.race}, {"GitHub faults", rep.fault}, {"another PID namespace", rep.ns}, {"bad input", rep.bad}} {
		if len(part.rows) == 0 {
			continue
		}
		var runs, procs, kills, dups, lost, person int
		for _, r := range part.rows {
			if r.finding {
				v.Findings++
				continue
			}
			runs, procs, kills, dups, lost, person = runs+r.runs, procs+max(r.procs, r.runs), kills+r.kills, dups+r.dups, lost+r.lost, person+r.person
		}
		v.Totals = append(v.Totals, append([]string{part.name}, ints(runs, procs, kills, dups, lost, person)...))
	}
	for _, r := range rep.kill {
		v.Kill = append(v.Kill, r.cells(true))
	}
	for _, r := range rep.random {
		v.Random = append(v.Random, r.cells(false))
	}
	for _, r := range rep.ns {
		v.NS = append(v.NS, r.cells(true))
	}
	for _, r := range rep.race {
		what := r.ledger
		if r.finding {
			what += " — *finding*"
		}
		v.Race = append(v.Race, []string{r.kind, what, r.what, strconv.Itoa(r.dups), strconv.Itoa(r.dupRounds), strconv.Itoa(r.lost), md(countList(r.exits)), md(r.personCell()), md(strings.Join(r.notes, "; "))})
	}
	for _, r := range rep.fault {
		v.Fault = append(v.Fault, r.faultCells())
	}
	for _, r := range rep.bad {
		files := r.files
		if len(r.notes) > 0 {
			files += " (" + strings.Join(r.notes, "; ") + ")"
		}
		v.Bad = append(v.Bad, []string{md(r.what), r.exitText, md(r.causeList()), r.requests, md(files)})
	}
	for _, r := range rep.audit {
		v.Audit = append(v.Audit, r.cells())
	}
	for _, part := range [][]*row{rep.kill, rep.race} {
		for _, r := range part {
			if r.finding {
				v.Measured = append(v.Measured, measured{Kind: r.kind, What: r.what, Ledger: r.ledger, Runs: r.runs, Dups: r.dups, Lost: r.lost, Person: r.person, Causes: r.causeList(), Notes: strings.Join(r.notes, "; ")})
			}
		}
	}
	for _, part := range [][]*row{rep.kill, rep.random, rep.fault} {
		for _, r := range part {
			if !r.finding {
				v.UnlabelledPRs += r.flags["PR left without its labels"]
			}
		}
	}
	return v
}

func ints(ns ...int) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = strconv.Itoa(n)
	}
	return out
}

// cells is r's line in a kill-point, randomised or PID-namespace table.
func (r *row) cells(withLedger bool) []string {
	what := r.what
	if r.finding {
		what += " — *finding*"
	}
	notes := r.notes
	if f := countList(r.flags); f != "" {
		notes = append([]string{f}, notes...)
	}
	if r.finding && r.kind != "exec-nocheck" {
		notes = nil // in Measured findings
	}
	c := []string{r.kind, what}
	if withLedger {
		c = append(c, r.ledger)
	}
	c = append(c, ints(r.runs, r.kills, r.dups, r.lost, r.exit3)...)
	return append(c, md(r.personCell()), strconv.Itoa(r.maxReruns), md(strings.Join(notes, "; ")))
}

// faultCells is r's line in the faults table.
func (r *row) faultCells() []string {
	notes := r.notes
	if f := countList(r.flags); f != "" {
		notes = append([]string{f}, notes...)
	}
	var whats []string
	for w := range r.waits {
		if !strings.HasSuffix(w, " (asked)") {
			whats = append(whats, w)
		}
	}
	sort.Strings(whats)
	for _, w := range whats {
		notes = append(notes, fmt.Sprintf("%s: %s (GitHub asked for at least %s)", w, span(r.waits[w]), span(r.waits[w+" (asked)"])))
	}
	first := map[string]int{}
	for c, n := range r.causes {
		if len(c) > 110 {
			c = c[:110] + "…"
		}
		first[c] += n
	}
	return []string{r.kind, md(r.what), strconv.Itoa(r.runs), md(countList(first)), r.ledger, strconv.Itoa(r.dups), strconv.Itoa(r.lost), strconv.Itoa(r.person), strconv.Itoa(r.maxReruns), md(strings.Join(notes, "; "))}
}

func commandFor(profile string) string {
	switch profile {
	case "full":
		return "make reliability"
	case "short":
		return "make reliability-short"
	}
	return "go test ./tests/reliability"
}

// span renders durations as "1.00 s" or "3.34–3.99 s".
func span(ds []time.Duration) string {
	if len(ds) == 0 {
		return "—"
	}
	lo, hi := ds[0], ds[0]
	for _, d := range ds {
		lo, hi = min(lo, d), max(hi, d)
	}
	if hi-lo < 10*time.Millisecond {
		return fmt.Sprintf("%.2f s", lo.Seconds())
	}
	return fmt.Sprintf("%.2f–%.2f s", lo.Seconds(), hi.Seconds())
}

func md(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	s = strings.ReplaceAll(s, "\n", " ")
	return s
}
