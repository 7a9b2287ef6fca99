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
		cmd.Dir = filepath.Join(root, "tests", "bench")
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
	Workers       int
	Ops, P50, P99 float64
	Found         bool
	Backend       string
}

// concurrentRows returns the figures of backend ("sqlite", "postgres") at
// 1, 8 and 32 workers, in that order; found is false where none was measured.
func (r *report) concurrentRows(backend string) []concurrentRow {
	var rows []concurrentRow
	for _, w := range []int{1, 8, 32} {
		row := concurrentRow{Workers: w, Backend: map[string]string{"sqlite": "SQLite", "postgres": "Postgres"}[backend]}
		want := fmt.Sprintf("ConcurrentClaimFinish/backend=%s/workers=%d", backend, w)
		for _, c := range r.concurrent {
			if c.name == want {
				row.Ops, row.P50, row.P99, row.Found = c.metrics["ops/s"], c.metrics["p50-ms"], c.metrics["p99-ms"], true
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

func (r *report) concurrentBenchtimeOr() string {
	if r.concurrentBenchtime == "" {
		return defaultConcurrentBenchtime
	}
	return r.concurrentBenchtime
}
