package main_test

import (
	"context"
	"os/exec"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/tests/harness"
	"github.com/ghonce/ghonce/tests/testworld"
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
	w := testworld.New(b)
	fake := w.GitHub
	w.Push("fix-1")
	env := append(w.Env(), "GHONCE_LEDGER="+w.Ledger, "GHONCE_TASK=BENCH-1")
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

// BenchmarkMCPProxyReadTool is one read tool call (get_me: GET /user on
// the fake) through `ghonce mcp --upstream -- github-mcp-server stdio`
// beside the same call to github-mcp-server directly, both over stdio,
// interleaved in one run so they meet the same load. It reports the p50
// and p99 of each and what the proxy adds at p50 (the target: at
// most 1 ms).
func BenchmarkMCPProxyReadTool(b *testing.B) {
	ghmcp := githubMCPServer(b)
	l, host := loopback80(b)
	w := testworld.New(b, testworld.Fake(fixtures.Options{Listener: l}))
	env := append(w.Env(), "GITHUB_HOST=http://"+host, "GITHUB_PERSONAL_ACCESS_TOKEN="+token, "GHONCE_TASK=BENCH-1")
	start := func(name string, args ...string) *sdk.ClientSession {
		cmd := exec.Command(name, args...)
		cmd.Env = env
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatalf("start %s: %v", name, err)
		}
		b.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	sessions := []*sdk.ClientSession{
		start(ghmcp, "stdio"),
		start(bin, "mcp", "--ledger", w.Ledger, "--upstream", "--", ghmcp, "stdio"),
	}
	call := func(cs *sdk.ClientSession) time.Duration {
		t0 := time.Now()
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "get_me", Arguments: map[string]any{}})
		d := time.Since(t0)
		if err != nil || res.IsError {
			b.Fatalf("get_me: %v %+v", err, res)
		}
		return d
	}
	for _, cs := range sessions { // warm both up
		call(cs)
	}
	times := make([][]time.Duration, len(sessions))
	for b.Loop() {
		for i, cs := range sessions {
			times[i] = append(times[i], call(cs))
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	var p50 [2]float64
	for i, label := range []string{"direct-", "proxy-"} {
		ts := times[i]
		slices.Sort(ts)
		p50[i] = ms(ts[len(ts)/2])
		b.ReportMetric(p50[i], label+"p50-ms")
		b.ReportMetric(ms(ts[min(len(ts)-1, len(ts)*99/100)]), label+"p99-ms")
	}
	b.ReportMetric(p50[1]-p50[0], "added-p50-ms")
}
