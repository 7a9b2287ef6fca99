package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestParseBench(t *testing.T) {
	out := `goos: linux
BenchmarkClaimFinish/entries=1k-2         	     300	   812345 ns/op	         1.000 fsyncs/op
BenchmarkCLIReplay-2      	     100	  25567081 ns/op	        12.24 median-ms	        54.40 p90-ms	         0 requests/op
PASS
`
	rs := parseBench(strings.NewReader(out))
	if len(rs) != 2 {
		t.Fatalf("parsed %d results, want 2: %+v", len(rs), rs)
	}
	if rs[0].name != "ClaimFinish/entries=1k" || rs[0].n != 300 || rs[0].metrics["ns/op"] != 812345 || rs[0].metrics["fsyncs/op"] != 1 {
		t.Errorf("first = %+v", rs[0])
	}
	if rs[1].name != "CLIReplay" || rs[1].metrics["median-ms"] != 12.24 || rs[1].metrics["p90-ms"] != 54.40 {
		t.Errorf("second = %+v", rs[1])
	}
	if v, ok := rs[1].metrics["requests/op"]; !ok || v != 0 {
		t.Errorf("requests/op = %v, %v; want 0, true", v, ok)
	}
}

// A new report keeps the sections other people wrote into the old one
// (the Postgres backend's concurrency figures) and replaces its own.
func TestKeptSections(t *testing.T) {
	old := "# Performance\n\nintro\n\n## Targets\n\nold figures\n\n## Concurrent claims\n\nPostgres table\n\n## Where the time goes\n\nold text\n"
	got := keptSections(old)
	if !strings.Contains(got, "## Concurrent claims\n\nPostgres table") {
		t.Errorf("kept = %q, want the Concurrent claims section", got)
	}
	if strings.Contains(got, "old figures") || strings.Contains(got, "old text") || strings.Contains(got, "intro") {
		t.Errorf("kept = %q, want none of the generated sections", got)
	}
	if got := keptSections(old + "\n## Peers: the seeds' ledgers\n\nstale table\n"); strings.Contains(got, "stale table") {
		t.Errorf("kept = %q, want a retired section dropped", got)
	}
	if keptSections("") != "" {
		t.Errorf("kept of an empty report = %q, want empty", keptSections(""))
	}
}

func TestMedian(t *testing.T) {
	for _, tt := range []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		t.Run(fmt.Sprint(tt.xs), func(t *testing.T) {
			if got := median(tt.xs); got != tt.want {
				t.Errorf("median(%v) = %v, want %v", tt.xs, got, tt.want)
			}
		})
	}
}

// The GitHub report's sections replace the placeholders under the same
// headings; a missing one says why, never a placeholder.
func TestGitHubSections(t *testing.T) {
	secs := splitSections("## " + githubRequestsSection + "\n\n| pr | 4 |\n\n## " + reconcileSection + "\n\n| 40 | 3 |\n")
	r := &report{ns: series{}, github: secs}
	doc := r.render()
	for _, want := range []string{"## " + githubRequestsSection + "\n\nMeasured in this run", "| pr | 4 |", "| 40 | 3 |"} {
		if !strings.Contains(doc, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if strings.Contains(doc, "Placeholder") {
		t.Error("report still has placeholder text")
	}
	r = &report{ns: series{}, githubNote: "not run: TestGitHubReport failed"}
	if doc := r.render(); !strings.Contains(doc, "**Not measured in this run**: not run: TestGitHubReport failed") {
		t.Errorf("report without the GitHub figures does not say why:\n%s", doc)
	}
}

// The concurrent-claims table is generated; without Postgres figures the
// report says Postgres was not measured and claims nothing about it.
func TestConcurrentSection(t *testing.T) {
	out := `BenchmarkConcurrentClaimFinish/backend=sqlite/workers=1-2  100  0 ns/op  383.0 ops/s  1.6 p50-ms  14.0 p99-ms
BenchmarkConcurrentClaimFinish/backend=sqlite/workers=8-2  100  0 ns/op  384.0 ops/s  1.4 p50-ms  136.0 p99-ms
BenchmarkConcurrentClaimFinish/backend=sqlite/workers=32-2  100  0 ns/op  397.0 ops/s  1.4 p50-ms  2457.0 p99-ms
`
	r := &report{ns: series{}, concurrent: parseBench(strings.NewReader(out))}
	doc := r.render()
	for _, want := range []string{"| SQLite | 32 | 397 | 1.4 ms | 2457 ms |", "**Postgres was not measured in this run**", "stays about the same (1.04×)", "p99 grows 175.5×"} {
		if !strings.Contains(doc, want) {
			t.Errorf("report lacks %q:\n%s", want, doc)
		}
	}
	if strings.Contains(doc, "| Postgres | 1 |") || strings.Contains(doc, "group commit") {
		t.Error("report shows Postgres figures it did not measure")
	}
	if strings.Contains(keptSections(doc), concurrentSection) {
		t.Error("the generated concurrent section would be kept twice by the next run")
	}
}

// The action's build step is rendered inside "On the wire", from the
// figures measured: the warm build against the 10 s target, the cold one
// with how it was measured, or why nothing was.
func TestActionSection(t *testing.T) {
	r := &report{ns: series{}, action: actionBuild{cold: 200 * time.Second, warm: []time.Duration{4200 * time.Millisecond, 3 * time.Second, 5 * time.Second}, upgrade: []time.Duration{12 * time.Second, 13 * time.Second, 6 * time.Second},
		coldNote: "empty caches", warmNote: "the cold build's caches", binBytes: 33_300_000, took: 216 * time.Second}}
	doc := r.render()
	wire := doc[strings.Index(doc, "## "+wireSection):]
	wire = wire[:strings.Index(wire[3:], "\n## ")+3]
	for _, want := range []string{"### The Action's build step", "| empty caches | 200.0 s |", "| the cold build's caches | 4.2 s (3.0 s – 5.0 s) | ≤ 10.0 s | yes |", "| 12.0 s (6.0 s – 13.0 s) | ≤ 10.0 s | **no** |", "33.3 MB"} {
		if !strings.Contains(wire, want) {
			t.Errorf("the On the wire section lacks %q:\n%s", want, wire)
		}
	}
	r = &report{ns: series{}, action: actionBuild{note: "not measured: git archive: not a git checkout"}}
	if doc := r.render(); !strings.Contains(doc, "### The Action's build step\n\nnot measured: git archive: not a git checkout.") || strings.Contains(doc, "≤ 10.0 s") {
		t.Errorf("the report without the action's figures does not say why, or shows a target:\n%s", doc)
	}
}
