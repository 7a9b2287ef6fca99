package main

import (
	_ "embed"
	"fmt"
	"slices"
	"strings"
	"text/template"
	"time"
)

// generatedSections are the ## headings render writes; an earlier report's
// other sections are kept (keptSections).
var generatedSections = []string{
	"Machine",
	"Targets",
	"Ledger benchmarks",
	"Peers: two naive ledgers",
	"Where the time goes",
	githubRequestsSection,
	wireSection,
	repoLedgerSection,
	reconcileSection,
	concurrentSection,
}

// retiredSections are headings earlier reports wrote that render no longer
// does: dropped, never kept, so a renamed section leaves no stale copy.
var retiredSections = []string{
	"Peers: the seeds' ledgers",
}

func (r *report) med(name string) float64 { return median(r.ns[name]) }

func (r *report) rng(name string) string {
	xs := r.ns[name]
	if len(xs) == 0 {
		return "not run"
	}
	return fmt.Sprintf("%s – %s", dur(slices.Min(xs)), dur(slices.Max(xs)))
}

// dur formats nanoseconds for a reader.
func dur(ns float64) string {
	switch {
	case ns == 0:
		return "—"
	case ns < 10_000:
		return fmt.Sprintf("%.2f µs", ns/1e3)
	case ns < 1_000_000:
		return fmt.Sprintf("%.0f µs", ns/1e3)
	default:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	}
}

