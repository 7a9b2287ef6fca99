package observe_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ghonce/ghonce/observe"
	"github.com/ghonce/ghonce/observe/otlptest"
)

// sampleLine is a sample of the text exposition format: a metric name,
// optional labels, a value.
var sampleLine = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="(\\.|[^"\\])*",?)*\})? (\S+)$`)

// parse reads the exposition text the way a scraper does: every family's
// HELP and TYPE come before its samples, each sample is well formed, and
// counters end in _total. It returns the samples.
func parse(t *testing.T, text string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	typed := map[string]string{}
	for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if f, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(f, " ")
			if typ == "counter" && !strings.HasSuffix(name, "_total") {
				t.Errorf("counter %s does not end in _total", name)
			}
			typed[name] = typ
			continue
		}
		if strings.HasPrefix(line, "# HELP ") {
			continue
		}
		m := sampleLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("malformed sample line %q", line)
		}
		base := m[1]
		for _, suf := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(base, suf); ok && typed[b] == "histogram" {
				base = b
			}
		}
		if typed[base] == "" {
			t.Errorf("sample %q before its family's TYPE", line)
		}
		v, err := strconv.ParseFloat(m[len(m)-1], 64)
		if err != nil {
			t.Fatalf("sample %q: value: %v", line, err)
		}
		out[m[1]+m[2]] = v
	}
	return out
}

// exposition is m's text, as /metrics serves it, and its samples.
func exposition(t *testing.T, m *observe.Metrics) (string, map[string]float64) {
	t.Helper()
	var b strings.Builder
	if err := m.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	return b.String(), parse(t, b.String())
}

func TestExpositionFormat(t *testing.T) {
	m := observe.NewMetrics()
	m.Action("pr", "created", 1500*time.Millisecond)
	m.Action("pr", "skipped", 2*time.Millisecond)
	m.Action("comment", "unconfirmed", 40*time.Second)
	m.GitHubRequest("GET", 200)
	m.GitHubRequest("POST", 201)
	m.GitHubRequest("POST", 0)
	m.ContentWrite()
	m.PacingSleep(750 * time.Millisecond)
	m.InFlightWait(2 * time.Second)
	m.Takeover()
	m.Gauges(func(set func(string, float64, ...string)) { set(observe.BuildInfo, 1, `v1.2.3 "quoted"\`) })
	text, got := exposition(t, m)
	for s, want := range map[string]float64{
		`ghonce_actions_total{kind="pr",outcome="created"}`:             1,
		`ghonce_actions_total{kind="comment",outcome="unconfirmed"}`:    1,
		`ghonce_action_duration_seconds_bucket{kind="pr",le="0.005"}`:   1,
		`ghonce_action_duration_seconds_bucket{kind="pr",le="2.5"}`:     2,
		`ghonce_action_duration_seconds_bucket{kind="pr",le="+Inf"}`:    2,
		`ghonce_action_duration_seconds_count{kind="pr"}`:               2,
		`ghonce_action_duration_seconds_bucket{kind="comment",le="30"}`: 0,
		`ghonce_action_duration_seconds_bucket{kind="comment",le="60"}`: 1,
		`ghonce_github_requests_total{method="POST",code="error"}`:      1,
		`ghonce_github_content_writes_total`:                            1,
		`ghonce_pacing_sleep_seconds_total`:                             0.75,
		`ghonce_inflight_wait_seconds_total`:                            2,
		`ghonce_takeovers_total`:                                        1,
		`ghonce_build_info{version="v1.2.3 \"quoted\"\\"}`:              1,
	} {
		if got[s] != want {
			t.Errorf("%s = %v, want %v\n%s", s, got[s], want, text)
		}
	}
	// Buckets ascend, +Inf last, per label set.
	var les []string
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, `ghonce_action_duration_seconds_bucket{kind="pr"`) {
			les = append(les, regexp.MustCompile(`le="([^"]+)"`).FindStringSubmatch(line)[1])
		}
	}
	if les[0] != "0.005" || les[len(les)-1] != "+Inf" {
		t.Errorf("pr's buckets in order %v, want 0.005 first and +Inf last", les)
	}
}

