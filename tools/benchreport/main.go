// Command benchreport runs ghonce's performance benchmarks and writes
// docs/performance.md: each figure next to its floor measured in the same
// run, and two naive ledgers (the bench peers) side by side. `make bench` runs it; it
// prints every figure on stdout as it goes.
//
// The ledger benchmarks run in rounds (-rounds): each round measures the
// fdatasync floor and the ledger's fresh action back to back, so a ratio
// compares figures taken moments apart on a shared machine, and the report
// gives the median of the rounds with their range.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ghonce/ghonce/ledger/sqlite"
	"github.com/ghonce/ghonce/tests/harness"
)

// defaultConcurrentBenchtime is -concurrent-benchtime's default, and what the
// report names when a test builds one without it.
const defaultConcurrentBenchtime = "3s"

func main() {
	out := flag.String("out", "docs/performance.md", "the report to write; empty: print only")
	rounds := flag.Int("rounds", 5, "rounds of the ledger benchmarks")
	peers := flag.String("peers", "", "directory of the peer ledgers (default: $GHONCE_BENCH_PEERS, else ../shared/bench-peers or ../../shared/bench-peers from the module root)")
	peerN := flag.Int("peer-n", 1000, "actions per peer run (the JSON-file ledger at a million entries runs -peer-n-1m)")
	peerN1M := flag.Int("peer-n-1m", 5, "actions of the JSON-file ledger at a million entries: each rewrites the whole file")
	github := flag.String("github", "", "render the GitHub sections from this file (tests/bench TestGitHubReport -github.out) instead of running that test")
	githubMaxN := flag.Int("github-maxn", 10000, "reconcile at N up to this only (TestGitHubReport -github.maxn; 40 for a quick check)")
	concurrent := flag.String("concurrent-benchtime", defaultConcurrentBenchtime, "-test.benchtime of BenchmarkConcurrentClaimFinish (ledger/store), per backend and worker count")
	actionCold := flag.Bool("action-cold", true, "measure the action's first build from empty Go caches (minutes on 2 cores, mostly SQLite's C); false: its warm builds alone")
	flag.Parse()
	o := options{out: *out, rounds: *rounds, peers: *peers, peerN: *peerN, peerN1M: *peerN1M, github: *github, githubMaxN: *githubMaxN, concurrentBenchtime: *concurrent, actionCold: *actionCold}
	if err := run(o, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "benchreport: %v\n", err)
		os.Exit(1)
	}
}

// options are the command's flags.
type options struct {
	out                 string
	rounds              int
	peers               string
	peerN, peerN1M      int
	github              string
	githubMaxN          int
	concurrentBenchtime string
	actionCold          bool
}

// result is one benchmark line of `go test -bench` output.
type result struct {
	name    string // without the -GOMAXPROCS suffix
	n       int
	metrics map[string]float64 // unit -> value: ns/op, median-ms, ...
}

var procSuffix = regexp.MustCompile(`-\d+$`)

// parseBench reads the result lines of `go test -bench` output.
func parseBench(r io.Reader) []result {
	var out []result
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "Benchmark") {
			continue
		}
		n, err := strconv.Atoi(f[1])
		if err != nil {
			continue
		}
		res := result{name: procSuffix.ReplaceAllString(strings.TrimPrefix(f[0], "Benchmark"), ""), n: n, metrics: map[string]float64{}}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				res.metrics[f[i+1]] = v
			}
		}
		out = append(out, res)
	}
	return out
}

// series collects a figure over rounds.
type series map[string][]float64

func (s series) add(rs []result, unit string) {
	for _, r := range rs {
		if v, ok := r.metrics[unit]; ok {
			s[r.name] = append(s[r.name], v)
		}
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	ys := slices.Clone(xs)
	slices.Sort(ys)
	if len(ys)%2 == 1 {
		return ys[len(ys)/2]
	}
	return (ys[len(ys)/2-1] + ys[len(ys)/2]) / 2
}

type env struct {
	root  string
	tmp   string
	log   io.Writer
	start time.Time
}

// testBinary compiles the tests of pkg once.
func (e *env) testBinary(ctx context.Context, pkg string) (string, error) {
	bin := filepath.Join(e.tmp, strings.ReplaceAll(strings.Trim(pkg, "./"), "/", "_")+".test")
	cmd := exec.CommandContext(ctx, "go", "test", "-c", "-o", bin, pkg)
	cmd.Dir = e.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build tests of %s: %w\n%s", pkg, err, out)
	}
	return bin, nil
}