func met(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func (r *report) summary() string {
	var b strings.Builder
	fresh, floor := r.med("ClaimFinish/entries=1k"), r.med("Fdatasync")
	fmt.Fprintf(&b, "fresh action timed in turn with one fdatasync (ClaimFinishVsFdatasync, 1k): %s vs %s, ratio %.2f× (a guard; the 1.6× target is retired); ClaimFinish alone %s, Fdatasync alone %s\n",
		dur(median(r.pair[pairName])), dur(median(r.pairFloor[pairName])), median(r.ratio[pairName]), dur(fresh), dur(floor))
	fmt.Fprintf(&b, "forced done (ClaimFinishForced): %s; SQLite's minimal durable commit (SQLiteCommit): %s\n", dur(r.med("ClaimFinishForced")), dur(r.med("SQLiteCommit")))
	fmt.Fprintf(&b, "replay (ClaimDone, 1k): %s (target ≤ 10 µs); first replay in a process: %s\n", dur(r.med("ClaimDone/entries=1k")), dur(r.med("ClaimDoneFirst/entries=1k")))
	fmt.Fprintf(&b, "growth 1k → 1M: ClaimFinish %.2f×, ClaimDone %.2f×, ClaimDoneFirst %.2f× (target ≤ 1.2×)\n",
		ratio(r.med("ClaimFinish/entries=1M"), fresh), ratio(r.med("ClaimDone/entries=1M"), r.med("ClaimDone/entries=1k")),
		ratio(r.med("ClaimDoneFirst/entries=1M"), r.med("ClaimDoneFirst/entries=1k")))
	fmt.Fprintf(&b, "CLI replay: median %.2f ms, p90 %.2f ms (target median ≤ 10 ms); process start: ghonce --help %.2f ms, /bin/true %.2f ms\n",
		median(r.cli["CLIReplay"]), median(r.cliP90["CLIReplay"]), median(r.cliStart["CLIReplay"]), median(r.cli["ProcessStart/bin-true"]))
	for _, p := range r.peers {
		fmt.Fprintf(&b, "peer %s, %s entries, N=%d: fresh %.1f µs/op, replay %.1f µs/op %s\n", p.name, p.entries, p.n, p.fresh, p.replay, p.note)
	}
	if r.peersNote != "" {
		fmt.Fprintf(&b, "peers: %s\n", r.peersNote)
	}
	for _, backend := range []string{"sqlite", "postgres"} {
		for _, row := range r.concurrentRows(backend) {
			if row.Found {
				fmt.Fprintf(&b, "concurrent claims, %s, %d workers: %.0f ops/s, p50 %s, p99 %s\n", row.Backend, row.Workers, row.Ops, ms(row.P50), ms(row.P99))
			}
		}
	}
	if r.concurrentNote != "" {
		fmt.Fprintf(&b, "concurrent claims: %s\n", r.concurrentNote)
	}
	if r.githubNote != "" {
		fmt.Fprintf(&b, "GitHub requests: %s\n", r.githubNote)
	}
	if a := r.action; a.note != "" {
		fmt.Fprintf(&b, "the action's build: %s\n", a.note)
	} else {
		cold := "not measured (-action-cold=false)"
		if a.cold > 0 {
			cold = secs(a.cold)
		}
		fmt.Fprintf(&b, "the action's build: cold %s, warm %s, after an upgrade %s (target ≤ %s)\n", cold, secsRange(a.warm), secsRange(a.upgrade), secs(actionBuildTarget))
	}
	fmt.Fprintf(&b, "took: concurrent claims %s, GitHub report %s, the action's build %s, whole run %s\n", r.concurrentTook, r.githubTook, r.action.took, r.runtime)
	return b.String()
}

// performanceMD is docs/performance.md's prose and tables; perfView is
// what it reads, and med and rng read the ledger benchmarks by name.
//
//go:embed performance.md.tmpl
var performanceMD string

var performanceTemplate = template.Must(template.New("performance.md.tmpl").Funcs(template.FuncMap{
	"med": func(string) float64 { return 0 }, "rng": func(string) string { return "" }, // per report: render
	"dur": dur, "met": met, "ratio": ratio, "ms": ms, "grows": grows, "secs": secs, "secsRange": secsRange,
	"sub": func(a, b float64) float64 { return a - b }, "join": strings.Join,
}).Parse(performanceMD))

// perfView is a report as the template reads it.
type perfView struct {
	Date                     string
	Runtime                  time.Duration
	Rounds                   int
	Machine                  []string
	LoadBefore, LoadAfter    string
	BigLedgerBuilt           bool
	BigLedgerName            string
	Pair, PairFloor, RT      float64
	RTRange                  string
	CLIMed, CLIP90, StartMed float64
	TrueMed, CLIRequests     float64
	LedgerRows               []struct{ Name, What string }
	Postgres                 []string // `name` ns/op, per benchmark
	PostgresNote, PeersNote  string
	Peers                    []peerView
	Requests, Wire           githubView
	RepoLedger, Reconcile    githubView
	Action                   actionView
	Concurrent               concurrentView
}

type peerView struct {
	Name, Entries, Note string
	N                   int
	FreshNS, ReplayNS   float64
}

// githubView is one of TestGitHubReport's sections, or why it is missing.
type githubView struct {
	Heading, Body, Note string
	Measured            bool
	Took                time.Duration
	Requests            float64
}

type actionView struct {
	Note, ColdNote, WarmNote string
	Took, Cold, Target       time.Duration
	Warm, Upgrade            []time.Duration
	MB                       float64
	WarmMet, UpgradeMet      bool
}

type concurrentView struct {
	Heading, Benchtime, DefaultBenchtime, Note, Server string
	PostgresMeasured                                   bool
	SQLite, Postgres, Rows                             []concurrentRow
	PostgresNS                                         map[string]string
}

func (r *report) render() string {
	t := template.Must(performanceTemplate.Clone()).Funcs(template.FuncMap{"med": r.med, "rng": r.rng})
	var b strings.Builder
	if err := t.Execute(&b, r.view()); err != nil {
		panic(err) // the template is embedded: an error is a bug in it, which its tests show
	}
	return b.String()
}

func (r *report) view() *perfView {
	v := &perfView{
		Date: time.Now().UTC().Format("2006-01-02 15:04"), Runtime: r.runtime, Rounds: r.rounds,
		Machine: r.machine, LoadBefore: r.loadBefore, LoadAfter: r.loadAfter, BigLedgerBuilt: r.bigLedgerBuilt, BigLedgerName: bigLedgerName,
		Pair: median(r.pair[pairName]), PairFloor: median(r.pairFloor[pairName]), RT: median(r.ratio[pairName]), RTRange: ratioRange(r.ratio[pairName]),
		CLIMed: median(r.cli["CLIReplay"]), CLIP90: median(r.cliP90["CLIReplay"]), StartMed: median(r.cliStart["CLIReplay"]),
		TrueMed: median(r.cli["ProcessStart/bin-true"]), CLIRequests: r.cliRequests,
		LedgerRows: []struct{ Name, What string }{
			{"ClaimFinish", "a fresh action: Claim (forced) and Finish done marked Verifiable (not forced)"},
			{"ClaimDone", "a replay in a process that has read the entry before: the replay cache, checked with `PRAGMA data_version`"},
			{"ClaimDoneFirst", "a replay of an entry this process has not read (a new CLI process's case): one indexed read"},
		},
		PostgresNote: r.postgresNote, PeersNote: r.peersNote,
	}
	for _, p := range r.postgres {
		v.Postgres = append(v.Postgres, fmt.Sprintf("`%s` %s", p.name, dur(p.metrics["ns/op"])))
	}
	for _, p := range r.peers {
		v.Peers = append(v.Peers, peerView{Name: p.name, Entries: p.entries, Note: p.note, N: p.n, FreshNS: p.fresh * 1e3, ReplayNS: p.replay * 1e3})
	}
	gh := func(heading string) githubView {
		body, ok := r.github[heading]
		return githubView{Heading: heading, Body: body, Measured: ok, Took: r.githubTook, Note: strings.TrimSuffix(r.githubNote, "."), Requests: r.cliRequests}
	}
	v.Requests, v.Wire, v.RepoLedger, v.Reconcile = gh(githubRequestsSection), gh(wireSection), gh(repoLedgerSection), gh(reconcileSection)
	a := r.action
	warm, up := medianDuration(a.warm), medianDuration(a.upgrade)
	v.Action = actionView{Note: strings.TrimSuffix(a.note, "."), ColdNote: a.coldNote, WarmNote: a.warmNote, Took: a.took, Cold: a.cold, Target: actionBuildTarget,
		Warm: a.warm, Upgrade: a.upgrade, MB: float64(a.binBytes) / 1e6,
		WarmMet: warm > 0 && warm <= actionBuildTarget, UpgradeMet: up > 0 && up <= actionBuildTarget}
	sq, pg := r.concurrentRows("sqlite"), r.concurrentRows("postgres")
	c := concurrentView{Heading: concurrentSection, Benchtime: r.concurrentBenchtimeOr(), DefaultBenchtime: defaultConcurrentBenchtime,
		Note: strings.TrimSuffix(r.concurrentNote, "."), Server: r.postgresServer, PostgresMeasured: pg[0].Found || pg[1].Found || pg[2].Found,
		SQLite: sq, Postgres: pg, Rows: append(slices.Clone(sq), pg...), PostgresNS: map[string]string{}}
	for _, name := range []string{"ClaimFinish", "ClaimDone", "Open"} {
		c.PostgresNS[name] = "not measured"
		for _, p := range r.postgres {
			if p.name == name {
				c.PostgresNS[name] = dur(p.metrics["ns/op"])
			}
		}
	}
	v.Concurrent = c
	return v
}

// pairName is the benchmark that times the fresh action and its floor in turn.
const pairName = "ClaimFinishVsFdatasync"

func ratioRange(xs []float64) string {
	if len(xs) == 0 {
		return "none"
	}
	return fmt.Sprintf("%.2f–%.2f", slices.Min(xs), slices.Max(xs))
}