// Zero exports every counter at 0 before it moves, so increase() sees the
// first one (a series that appears at 1 shows none): each kind and outcome,
// each kind's histogram, every counter without labels, and requests that
// got no answer by method. What was counted keeps its value.
func TestZeroExportsEveryCounter(t *testing.T) {
	m := observe.NewMetrics()
	m.Action("pr", "created", time.Second)
	m.Zero([]string{"pr", "exec"}, []string{"created", "unconfirmed"})
	_, got := exposition(t, m)
	for s, want := range map[string]float64{
		`ghonce_actions_total{kind="pr",outcome="created"}`:            1,
		`ghonce_actions_total{kind="pr",outcome="unconfirmed"}`:        0,
		`ghonce_actions_total{kind="exec",outcome="unconfirmed"}`:      0,
		`ghonce_action_duration_seconds_bucket{kind="exec",le="+Inf"}`: 0,
		`ghonce_action_duration_seconds_count{kind="pr"}`:              1,
		`ghonce_github_requests_total{method="POST",code="error"}`:     0,
		`ghonce_github_content_writes_total`:                           0,
		`ghonce_inflight_waits_total`:                                  0,
		`ghonce_inflight_wait_seconds_total`:                           0,
		`ghonce_takeovers_total`:                                       0,
		`ghonce_pacing_sleeps_total`:                                   0,
		`ghonce_pacing_sleep_seconds_total`:                            0,
	} {
		if v, ok := got[s]; !ok || v != want {
			t.Errorf("%s = %v (exported: %v), want %v", s, v, ok, want)
		}
	}
}

// A nil *Metrics and a nil *Tracer record nothing and do not panic: the
// engine and the GitHub client call them unconditionally.
func TestNilIsOff(t *testing.T) {
	var m *observe.Metrics
	m.Zero([]string{"pr"}, []string{"created"})
	m.Action("pr", "created", time.Second)
	m.GitHubRequest("GET", 200)
	m.PacingSleep(time.Second)
	var tr *observe.Tracer
	ctx, sp := tr.Start(context.Background(), "x", observe.Internal, observe.String("k", "v"))
	sp.Set(observe.Int("n", 1))
	sp.Fail("e", "m")
	sp.End()
	tr.Shutdown(ctx)
	if observe.SpanFromContext(ctx) != nil {
		t.Fatal("a nil tracer put a span in the context")
	}
	if rt := observe.Transport(http.DefaultTransport, nil, nil); rt != http.DefaultTransport {
		t.Fatal("Transport with neither metrics nor tracer wraps the transport")
	}
}

