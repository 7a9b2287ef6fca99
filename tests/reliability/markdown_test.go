package reliability

import (
	"fmt"
	"github.com/ghonce/ghonce/reconcile"
	"sort"
	"strings"
	"time"

	"github.com/ghonce/ghonce/ghcheck"
)

// Markdown renders the report.
func (rep *Report) Markdown() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	cfg := rep.cfg
	b.WriteString(rep.Summary())
	if len(rep.kill) > 0 {
		p("## Kill points\n\nThe first run of each trial is killed at the point; crash points (in parentheses) exist only in a binary built with `-tags ghonce_crashpoints`. ")
		p("\"In flight\" kills land in the fake's `BeforeWrite` hook (the request has arrived, nothing is stored); \"after GitHub commits\" in its `OnCommit` hook (stored, no answer yet). ")
		p("For `exec` (a guarded command with `--check`) the same two points are in the handler of the service the command posts to. ")
		p("PR reruns with the ledger kept push a new head branch and reword the title and body; all reruns of PRs, issues and comments reword the text. ")
		p("A reworded rerun that nothing proves a retry (a run before it answered, or the ledger was lost) gets the facts, exit 7 (docs/design/same-act.md): the agent, whose every run is one act, stops there with the artifact they name, and the row says so.\n\n")
		rowsTable(&b, rep.kill, "kill point", true)
	}
	if len(rep.random) > 0 {
		p("## Randomised kills\n\n")
		p("Each trial's first run is killed at a uniformly random delay after its start, reruns are killed again with probability 1/2 (at most twice), ")
		p("then rerun until exit 0. The fake answers every request after a latency drawn per trial from {0, 2 ms, 10 ms}, so kills land before, during and after requests and ledger writes. ")
		p("Half the trials start with no ledger (a kill may land while it is created), half share one. Seed %d; reproduce with `-reliability.seed=%d`.\n\n", cfg.Seed, cfg.Seed)
		for _, s := range rep.randomInfo {
			p("- %s\n", s)
		}
		p("\n")
		rowsTable(&b, rep.random, "condition", false)
	}
	if len(rep.race) > 0 {
		p("## Races\n\n")
		p("16 processes run the same command for the same key, started together: each blocks reading its body from standard input (`--body-file -`, `--content-file -`; ")
		p("a `read` in `sh` for branch and exec), and all are released at once. Every process must exit 0 or 4 and none may report a locked database. ")
		p("With separate ledgers (separate machines), a process that failed is rerun until exit 0.\n\n")
		raceTable(&b, rep.race)
	}
	if len(rep.fault) > 0 {
		p("## GitHub faults\n\n")
		p("Each trial runs the command once with the fault injected, then reruns it until exit 0. \"first exit\" is the exit code of the run that met the fault; ")
		p("\"creates sent\" counts create requests that reached GitHub in that run (a maybe is never retried; a guarded command's effect is not a GitHub request, so its rows count none); waits are measured at the fake. ")
		if rep.gh {
			p("The repository ledger's own faults hit each of its writes in the first run (the claim's create, every update of the claim, every commit it makes), however many the backend makes; how that run ends is the backend's to choose (it may settle the lost answer by reading the ref back and go on, or exit 3), so they hold it to no exit code, only to at most one create and to what the trial leaves.")
		}
		p("\n\n")
		faultTable(&b, rep.fault)
	}
	if len(rep.ns) > 0 || rep.nsSkipped != "" {
		p("## Another PID namespace\n\n")
		p("The holder of a key runs in a PID namespace of its own (`unshare --pid --fork --mount-proc`), as in a container with host networking: the same host name and boot, the same ledger, other PIDs. ")
		p("Its PID there is chosen (through `ns_last_pid`) among those that name no process in this namespace, where the rerun runs: a rule of \"same host name and kill(pid, 0) fails\" would take it for gone. ")
		p("The holder runs with a %s lease (`GHONCE_CRASH_LEASE`, read only by the crash-point build), which it renews every quarter of it while it works. ", nsLease)
		p("*Live*: it is held with its create in flight (the fake's `BeforeWrite` hook) while the same command runs here with `--wait %s`; that run must exit 4 (in progress elsewhere), send no write and leave the entry with its holder, which must have renewed its lease meanwhile; then the create lands and the holder exits 0. ", nsRacerWait)
		p("*Killed*: it is killed with its create in flight, which the fake then commits; the reruns here cannot prove it gone, so the ledger's history must date their takeover after the lease the holder left, and they must find the issue. ")
		p("An issue, because GitHub keeps nothing single for it: a live holder taken over shows as a second issue.\n\n")
		if rep.nsSkipped != "" {
			p("**Skipped: %s.** Under `CI=true` this is an error.\n\n", rep.nsSkipped)
		}
		if len(rep.ns) > 0 {
			rowsTable(&b, rep.ns, "holder", true)
		}
	}
	if len(rep.audit) > 0 {
		p("## audit --apply: false positives\n\n")
		p("`ghonce audit --apply`, the real binary, on each case issues 31 and 37 found it destroying what it must not, each in a fresh fake GitHub: ")
		p("text under one key that is not the kept one's, ledger entries naming what does not carry their key, a person's commits and force-push, ")
		p("a person's artifacts carrying the agent's marker, artifacts the markers record under different keys, a recurrence, a person acting between the listing and the write, ")
		p("a person's involvement older than `--since`, a person's branches, heads GitHub cannot return, two audits at once with ledgers of their own, the agent's rerun afterwards. ")
		p("A false positive is an artifact closed or deleted (or a second linking comment) that is not a proven duplicate: every row must count 0; ")
		p("where the case holds a true duplicate, it must be settled.\n\n")
		auditTable(&b, rep.audit)
	}
	if len(rep.bad) > 0 {
		p("## Bad input\n\n")
		p("Each case runs once. It must exit with its documented code, print a message saying what to do, never panic, send no write request (and, unless GitHub must be asked, no request at all), ")
		p("and leave the user's files (working directory, body files, an existing ledger that is not ours) byte for byte unchanged.\n\n")
		badTable(&b, rep.bad)
	}
	s := rep.secrets
	p("## Secrets\n\nThe token (a fresh random `ghp_…` string per run) was searched for in %d process outputs (stdout and stderr of every run above), %d files left by the matrix (every ledger, WAL and body file) and this report: **%d hits**.", s.outputs, s.files, len(s.leaks))
	p(" Outputs with a Go panic or goroutine trace: %d. Outputs reporting a locked database: %d.\n\n", len(s.panics), len(s.locked))
	for _, l := range s.leaks {
		p("- leak: %s\n", l)
	}

	p("## Fuzzing\n\n`go test -fuzz` targets in `taskkey`: `FuzzKey` (the key is stable, well-formed and differs for different identities, whatever separators the fields contain) ")
	p("and `FuzzParseMarker` (a parsed marker is exactly the first line ghonce writes; never a panic). Their seed corpus is committed under `taskkey/testdata/fuzz/` and runs in `make test`; `make fuzz` fuzzes each for 30 s.\n\n")

	p("## Measured findings\n\n")
	var any bool
	for _, part := range [][]*row{rep.kill, rep.race} {
		for _, r := range part {
			if !r.finding {
				continue
			}
			any = true
			p("- **%s, %s (%s)**: %d trial(s), %d duplicate(s), %d lost, %d needed a person", r.kind, r.what, r.ledger, r.runs, r.dups, r.lost, r.person)
			if c := r.causeList(); c != "" {
				p(" (%s)", c)
			}
			if len(r.notes) > 0 {
				p(". %s", strings.Join(r.notes, "; "))
			}
			p(".\n")
		}
	}
	flags := map[string]int{}
	for _, part := range [][]*row{rep.kill, rep.random, rep.fault} {
		for _, r := range part {
			if r.finding {
				continue
			}
			for f, n := range r.flags {
				flags[f] += n
			}
		}
	}
	if n := flags["PR left without its labels"]; n > 0 {
		any = true
		p("- **PRs left without their labels after the last run: %d trials** (rows noted above). A run killed after GitHub created the PR and before ghonce labelled it leaves it bare; ", n)
		p("the rerun that finds it should add the missing labels (`--label`s and `ghonce:<key>`). Without its label, a rerun that has both lost the ledger and changed `--head` finds such a PR only among the %d newest PRs.\n", ghcheck.RecentPRs)
	}
	if !any {
		p("None in this run.\n")
	}
	return b.String()
}

