package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The sections TestGitHubReport (tests/bench) writes, by heading.
const (
	githubRequestsSection = "GitHub requests per operation and per kind"
	wireSection           = "On the wire"
	repoLedgerSection     = "The repository as the ledger"
	reconcileSection      = "Reconcile at N = 40, 1,000 and 10,000"
	concurrentSection     = "Concurrent claims: SQLite vs Postgres"
)

// githubReport returns the sections of tests/bench's TestGitHubReport:
// read from file when one is given, else from a run of that test. It never
// fails the report; what went wrong is the note instead.
func githubReport(ctx context.Context, e *env, root, file string, maxN int, peersDir string) (map[string]string, string) {
	if file == "" {
		fmt.Fprintln(e.log, "== GitHub requests and reconcile at N (tests/bench TestGitHubReport)")
		bin, err := e.testBinary(ctx, "./tests/bench")
		if err != nil {
			return nil, fmt.Sprintf("not run: %v", firstLine(err.Error()))
		}
		file = filepath.Join(e.tmp, "github.md")
		args := []string{"-test.run", "^TestGitHubReport$", "-test.v", "-test.timeout", "20m", "-test.count", "1",
			"-github.out", file, "-github.maxn", fmt.Sprint(maxN)}
		if peersDir != "" {
			args = append(args, "-github.peers", peersDir)
		}
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Dir = filepath.Join(root, "internal", "bench")
		cmd.Stdout, cmd.Stderr = e.log, e.log
		if err := cmd.Run(); err != nil {
			return nil, fmt.Sprintf("not run: TestGitHubReport failed (%v); its output is above in `make bench`'s log", err)
		}
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Sprintf("not run: read the GitHub report: %v", err)
	}
	secs := splitSections(string(b))
	for _, h := range []string{githubRequestsSection, wireSection, reconcileSection} {
		if _, ok := secs[h]; !ok {
			return secs, fmt.Sprintf("the GitHub report %s has no section %q (written by an older TestGitHubReport?)", filepath.Base(file), h)
		}
	}
	fmt.Fprintf(e.log, "%s", b)
	return secs, ""
}

// splitSections returns the ## sections of a markdown document: heading
// -> body (without the heading line, trimmed).
func splitSections(doc string) map[string]string {
	out := map[string]string{}
	var head string
	var body strings.Builder
	flush := func() {
		if head != "" {
			out[head] = strings.TrimSpace(body.String())
		}
		body.Reset()
	}
	for _, line := range strings.SplitAfter(doc, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			flush()
			head = strings.TrimSpace(h)
			continue
		}
		body.WriteString(line)
	}
	flush()
	return out
}

// concurrentBench runs ledger/store's BenchmarkConcurrentClaimFinish: both
// backends when GHONCE_TEST_POSTGRES is set, SQLite alone otherwise.
func concurrentBench(ctx context.Context, e *env, root, benchtime string) ([]result, string) {
	fmt.Fprintln(e.log, "== concurrent claims (ledger/store BenchmarkConcurrentClaimFinish)")
	bin, err := e.testBinary(ctx, "./ledger/store")
	if err != nil {
		return nil, fmt.Sprintf("not run: %v", firstLine(err.Error()))
	}
	rs, err := e.bench(ctx, bin, filepath.Join(root, "ledger", "store"), `^BenchmarkConcurrentClaimFinish$`, benchtime)
	if err != nil {
		return nil, fmt.Sprintf("not run: %v", firstLine(err.Error()))
	}
	if len(rs) == 0 {
		return nil, "not run: the benchmark reported no results"
	}
	return rs, ""
}

