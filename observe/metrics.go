// Package observe is what ghonce tells an operator: counters in
// Prometheus' text exposition format (Metrics) and spans exported with
// OTLP (Tracer). It has no dependencies beyond the standard library, so the
// core binary carries no metrics or tracing SDK; the engine, the GitHub
// layer and the MCP server take a *Metrics and a *Tracer, and both are
// nil-safe: a nil one records nothing and costs a nil check.
//
// Metric names follow Prometheus' rules (ghonce_..._total for counters,
// seconds for durations). No label ever carries a key, a task or a
// repository: labels are the action's kind, its outcome, an HTTP method and
// status code, and a ledger state, all of a small fixed set.
package observe

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The metric families ghonce exports. Each is documented by its help text.
const (
	ActionsTotal          = "ghonce_actions_total"
	ActionDuration        = "ghonce_action_duration_seconds"
	GitHubRequestsTotal   = "ghonce_github_requests_total"
	ContentWritesTotal    = "ghonce_github_content_writes_total"
	InFlightWaitsTotal    = "ghonce_inflight_waits_total"
	InFlightWaitSeconds   = "ghonce_inflight_wait_seconds_total"
	TakeoversTotal        = "ghonce_takeovers_total"
	PacingSleepsTotal     = "ghonce_pacing_sleeps_total"
	PacingSleepSeconds    = "ghonce_pacing_sleep_seconds_total"
	LedgerAttempting      = "ghonce_ledger_attempting_entries"
	StaleEntries          = "ghonce_ledger_stale_entries"
	MCPCallsInFlight      = "ghonce_mcp_calls_in_flight"
	BuildInfo             = "ghonce_build_info"
	LastRunTimestamp      = "ghonce_last_run_timestamp_seconds"
	counterType, gaugeTyp = "counter", "gauge"
	histogramType         = "histogram"
)

// family is one metric family's description.
type family struct {
	name, typ, help string
	labels          []string
}

var families = []family{
	{ActionsTotal, counterType, "Actions run, by kind and outcome (created, found, skipped, refused, unconfirmed, in_progress, error).", []string{"kind", "outcome"}},
	{ActionDuration, histogramType, "Time an action took, from its claim to its answer, by kind.", []string{"kind"}},
	{GitHubRequestsTotal, counterType, "Requests sent to GitHub's REST API, by method and status code (\"error\": no answer).", []string{"method", "code"}},
	{ContentWritesTotal, counterType, "Content-creating requests sent to GitHub (POST, PATCH, PUT, DELETE), which GitHub's secondary rate limits count.", nil},
	{InFlightWaitsTotal, counterType, "Actions that waited for another live process holding the same key.", nil},
	{InFlightWaitSeconds, counterType, "Time spent waiting for another process holding the same key.", nil},
	{TakeoversTotal, counterType, "Keys taken over from a holder proven gone or whose lease ended.", nil},
	{PacingSleepsTotal, counterType, "Sleeps before a content-creating request, to stay under GitHub's secondary rate limits.", nil},
	{PacingSleepSeconds, counterType, "Time slept pacing content-creating requests.", nil},
	{LedgerAttempting, gaugeTyp, "Ledger entries attempting now (an attempt running, or what a crash left), read when scraped.", nil},
	{StaleEntries, gaugeTyp, "Attempting entries last written longer ago than the stale age: what a crash left for `ghonce reconcile`.", nil},
	{MCPCallsInFlight, gaugeTyp, "MCP write calls running now.", nil},
	{BuildInfo, gaugeTyp, "Always 1; the running ghonce's version.", []string{"version"}},
	{LastRunTimestamp, gaugeTyp, "When a ghonce command last wrote this file, in seconds since the epoch.", nil},
}

// Family is one metric family ghonce exports.
type Family struct {
	Name, Type, Help string // Type: counter, gauge or histogram
	Labels           []string
}

// Families lists every metric family ghonce exports, in the order
// /metrics writes them: what dashboards and alerting rules may name.
func Families() []Family {
	out := make([]Family, len(families))
	for i, f := range families {
		out[i] = Family{Name: f.name, Type: f.typ, Help: f.help, Labels: slices.Clone(f.labels)}
	}
	return out
}

// durationBuckets are ActionDuration's upper bounds, in seconds: a skipped
// action takes milliseconds, a create a second or two, a takeover's settle
// window 15 seconds, a wait for another holder up to 30.
var durationBuckets = []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60}

