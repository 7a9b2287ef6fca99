package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/observe/otlptest"
)

// A CLI run with GHONCE_METRICS_FILE adds its counters to the textfile
// (node_exporter's textfile collector reads it), and with an OTLP endpoint
// exports one span per action with its ledger calls and GitHub requests as
// children; without either, neither a file nor a request.
func TestCLITelemetry(t *testing.T) {
	w := newCLIWorld(t)
	rcv := otlptest.New(t)
	prom := filepath.Join(t.TempDir(), "ghonce.prom")
	env := map[string]string{cmdutil.MetricsFileEnv: prom, "OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL(), "OTEL_SERVICE_NAME": "ci-agent"}
	args := []string{"issue", "create", "--task", "T-1", "--title", "Flaky", "--body", "b", "--repo", testRepo}
	for i := range 2 {
		if o := w.run("", env, args...); o.code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, o.code, o.stderr)
		}
	}
	b, err := os.ReadFile(prom)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`ghonce_actions_total{kind="issue",outcome="created"} 1`,
		`ghonce_actions_total{kind="issue",outcome="skipped"} 1`,
		`ghonce_github_requests_total{method="POST",code="201"} `,
		`ghonce_last_run_timestamp_seconds `,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("textfile lacks %q:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), "T-1") || strings.Contains(string(b), testRepo) {
		t.Errorf("textfile shows a task or repository:\n%s", b)
	}
	var actions []otlptest.Span
	children := map[string]int{}
	for _, s := range rcv.Spans() {
		if s.Name == "ghonce issue" {
			actions = append(actions, s)
		}
		children[s.ParentSpanID]++
		if s.Resource["service.name"] != "ci-agent" {
			t.Errorf("span %s: service.name %v, want ci-agent", s.Name, s.Resource["service.name"])
		}
	}
	if len(actions) != 2 || actions[0].Attr("ghonce.outcome") != "created" || actions[1].Attr("ghonce.outcome") != "skipped" ||
		actions[0].Attr("ghonce.task") != "T-1" || actions[0].Attr("ghonce.repository") != testRepo || children[actions[0].SpanID] < 3 {
		t.Fatalf("action spans %+v (children %v), want created then skipped, each with children", actions, children)
	}

	w2 := newCLIWorld(t)
	if o := w2.run("", nil, args...); o.code != 0 {
		t.Fatal(o.stderr)
	}
	if n := len(rcv.Spans()); n != len(actions)+children[actions[0].SpanID]+children[actions[1].SpanID] {
		t.Errorf("a run without OTEL_* exported spans: %d in all", n)
	}
}

// A wrong OTEL_* setting is reported and the run goes on without traces.
func TestCLIBadOTELSettingIsReported(t *testing.T) {
	w := newCLIWorld(t)
	o := w.run("", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
		"issue", "create", "--task", "T-1", "--title", "Flaky", "--body", "b", "--repo", testRepo)
	if o.code != 0 || !strings.Contains(o.stderr, "traces are off") || !strings.Contains(o.stderr, "OTEL_EXPORTER_OTLP_PROTOCOL") {
		t.Fatalf("exit %d, stderr %q; want 0 and a line saying traces are off and why", o.code, o.stderr)
	}
}