// Summary is the report's head: how it was made, what it counts, and the
// totals.
func (rep *Report) Summary() string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	cfg := rep.cfg
	pr := cfg.Profile
	p("# Reliability matrix\n\n")
	p("Generated by `%s` (`go test ./tests/reliability -run TestMatrix -reliability.profile=%s`) on %s, on %s; runtime %s. ",
		commandFor(pr.name), pr.name, rep.started.UTC().Format("2006-01-02 15:04 MST"), machine(), rep.dur.Round(time.Second))
	p("Profile %s: %d trials per kill point, %d killed trials per kind in the randomised loop, %d race rounds, %d trials per fault; seed %d.\n\n",
		pr.name, pr.killRuns, pr.randomRuns, pr.raceRounds, pr.faultRuns, cfg.Seed)
	if rep.pg {
		p("Rows whose ledger is *%s* run ghonce as separate machines (each run in its own working directory and HOME, no file shared) on one Postgres ledger (a fresh schema of `%s`), next to the SQLite rows: %d trials per kill point, each rerun on the next of %d machines; %d killed trials per kind in the randomised loop; %d race rounds of 16 machines. ",
			pgLabel, pgEnv, pr.pgKillRuns, pgMachines, pr.pgRandomRuns, pr.pgRaceRounds)
		p("The machines share this host's boot and PID namespace, so a killed holder is proven gone and taken over at once, as on one machine; a holder in another PID namespace waits for its lease ([Another PID namespace](#another-pid-namespace)), as does one on another machine (`reconcile` tests cover it).\n\n")
	}
	if rep.gh {
		faults := "the repository ledger's own faults (each of its writes answered by a dropped connection, a 502 or a 504) and the dropped, 502 and 504 answers on the create"
		if pr.ghFaultsAll {
			faults = "the repository ledger's own faults (each of its writes answered by a dropped connection, a 502 or a 504) and every other fault"
		}
		p("Rows whose ledger (or fault) names *%s* run ghonce as separate machines that share nothing but the repository (`GHONCE_LEDGER=github`: each claim is a ref under `refs/ghonce/` of the fake GitHub): %d trials per kill point, each rerun on the next of %d machines; %d killed trials per kind in the randomised loop; %s, %d trial(s) each, every kind; %d race rounds of 16 machines, each racer its own home.\n\n",
			ghLabel, pr.pgKillRuns, pgMachines, pr.ghRandomRuns, faults, pr.faultRuns, pr.pgRaceRounds)
	}
	p("The real `ghonce` binary (built with `-tags ghonce_crashpoints`) runs against the fake GitHub of package `fixtures`, every run with `--settle %s` (the default, %s, is sized for GitHub's 10-second request limit; here requests in flight travel over loopback), except the row whose GitHub commits late, which runs with the default. ", matrixSettle, reconcile.DefaultSettle)
	p("A trial is one key (one task): its runs are killed or faulted as the part says, then rerun as a restarted agent would until one exits 0 ")
	p("(at most %d runs), then run once more, which must say `skipped` and send no write. Then the fake is asked what exists:\n\n", pr.maxAttempts)
	p("- **duplicates**: artifacts beyond the first for one key: PRs, issues or comments by the agent carrying the key's marker, creations of the branch, commits of the file, effects of the guarded command;\n")
	p("- **lost**: a final exit 0 (`created`, `found` or `skipped`) whose artifact does not exist or is not the one reported;\n")
	p("- **needed a person**: trials that never reached exit 0, with the cause ghonce printed;\n")
	p("- **exit 3 on rerun**: reruns that answered \"needs a rerun\" on the way (a later rerun settled them).\n\n")

	p("## Summary\n\n| part | trials | processes | processes killed | duplicates | lost | needed a person |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	findings := 0
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
				findings++
				continue
			}
			runs, procs, kills, dups, lost, person = runs+r.runs, procs+max(r.procs, r.runs), kills+r.kills, dups+r.dups, lost+r.lost, person+r.person
		}
		p("| %s | %d | %d | %d | %d | %d | %d |\n", part.name, runs, procs, kills, dups, lost, person)
	}
	if rep.nsSkipped != "" {
		p("| another PID namespace | **skipped: %s** | | | | | |\n", md(rep.nsSkipped))
	}
	p("\nRows marked *finding* (%d) are left out of these totals: they measure limits GitHub imposes, or ghonce stopping for a person by design; see [Measured findings](#measured-findings). ", findings)
	p("Failed expectations: **%d**.\n\n", len(rep.Failures()))
	if f := rep.Failures(); len(f) > 0 {
		p("## Failed expectations\n\n")
		for _, e := range f {
			p("- %s\n", md(e))
		}
		p("\n")
	}
	return b.String()
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