// Metrics counts what ghonce did. It is safe for concurrent use; a nil
// *Metrics records nothing.
type Metrics struct {
	mu     sync.Mutex
	values map[string]float64 // sample line's name and labels → value
	gauges []func(set func(name string, v float64, labels ...string))
	acted  uint64 // actions counted (Acted)
	host   HostMeter
}

// NewMetrics returns an empty set of counters.
func NewMetrics() *Metrics { return &Metrics{values: map[string]float64{}} }

// sample is the exposition line's name with its labels, rendered once.
func sample(name string, labels []string, values []string) string {
	if len(labels) == 0 {
		return name
	}
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i, l := range labels {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(l)
		b.WriteString(`="`)
		b.WriteString(escapeLabel(values[i]))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

func escapeLabel(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
}

func familyOf(name string) family {
	for _, f := range families {
		if f.name == name {
			return f
		}
	}
	panic("observe: unknown metric " + name) // a programming error, caught by any test
}

func (m *Metrics) add(name string, v float64, values ...string) {
	if m == nil {
		return
	}
	s := sample(name, familyOf(name).labels, values)
	m.mu.Lock()
	m.values[s] += v
	m.mu.Unlock()
	m.forward(false, name, v, values)
}

// Action counts an action that ended with outcome after d.
func (m *Metrics) Action(kind, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.add(ActionsTotal, 1, kind, outcome)
	secs := d.Seconds()
	defer m.forward(true, ActionDuration, secs, []string{kind})
	m.mu.Lock()
	defer m.mu.Unlock()
	m.acted++
	for _, le := range durationBuckets {
		if secs <= le {
			m.values[sample(ActionDuration+"_bucket", []string{"kind", "le"}, []string{kind, formatFloat(le)})]++
		}
	}
	m.values[sample(ActionDuration+"_bucket", []string{"kind", "le"}, []string{kind, "+Inf"})]++
	m.values[sample(ActionDuration+"_sum", []string{"kind"}, []string{kind})] += secs
	m.values[sample(ActionDuration+"_count", []string{"kind"}, []string{kind})]++
}

// Acted is how many actions m has counted: a gauge read from the ledger is
// stale once it moves (this process changed the ledger since).
func (m *Metrics) Acted() uint64 {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.acted
}

// Zero exports every counter at 0 before it first moves, as Prometheus
// asks of known label values: a series that appears at 1 shows no
// increase(), so the first unconfirmed action would raise no alert. It sets
// the actions of each kind and outcome, each kind's duration histogram, the
// counters without labels, and the GitHub requests that got no answer
// (code "error") by method; a status code appears when GitHub first sends
// it. Counters already counted keep their values.
func (m *Metrics) Zero(kinds, outcomes []string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	zero := func(name string, labels, values []string) { m.values[sample(name, labels, values)] += 0 }
	for _, k := range kinds {
		for _, o := range outcomes {
			zero(ActionsTotal, familyOf(ActionsTotal).labels, []string{k, o})
		}
		for _, le := range append(formatBuckets(), "+Inf") {
			zero(ActionDuration+"_bucket", []string{"kind", "le"}, []string{k, le})
		}
		zero(ActionDuration+"_sum", []string{"kind"}, []string{k})
		zero(ActionDuration+"_count", []string{"kind"}, []string{k})
	}
	for _, method := range []string{http.MethodGet, http.MethodPost, http.MethodPatch, http.MethodPut, http.MethodDelete} {
		zero(GitHubRequestsTotal, familyOf(GitHubRequestsTotal).labels, []string{method, "error"})
	}
	for _, f := range families {
		if f.typ == counterType && len(f.labels) == 0 {
			zero(f.name, nil, nil)
		}
	}
}

// formatBuckets are durationBuckets as their le labels.
func formatBuckets() []string {
	out := make([]string, len(durationBuckets))
	for i, le := range durationBuckets {
		out[i] = formatFloat(le)
	}
	return out
}

// GitHubRequest counts a request sent to GitHub; code 0 is one that got no
// answer.
func (m *Metrics) GitHubRequest(method string, code int) {
	c := "error"
	if code > 0 {
		c = strconv.Itoa(code)
	}
	m.add(GitHubRequestsTotal, 1, method, c)
}

// ContentWrite counts a content-creating request sent to GitHub.
func (m *Metrics) ContentWrite() { m.add(ContentWritesTotal, 1) }

// InFlightWait counts a wait of d for another process holding a key.
func (m *Metrics) InFlightWait(d time.Duration) {
	m.add(InFlightWaitsTotal, 1)
	m.add(InFlightWaitSeconds, d.Seconds())
}

// Takeover counts a key taken over from an earlier holder.
func (m *Metrics) Takeover() { m.add(TakeoversTotal, 1) }

// PacingSleep counts a sleep of d before a content-creating request.
func (m *Metrics) PacingSleep(d time.Duration) {
	m.add(PacingSleepsTotal, 1)
	m.add(PacingSleepSeconds, d.Seconds())
}

// Gauges adds f, called on every scrape or write to set gauges (by their
// family's name and label values).
func (m *Metrics) Gauges(f func(set func(name string, v float64, labels ...string))) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.gauges = append(m.gauges, f)
	m.mu.Unlock()
}

// Snapshot returns every sample, counters and gauges, by its exposition
// name with labels (e.g. `ghonce_actions_total{kind="pr",outcome="created"}`).
func (m *Metrics) Snapshot() map[string]float64 {
	out := map[string]float64{}
	if m == nil {
		return out
	}
	m.mu.Lock()
	gauges := slices.Clone(m.gauges)
	for k, v := range m.values {
		out[k] = v
	}
	m.mu.Unlock()
	for _, g := range gauges {
		g(func(name string, v float64, labels ...string) {
			out[sample(name, familyOf(name).labels, labels)] = v
		})
	}
	return out
}

// WriteText writes every sample in Prometheus' text exposition format
// (version 0.0.4): each family's HELP and TYPE, then its samples sorted.
func (m *Metrics) WriteText(w io.Writer) error { return writeText(w, m.Snapshot()) }

func writeText(w io.Writer, samples map[string]float64) error {
	bw := bufio.NewWriter(w)
	names := make([]string, 0, len(samples))
	for k := range samples {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, f := range families {
		var lines []string
		for _, s := range names {
			base, _, _ := strings.Cut(s, "{")
			if base == f.name || f.typ == histogramType && (base == f.name+"_bucket" || base == f.name+"_sum" || base == f.name+"_count") {
				lines = append(lines, s)
			}
		}
		if len(lines) == 0 {
			continue
		}
		if f.typ == histogramType {
			sortBuckets(lines)
		}
		fmt.Fprintf(bw, "# HELP %s %s\n# TYPE %s %s\n", f.name, escapeHelp(f.help), f.name, f.typ)
		for _, s := range lines {
			fmt.Fprintf(bw, "%s %s\n", s, formatFloat(samples[s]))
		}
	}
	return bw.Flush()
}

// sortBuckets orders a histogram's lines as Prometheus expects them: per
// label set, buckets by ascending le, then _sum and _count.
func sortBuckets(lines []string) {
	le := func(s string) float64 {
		i := strings.Index(s, `le="`)
		if i < 0 {
			return math.Inf(1)
		}
		v := s[i+4:]
		v = v[:strings.IndexByte(v, '"')]
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return math.Inf(1)
		}
		return f
	}
	rank := func(s string) (string, int, float64) {
		base, labels, _ := strings.Cut(s, "{")
		labels = strings.TrimSuffix(labels, "}")
		var keep []string
		for _, l := range strings.Split(labels, ",") {
			if !strings.HasPrefix(l, "le=") {
				keep = append(keep, l)
			}
		}
		group := strings.Join(keep, ",")
		switch {
		case strings.HasSuffix(base, "_bucket"):
			return group, 0, le(s)
		case strings.HasSuffix(base, "_sum"):
			return group, 1, 0
		}
		return group, 2, 0
	}
	slices.SortStableFunc(lines, func(a, b string) int {
		ga, ra, la := rank(a)
		gb, rb, lb := rank(b)
		if c := strings.Compare(ga, gb); c != 0 {
			return c
		}
		if ra != rb {
			return ra - rb
		}
		switch {
		case la < lb:
			return -1
		case la > lb:
			return 1
		}
		return 0
	})
}

func escapeHelp(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`).Replace(s)
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Handler serves the metrics at GET, as Prometheus scrapes them.
func (m *Metrics) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed: scrape with GET", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
		_ = m.WriteText(w)
	})
}