// bench runs a compiled test binary's benchmarks matching re, in dir.
func (e *env) bench(ctx context.Context, bin, dir, re, benchtime string) ([]result, error) {
	cmd := exec.CommandContext(ctx, bin, "-test.run", "^$", "-test.bench", re, "-test.benchtime", benchtime)
	cmd.Dir = dir
	var buf bytes.Buffer
	cmd.Stdout = io.MultiWriter(&buf, e.log)
	cmd.Stderr = e.log
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("run %s -test.bench %s: %w", filepath.Base(bin), re, err)
	}
	return parseBench(&buf), nil
}

// report is everything the document shows.
type report struct {
	machine    []string
	loadBefore string
	loadAfter  string
	rounds     int
	ns         series // ledger benchmarks, ns/op per round
	// ratio, pair and pairFloor are BenchmarkClaimFinishVsFdatasync's: the
	// fresh action and the floor timed in turn, per round.
	ratio, pair, pairFloor series
	cli                    series // CLI benchmarks: median-ms, p90-ms
	cliP90                 series
	cliStart               series // ghonce --help, run in turn with each CLI replay
	cliRequests            float64
	peers                  []peerResult
	peersNote              string
	postgres               []result // ledger/postgres's ClaimFinish and ClaimDone, when it has them and a server
	postgresNote           string
	runtime                time.Duration
	bigLedgerBuilt         bool
	github                 map[string]string // TestGitHubReport's sections: heading -> body
	githubNote             string            // why they are missing
	githubTook             time.Duration
	concurrent             []result // BenchmarkConcurrentClaimFinish's
	concurrentNote         string
	concurrentTook         time.Duration
	postgresServer         string // version and durability settings of the server measured
	concurrentBenchtime    string
	action                 actionBuild // the action's build step, cold and warm
}

type peerResult struct {
	name, entries string
	n             int
	fresh, replay float64 // µs per op
	note          string
}

// bigLedgerName is the file ledger/sqlite's benchmarks keep the
// million-entry ledger in, under $TMPDIR (named by the schema version).
var bigLedgerName = fmt.Sprintf("ghonce-bench-1m-v%d.db", sqlite.SchemaVersion)