// The textfile: counters add up across runs (as node_exporter's textfile
// collector needs of a counter), gauges are the last run's, the file is
// replaced atomically with mode 0644 and no temporary file is left.
func TestTextfileAddsUpAcrossRuns(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ghonce.prom")
	for i, at := range []time.Time{time.Unix(1000, 0), time.Unix(2000, 500e6)} {
		m := observe.NewMetrics()
		m.Action("issue", "created", time.Second)
		m.GitHubRequest("POST", 201)
		m.Gauges(func(set func(string, float64, ...string)) { set(observe.BuildInfo, 1, "v"+strconv.Itoa(i)) })
		if err := m.WriteTextfile(path, at); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := parse(t, string(b))
	for s, want := range map[string]float64{
		`ghonce_actions_total{kind="issue",outcome="created"}`:          2,
		`ghonce_github_requests_total{method="POST",code="201"}`:        2,
		`ghonce_action_duration_seconds_count{kind="issue"}`:            2,
		`ghonce_action_duration_seconds_bucket{kind="issue",le="+Inf"}`: 2,
		`ghonce_build_info{version="v1"}`:                               1,
		`ghonce_build_info{version="v0"}`:                               0,
		`ghonce_last_run_timestamp_seconds`:                             2000.5,
	} {
		if got[s] != want {
			t.Errorf("%s = %v, want %v\n%s", s, got[s], want, b)
		}
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("textfile mode %v (%v), want 0644", st.Mode(), err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// Concurrent runs writing one textfile lose no count (the lock).
func TestTextfileConcurrentRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ghonce.prom")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := observe.NewMetrics()
			m.Takeover()
			if err := m.WriteTextfile(path, time.Now()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	b, _ := os.ReadFile(path)
	if got := parse(t, string(b))["ghonce_takeovers_total"]; got != 8 {
		t.Fatalf("8 runs, ghonce_takeovers_total %v\n%s", got, b)
	}
}

func TestTraceparent(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	sc, ok := observe.ParseTraceparent(tp)
	if !ok || !sc.Sampled || hex.EncodeToString(sc.TraceID[:]) != "4bf92f3577b34da6a3ce929d0e0e4736" || sc.Traceparent() != tp {
		t.Fatalf("ParseTraceparent(%q) = %+v, %v", tp, sc, ok)
	}
	for _, bad := range []string{"", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"} {
		if _, ok := observe.ParseTraceparent(bad); ok {
			t.Errorf("ParseTraceparent(%q) accepted", bad)
		}
	}
	if _, ok := observe.ParseTraceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-future"); !ok {
		t.Error("a later version's traceparent with more fields is refused")
	}
}

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

// Off unless asked for; a setting ghonce cannot honour is an error naming
// the variable (the CLI reports it and goes on without traces).
func TestTracerFromEnv(t *testing.T) {
	for _, off := range [][]string{
		nil,
		{"OTEL_SERVICE_NAME", "x"},
		{"OTEL_TRACES_EXPORTER", "none", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"},
		{"OTEL_SDK_DISABLED", "true", "OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"},
	} {
		if tr, err := observe.TracerFromEnv(env(off...), observe.TracerOptions{}); tr != nil || err != nil {
			t.Errorf("%v: tracer %v, err %v; want off", off, tr, err)
		}
	}
	for _, bad := range [][]string{
		{"OTEL_TRACES_EXPORTER", "zipkin"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://x:4317", "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "localhost:4318"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://x:4318", "OTEL_TRACES_SAMPLER", "jaeger_remote"},
		{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://x:4318", "OTEL_EXPORTER_OTLP_HEADERS", "api-key"},
	} {
		tr, err := observe.TracerFromEnv(env(bad...), observe.TracerOptions{})
		if err == nil || tr != nil {
			t.Errorf("%v: tracer %v, err %v; want an error", bad, tr, err)
			continue
		}
		if !strings.Contains(err.Error(), "OTEL_") {
			t.Errorf("%v: %v does not name the variable", bad, err)
		}
	}
	// A header's value (an API key) never appears in an error.
	_, err := observe.TracerFromEnv(env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://x:4318", "OTEL_EXPORTER_OTLP_HEADERS", "api-key=SECRET%zz"), observe.TracerOptions{})
	if err == nil || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("bad header value: %v", err)
	}
}

// Spans reach an OTLP receiver with their parents, attributes, status and
// resource; the configured headers go with every export.
func TestExportOTLP(t *testing.T) {
	rcv := otlptest.New(t)
	tr, err := observe.TracerFromEnv(env("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL()+"/",
		"OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=k%3D1", "OTEL_SERVICE_NAME", "ghonce-test", "OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=ci"),
		observe.TracerOptions{Version: "v9"})
	if err != nil || tr == nil {
		t.Fatalf("TracerFromEnv: %v %v", tr, err)
	}
	remote, _ := observe.ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	ctx := observe.ContextWithRemote(context.Background(), remote)
	ctx, parent := tr.Start(ctx, "parent", observe.Server, observe.String("a", "b"))
	_, child := tr.Start(ctx, "child", observe.Client, observe.Int("n", 7))
	child.Fail("404", "Not Found")
	child.End()
	parent.End()
	tr.Shutdown(context.Background())
	spans := rcv.Spans()
	if len(spans) != 2 {
		t.Fatalf("%d spans received, want 2: %+v", len(spans), spans)
	}
	byName := map[string]otlptest.Span{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	p, c := byName["parent"], byName["child"]
	if p.TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" || p.ParentSpanID != "00f067aa0ba902b7" || p.Kind != 2 || p.Attr("a") != "b" {
		t.Errorf("parent %+v: want the remote trace and parent, kind server, a=b", p)
	}
	if c.TraceID != p.TraceID || c.ParentSpanID != p.SpanID || c.Kind != 3 || c.Attr("n") != "7" || c.StatusCode != 2 || c.Attr("error.type") != "404" {
		t.Errorf("child %+v: want parent's trace, parent span, kind client, n=7, error status", c)
	}
	if p.Resource["service.name"] != "ghonce-test" || p.Resource["service.version"] != "v9" || p.Resource["deployment.environment.name"] != "ci" {
		t.Errorf("resource %v", p.Resource)
	}
	if h := rcv.Headers(); len(h) == 0 || h[0].Get("X-Api-Key") != "k=1" {
		t.Errorf("export headers %v, want x-api-key k=1", h)
	}
}

// An unsampled remote parent (flags 00) is followed: nothing is exported,
// as parentbased_always_on, the default, decides.
func TestUnsampledParentIsFollowed(t *testing.T) {
	rcv := otlptest.New(t)
	tr, _ := observe.TracerFromEnv(env("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL()), observe.TracerOptions{})
	remote, _ := observe.ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
	ctx, sp := tr.Start(observe.ContextWithRemote(context.Background(), remote), "p", observe.Server)
	_, child := tr.Start(ctx, "c", observe.Internal)
	child.End()
	sp.End()
	tr.Shutdown(context.Background())
	if n := len(rcv.Spans()); n != 0 {
		t.Fatalf("%d spans exported under an unsampled parent, want 0", n)
	}
}

// A collector that is down costs the program nothing but a line on its
// log: spans are dropped, nothing blocks or fails.
func TestCollectorDown(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
	}))
	defer ts.Close()
	var mu sync.Mutex
	var logs []string
	tr, _ := observe.TracerFromEnv(env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", ts.URL+"/custom/path"), observe.TracerOptions{Logf: func(f string, a ...any) {
		mu.Lock()
		defer mu.Unlock()
		logs = append(logs, f)
	}})
	_, sp := tr.Start(context.Background(), "x", observe.Internal)
	sp.End()
	tr.Shutdown(context.Background())
	if len(logs) != 1 {
		t.Fatalf("logs %q, want one line about the failed export", logs)
	}
}

// The one encoding ghonce sends, protobuf, decodes with OpenTelemetry's
// generated OTLP types (otlptest) to the same spans, numbers and times; a
// configuration asking for http/json is told, once, that protobuf goes.
func TestExportOTLPDecodesWithTheGeneratedTypes(t *testing.T) {
	rcv := otlptest.New(t)
	var logs []string
	tr, _ := observe.TracerFromEnv(env("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL(), "OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
		observe.TracerOptions{Version: "v1", Logf: func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }})
	ctx, p := tr.Start(context.Background(), "parent", observe.Server, observe.String("s", "v"), observe.Bool("b", true))
	_, c := tr.Start(ctx, "child", observe.Client, observe.Int("n", 300))
	c.Fail("500", "boom")
	c.End()
	p.End()
	tr.Shutdown(context.Background())
	if len(logs) != 1 || !strings.Contains(logs[0], "http/protobuf") {
		t.Errorf("logs %q, want one line saying protobuf is sent", logs)
	}
	byName := map[string]otlptest.Span{}
	for _, s := range rcv.Spans() {
		byName[s.Name] = s
	}
	child, parent := byName["child"], byName["parent"]
	if len(byName) != 2 || child.TraceID != parent.TraceID || len(child.TraceID) != 32 || child.ParentSpanID != parent.SpanID {
		t.Fatalf("spans %+v: want a child of parent in one trace", byName)
	}
	if child.Kind != 3 || child.StatusCode != 2 || child.StatusMessage != "boom" || child.Attrs["n"] != int64(300) {
		t.Errorf("child %+v: want kind client, error status boom, n=300", child)
	}
	if parent.Attrs["s"] != "v" || parent.Attrs["b"] != true || parent.Start == 0 || parent.End < parent.Start {
		t.Errorf("parent %+v: want s=v, b=true and its start before its end", parent)
	}
}