func rowsTable(b *strings.Builder, rows []*row, what string, withLedger bool) {
	if withLedger {
		b.WriteString("| kind | " + what + " | ledger | trials | kills | duplicates | lost | exit 3 on rerun | needed a person (cause) | max reruns | notes |\n")
		b.WriteString("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |\n")
	} else {
		b.WriteString("| kind | " + what + " | trials | kills | duplicates | lost | exit 3 on rerun | needed a person (cause) | max reruns | notes |\n")
		b.WriteString("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | --- |\n")
	}
	for _, r := range rows {
		person := r.personCell()
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
		if withLedger {
			fmt.Fprintf(b, "| %s | %s | %s | %d | %d | %d | %d | %d | %s | %d | %s |\n", r.kind, what, r.ledger, r.runs, r.kills, r.dups, r.lost, r.exit3, md(person), r.maxReruns, md(strings.Join(notes, "; ")))
		} else {
			fmt.Fprintf(b, "| %s | %s | %d | %d | %d | %d | %d | %s | %d | %s |\n", r.kind, what, r.runs, r.kills, r.dups, r.lost, r.exit3, md(person), r.maxReruns, md(strings.Join(notes, "; ")))
		}
	}
	b.WriteString("\n")
}

func raceTable(b *strings.Builder, rows []*row) {
	b.WriteString("| kind | ledger | rounds × processes | duplicates | rounds with a duplicate | lost | exits | needed a person | notes |\n")
	b.WriteString("| --- | --- | --- | ---: | ---: | ---: | --- | ---: | --- |\n")
	for _, r := range rows {
		what := r.ledger
		if r.finding {
			what += " — *finding*"
		}
		person := r.personCell()
		fmt.Fprintf(b, "| %s | %s | %s | %d | %d | %d | %s | %s | %s |\n", r.kind, what, r.what, r.dups, r.dupRounds, r.lost, md(countList(r.exits)), md(person), md(strings.Join(r.notes, "; ")))
	}
	b.WriteString("\n")
}

func faultTable(b *strings.Builder, rows []*row) {
	b.WriteString("| kind | fault | trials | first run | creates sent in it | duplicates | lost | needed a person | max reruns | measured |\n")
	b.WriteString("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |\n")
	for _, r := range rows {
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
		fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %d | %d | %d | %d | %s |\n", r.kind, md(r.what), r.runs, md(countList(first)), r.ledger, r.dups, r.lost, r.person, r.maxReruns, md(strings.Join(notes, "; ")))
	}
	b.WriteString("\n")
}

func badTable(b *strings.Builder, rows []*row) {
	b.WriteString("| case | exit | message | requests (writes) | user's files unchanged |\n")
	b.WriteString("| --- | ---: | --- | --- | --- |\n")
	for _, r := range rows {
		files := r.files
		if len(r.notes) > 0 {
			files += " (" + strings.Join(r.notes, "; ") + ")"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", md(r.what), r.exitText, md(r.causeList()), r.requests, md(files))
	}
	b.WriteString("\n")
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