func run(o options, log io.Writer) error {
	out, rounds := o.out, o.rounds
	ctx := context.Background()
	root, err := harness.ModuleRoot()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "ghonce-benchreport-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	e := &env{root: root, tmp: tmp, log: log, start: time.Now()}
	r := &report{concurrentBenchtime: o.concurrentBenchtime, rounds: rounds, ns: series{}, cli: series{}, cliP90: series{}, cliStart: series{}, ratio: series{}, pair: series{}, pairFloor: series{}, loadBefore: loadAvg(), machine: machine(root)}
	_, statErr := os.Stat(filepath.Join(os.TempDir(), bigLedgerName))
	r.bigLedgerBuilt = errors.Is(statErr, os.ErrNotExist)

	fmt.Fprintln(log, "== building test binaries")
	sq, err := e.testBinary(ctx, "./ledger/sqlite")
	if err != nil {
		return err
	}
	cli, err := e.testBinary(ctx, "./cmd/ghonce")
	if err != nil {
		return err
	}
	sqDir := filepath.Join(root, "ledger", "sqlite")
	for i := 1; i <= rounds; i++ {
		fmt.Fprintf(log, "== ledger, round %d of %d\n", i, rounds)
		// The floor and the fresh action back to back, then the reads.
		slow, err := e.bench(ctx, sq, sqDir, `^(BenchmarkFdatasync|BenchmarkFdatasyncWALFrames|BenchmarkSQLiteCommit|BenchmarkClaimFinish|BenchmarkClaimFinishForced|BenchmarkClaimFinishUnsynced|BenchmarkClaimFinishVsFdatasync)$`, "300x")
		if err != nil {
			return err
		}
		fast, err := e.bench(ctx, sq, sqDir, `^(BenchmarkClaimDone|BenchmarkClaimDoneFirst|BenchmarkOpenReplay)$`, "1s")
		if err != nil {
			return err
		}
		r.ns.add(slow, "ns/op")
		r.ns.add(fast, "ns/op")
		r.ratio.add(slow, "ratio")
		r.pair.add(slow, "action-ns")
		r.pairFloor.add(slow, "fdatasync-ns")
	}
	r.postgres, r.postgresNote = postgresBench(ctx, e, root)
	fmt.Fprintln(log, "== CLI, whole process")
	cres, err := e.bench(ctx, cli, filepath.Join(root, "cmd", "ghonce"), `^(BenchmarkCLIReplay|BenchmarkProcessStart)$`, "200x")
	if err != nil {
		return err
	}
	r.cli.add(cres, "median-ms")
	r.cliP90.add(cres, "p90-ms")
	r.cliStart.add(cres, "start-median-ms")
	for _, c := range cres {
		if v, ok := c.metrics["requests/op"]; ok {
			r.cliRequests = v
		}
	}
	fmt.Fprintln(log, "== peers")
	peersDir := findPeers(root, o.peers)
	r.peers, r.peersNote = runPeers(ctx, e, peersDir, o.peerN, o.peerN1M)
	t0 := time.Now()
	r.concurrent, r.concurrentNote = concurrentBench(ctx, e, root, o.concurrentBenchtime)
	r.concurrentTook = time.Since(t0).Round(time.Second)
	r.postgresServer = postgresServer(ctx)
	t0 = time.Now()
	r.github, r.githubNote = githubReport(ctx, e, root, o.github, o.githubMaxN, peersDir)
	r.githubTook = time.Since(t0).Round(time.Second)
	// Last: the cold build keeps both cores busy for minutes.
	r.action = measureActionBuild(ctx, e, root, o.actionCold)
	r.loadAfter = loadAvg()
	r.runtime = time.Since(e.start).Round(time.Second)

	doc := r.render()
	fmt.Fprintln(log, "== summary")
	fmt.Fprint(log, r.summary())
	if out == "" {
		return nil
	}
	path := out
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	old, _ := os.ReadFile(path)
	doc += keptSections(string(old))
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	fmt.Fprintf(log, "wrote %s\n", path)
	return nil
}

// postgresBench runs the Postgres backend's benchmarks of the same names,
// once, if the package exists. It never fails the report: a backend that
// cannot run here (no server) is noted instead.
func postgresBench(ctx context.Context, e *env, root string) ([]result, string) {
	dir := filepath.Join(root, "ledger", "postgres")
	if _, err := os.Stat(dir); err != nil {
		return nil, ""
	}
	fmt.Fprintln(e.log, "== ledger/postgres")
	bin, err := e.testBinary(ctx, "./ledger/postgres")
	if err != nil {
		return nil, fmt.Sprintf("not run: %v", firstLine(err.Error()))
	}
	rs, err := e.bench(ctx, bin, dir, `^(BenchmarkClaimFinish|BenchmarkClaimDone|BenchmarkOpen)$`, "1s")
	if err != nil {
		return nil, fmt.Sprintf("not run: %v", firstLine(err.Error()))
	}
	if len(rs) == 0 {
		return nil, "not run: the benchmarks skipped (no Postgres server configured for them?)"
	}
	return rs, ""
}

func firstLine(s string) string { l, _, _ := strings.Cut(s, "\n"); return l }

var peerLine = regexp.MustCompile(`fresh_us_per_op=([0-9.]+) replay_us_per_op=([0-9.]+)`)

// findPeers returns the directory of the peer ledgers, or "".
func findPeers(root, dir string) string {
	if dir == "" {
		dir = os.Getenv("GHONCE_BENCH_PEERS")
	}
	if dir == "" {
		for _, d := range []string{"../shared/bench-peers", "../../shared/bench-peers"} {
			if _, err := os.Stat(filepath.Join(root, d, "seed000_sqlite_ledger.py")); err == nil {
				dir = filepath.Join(root, d)
				break
			}
		}
	}
	return dir
}

