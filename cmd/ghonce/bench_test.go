package main_test

import (
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/harness"
)

// timed is one command a benchmark runs once per iteration.
type timed struct {
	metric string // reported as <metric>median-ms and <metric>p90-ms
	name   string
	args   []string
}

// runTimes runs each command in turn, once per benchmark iteration, so that
// all of them meet the same load on a shared machine, and reports the
// median and 90th percentile of the wall time of each whole process, start
// to exit, in milliseconds.
func runTimes(b *testing.B, env []string, cmds ...timed) {
	b.Helper()
	times := make([][]time.Duration, len(cmds))
	for b.Loop() {
		for i, c := range cmds {
			cmd := exec.Command(c.name, c.args...)
			cmd.Env = env
			start := time.Now()
			out, err := cmd.CombinedOutput()
			times[i] = append(times[i], time.Since(start))
			if err != nil {
				b.Fatalf("%s %v: %v\n%s", c.name, c.args, err, out)
			}
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	for i, c := range cmds {
		ts := times[i]
		slices.Sort(ts)
		b.ReportMetric(ms(ts[len(ts)/2]), c.metric+"median-ms")
		b.ReportMetric(ms(ts[len(ts)*9/10]), c.metric+"p90-ms")
	}
}

// BenchmarkCLIReplay is `ghonce pr create` for an action the ledger holds
// as done: the whole process, from exec to exit, as an agent runner pays
// it. It must send no request to GitHub; the benchmark fails if it does.
// Each iteration also starts the same binary for its help (start-*), the
// floor, so the two meet the same load.
func BenchmarkCLIReplay(b *testing.B) {
	fake := fixtures.NewServer(fixtures.Options{})
	b.Cleanup(fake.Close)
	fake.AddUser(login, token)
	fake.AddRepo(owner, name, "main")
	fake.SetRef(owner, name, "fix-1", fake.AddCommit(owner, name, "main"))
	dir := b.TempDir()
	env := append(harness.CleanEnv(), "GH_TOKEN="+token, "GITHUB_API_URL="+fake.URL(), "HOME="+dir,
		"GHONCE_LEDGER="+filepath.Join(dir, "ledger.db"), "GHONCE_TASK=BENCH-1")
	args := []string{"pr", "create", "--repo", repo, "--base", "main", "--head", "fix-1", "--title", "Fix", "--body", "A fix."}
	for _, a := range [][]string{{"init"}, args} {
		if out, err := (&exec.Cmd{Path: bin, Args: append([]string{bin}, a...), Env: env}).CombinedOutput(); err != nil {
			b.Fatalf("ghonce %v: %v\n%s", a, err, out)
		}
	}
	before := len(fake.Requests())
	runTimes(b, env, timed{"", bin, args}, timed{"start-", bin, []string{"--help"}})
	if n := len(fake.Requests()) - before; n != 0 {
		b.Fatalf("replays sent %d requests to GitHub, want 0", n)
	}
	b.ReportMetric(0, "requests/op")
}

// BenchmarkProcessStart is the floor under BenchmarkCLIReplay: the same
// binary doing nothing but print its help (Go runtime start, cobra, no
// ledger, no network), next to /bin/true.
func BenchmarkProcessStart(b *testing.B) {
	env := harness.CleanEnv()
	b.Run("ghonce-help", func(b *testing.B) { runTimes(b, env, timed{"", bin, []string{"--help"}}) })
	b.Run("bin-true", func(b *testing.B) { runTimes(b, env, timed{"", "/bin/true", nil}) })
}