// postgresServer describes the Postgres server GHONCE_TEST_POSTGRES names
// (version and the settings that decide durability), through psql when it
// is installed. The location itself is never printed: it may hold a
// password.
func postgresServer(ctx context.Context) string {
	dsn := os.Getenv("GHONCE_TEST_POSTGRES")
	if dsn == "" {
		return ""
	}
	psql, err := exec.LookPath("psql")
	if err != nil {
		return ""
	}
	q := `SELECT split_part(version(), ' on ', 1) || ': fsync=' || current_setting('fsync') || ', synchronous_commit=' || current_setting('synchronous_commit') || ', wal_sync_method=' || current_setting('wal_sync_method') || ', shared_buffers=' || current_setting('shared_buffers')`
	out, err := exec.CommandContext(ctx, psql, "-X", "-A", "-t", "-c", q, dsn).Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// concurrentRow is one backend and worker count of BenchmarkConcurrentClaimFinish.
type concurrentRow struct {
	workers       int
	ops, p50, p99 float64
	found         bool
	backendName   string
}

// concurrentRows returns the figures of backend ("sqlite", "postgres") at
// 1, 8 and 32 workers, in that order; found is false where none was measured.
func (r *report) concurrentRows(backend string) []concurrentRow {
	var rows []concurrentRow
	for _, w := range []int{1, 8, 32} {
		row := concurrentRow{workers: w, backendName: map[string]string{"sqlite": "SQLite", "postgres": "Postgres"}[backend]}
		want := fmt.Sprintf("ConcurrentClaimFinish/backend=%s/workers=%d", backend, w)
		for _, c := range r.concurrent {
			if c.name == want {
				row.ops, row.p50, row.p99, row.found = c.metrics["ops/s"], c.metrics["p50-ms"], c.metrics["p99-ms"], true
			}
		}
		rows = append(rows, row)
	}
	return rows
}

func ms(v float64) string {
	switch {
	case v < 10:
		return fmt.Sprintf("%.1f ms", v)
	default:
		return fmt.Sprintf("%.0f ms", v)
	}
}

// grows says how b compares with a, in words a reader checks against the
// table: "grows 2.9×", "stays about the same (1.04×)", "falls to 0.5×".
func grows(a, b float64) string {
	x := ratio(b, a)
	switch {
	case x >= 1.2:
		return fmt.Sprintf("grows %.1f×", x)
	case x > 0.83:
		return fmt.Sprintf("stays about the same (%.2f×)", x)
	default:
		return fmt.Sprintf("falls to %.2f×", x)
	}
}

func (r *report) renderConcurrent(w func(string, ...any)) {
	w("## %s\n\n", concurrentSection)
	w("What one side effect costs in the ledger, and how that holds up when many runners act at once: claim of a fresh key + finish as done, from 1, 8 and 32 concurrent workers, each worker with its own ledger handle (its own SQLite connection to one file, or its own Postgres connection), as separate ghonce processes have (`BenchmarkConcurrentClaimFinish` in `ledger/store`, `-test.benchtime %s` per line, measured in this run after the ledger benchmarks above, on the machine and load named above). Alone:\n\n", r.concurrentBenchtimeOr())
	w("```sh\nexport GHONCE_TEST_POSTGRES='postgres://postgres@127.0.0.1:5432/test?sslmode=disable'   # optional: without it only SQLite runs\ngo test -run '^$' -bench Concurrent -benchtime %s ./ledger/store/\n```\n\n", defaultConcurrentBenchtime)
	if r.concurrentNote != "" {
		w("%s.\n\n", strings.TrimSuffix(r.concurrentNote, "."))
		return
	}
	sq, pg := r.concurrentRows("sqlite"), r.concurrentRows("postgres")
	pgMeasured := pg[0].found || pg[1].found || pg[2].found
	if pgMeasured {
		server := "the server `GHONCE_TEST_POSTGRES` names"
		if r.postgresServer != "" {
			server += " (" + r.postgresServer + ")"
		}
		w("Postgres: %s; its data directory may or may not share the SQLite file's disk.\n\n", server)
	} else {
		w("**Postgres was not measured in this run**: `GHONCE_TEST_POSTGRES` was not set and no server answered on 127.0.0.1:5432 (`make bench` sets it when one does). The table has SQLite alone.\n\n")
	}
	w("| backend | workers | ops/s | p50 | p99 |\n| --- | ---: | ---: | ---: | ---: |\n")
	for _, row := range append(sq, pg...) {
		if !row.found {
			continue
		}
		w("| %s | %d | %.0f | %s | %s |\n", row.backendName, row.workers, row.ops, ms(row.p50), ms(row.p99))
	}
	w("\nOne op is a claim (SQLite: a read, then one `BEGIN IMMEDIATE` transaction; Postgres: a read, then one `INSERT … ON CONFLICT DO NOTHING` statement) and a finish (one transaction each): two durable commits. What it shows:\n\n")
	if sq[0].found && sq[2].found {
		w("- **SQLite** is one writer at a time on one file, so adding workers cannot add write throughput: from 1 to 32 workers it %s (%.0f → %.0f ops/s). A connection that finds the file locked sleeps in SQLite's busy handler and retries, so the tail is where more workers show: p99 %s (%s → %s). Nothing fails below the 10 s busy timeout, but a fleet of writers waits.\n",
			grows(sq[0].ops, sq[2].ops), sq[0].ops, sq[2].ops, grows(sq[0].p99, sq[2].p99), ms(sq[0].p99), ms(sq[2].p99))
	}
	if pg[0].found && pg[2].found {
		w("- **Postgres** can commit many sessions' WAL in one flush (group commit), so its throughput is free to grow with workers until the cores or the disk are the limit: here from 1 to 8 workers it %s (%.0f → %.0f ops/s) and from 8 to 32 it %s (→ %.0f); p50 %s with the queue (%s → %s), p99 %s (%s → %s).",
			grows(pg[0].ops, pg[1].ops), pg[0].ops, pg[1].ops, grows(pg[1].ops, pg[2].ops), pg[2].ops, grows(pg[0].p50, pg[2].p50), ms(pg[0].p50), ms(pg[2].p50), grows(pg[0].p99, pg[2].p99), ms(pg[0].p99), ms(pg[2].p99))
		if sq[0].found {
			w(" A single worker pays one TCP round trip per statement on loopback and one WAL flush per commit: %.0f ops/s against SQLite's %.0f (%.2f×).", pg[0].ops, sq[0].ops, ratio(pg[0].ops, sq[0].ops))
		}
		if sq[2].found {
			w(" At 32 workers Postgres does %.2f× SQLite's throughput.", ratio(pg[2].ops, sq[2].ops))
		}
		w("\n")
	}
	w("- Either way the ledger's part is small next to a GitHub request (100 ms to seconds).\n\n")

	w("Single-worker figures from this run (`ns/op`; SQLite's from the ledger benchmarks above, 1k entries, median of the rounds; Postgres's from `ledger/postgres`, run once):\n\n")
	pgNS := func(name string) string {
		for _, p := range r.postgres {
			if p.name == name {
				return dur(p.metrics["ns/op"])
			}
		}
		return "not measured"
	}
	w("| benchmark | SQLite | Postgres |\n| --- | ---: | ---: |\n")
	w("| `BenchmarkClaimFinish` (fresh key, claim forced; SQLite leaves the done record unforced) | %s | %s |\n", dur(r.med("ClaimFinish/entries=1k")), pgNS("ClaimFinish"))
	w("| `BenchmarkClaimDone` (a rerun finds the step done: one read) | %s | %s |\n", dur(r.med("ClaimDone/entries=1k")), pgNS("ClaimDone"))
	w("| `BenchmarkOpen` (Postgres: connect, no pool warm-up, read the schema version) | — | %s |\n\n", pgNS("Open"))
	w("`BenchmarkOpen` is what each CLI run pays before its first claim on Postgres: the pool opens no connection ahead; the one connection a run uses is made on first use.\n")
}

func (r *report) concurrentBenchtimeOr() string {
	if r.concurrentBenchtime == "" {
		return defaultConcurrentBenchtime
	}
	return r.concurrentBenchtime
}

// renderGitHub writes TestGitHubReport's section heading, or why it is missing.
func (r *report) renderGitHub(w func(string, ...any), heading string) {
	w("## %s\n\n", heading)
	if body, ok := r.github[heading]; ok {
		w("Measured in this run by `tests/bench` `TestGitHubReport` (%s for the GitHub sections; alone: `make bench-github`).\n\n%s\n\n", r.githubTook, body)
		return
	}
	w("**Not measured in this run**: %s. A replay sends %.0f requests (`BenchmarkCLIReplay` fails if it sends any).\n\n", strings.TrimSuffix(r.githubNote, "."), r.cliRequests)
}