// runPeers runs the peer ledgers at the sizes ghonce's benchmarks use.
func runPeers(ctx context.Context, e *env, dir string, n, n1M int) ([]peerResult, string) {
	if dir == "" {
		return nil, "NOT RUN: the peer ledgers were not found (pass -peers DIR or set GHONCE_BENCH_PEERS)."
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		return nil, "NOT RUN: python3 is not installed."
	}
	var out []peerResult
	for _, p := range []struct {
		name, script, file, entries string
		preload, n                  int
		note                        string
	}{
		{"naive SQLite ledger (Python sqlite3 defaults)", "seed000_sqlite_ledger.py", "s0-1k.db", "1k", 1000, n, ""},
		{"naive SQLite ledger (Python sqlite3 defaults)", "seed000_sqlite_ledger.py", "s0-1m.db", "1M", 1_000_000, n, ""},
		{"naive JSON-file ledger (rewritten per step)", "seed003_json_ledger.py", "s3-1k.json", "1k", 1000, n, ""},
		{"naive JSON-file ledger (rewritten per step)", "seed003_json_ledger.py", "s3-1m.json", "1M", 1_000_000, n1M, fmt.Sprintf("N = %d: every step rereads and rewrites the whole file", n1M)},
	} {
		path := filepath.Join(e.tmp, p.file)
		cmd := exec.CommandContext(ctx, py, filepath.Join(dir, p.script), path, strconv.Itoa(p.n), strconv.Itoa(p.preload))
		b, err := cmd.CombinedOutput()
		fmt.Fprintf(e.log, "%s", b)
		os.Remove(path)
		os.Remove(path + "-journal")
		m := peerLine.FindSubmatch(b)
		if err != nil || m == nil {
			out = append(out, peerResult{name: p.name, entries: p.entries, n: p.n, note: fmt.Sprintf("failed: %v", err)})
			continue
		}
		fresh, _ := strconv.ParseFloat(string(m[1]), 64)
		replay, _ := strconv.ParseFloat(string(m[2]), 64)
		out = append(out, peerResult{name: p.name, entries: p.entries, n: p.n, fresh: fresh, replay: replay, note: p.note})
	}
	return out, ""
}

// keptSections returns the sections (## headings) of an earlier report that
// this program does not write, such as the Postgres backend's, so that a new
// run keeps them.
func keptSections(old string) string {
	var b strings.Builder
	keep := false
	for _, line := range strings.SplitAfter(old, "\n") {
		if strings.HasPrefix(line, "## ") {
			h := strings.TrimSpace(strings.TrimPrefix(line, "## "))
			keep = !slices.Contains(generatedSections, h) && !slices.Contains(retiredSections, h)
			if keep {
				b.WriteString("\n")
			}
		}
		if keep {
			b.WriteString(line)
		}
	}
	return strings.TrimRight(b.String(), "\n") + map[bool]string{true: "\n", false: ""}[b.Len() > 0]
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// machine describes where the figures were taken.
func machine(root string) []string {
	cpu := "unknown"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	kernel := "unknown"
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = strings.TrimSpace(string(b))
	}
	goVersion := runtime.Version()
	if b, err := exec.Command("go", "env", "GOVERSION").Output(); err == nil {
		goVersion = strings.TrimSpace(string(b))
	}
	return []string{
		fmt.Sprintf("CPU: %s, %d logical CPUs (GOMAXPROCS %d)", cpu, runtime.NumCPU(), runtime.GOMAXPROCS(0)),
		fmt.Sprintf("OS: %s/%s, kernel %s; %s", runtime.GOOS, runtime.GOARCH, kernel, goVersion),
		fmt.Sprintf("Disk of the benchmark ledgers (%s): %s", os.TempDir(), mountOf(os.TempDir())),
	}
}

// mountOf names the file system that holds dir, from /proc/mounts.
func mountOf(dir string) string {
	b, err := os.ReadFile("/proc/mounts")
	if err != nil {
		return "unknown"
	}
	best, desc := "", "unknown"
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		if (dir == f[1] || strings.HasPrefix(dir, strings.TrimSuffix(f[1], "/")+"/")) && len(f[1]) > len(best) {
			best, desc = f[1], fmt.Sprintf("%s on %s (%s, %s)", f[0], f[1], f[2], f[3])
		}
	}
	return desc
}
