package observe

import "context"

// A Go program that embeds ghonce and has its own tracing and metrics (an
// OpenTelemetry TracerProvider and MeterProvider, a Prometheus registry)
// receives ghonce's spans and counters there, under the names ghonce
// exports, through HostTracer and HostMeter: this package stays free of
// the SDKs, and the program's adapter (see adapters/temporal's Telemetry)
// is the only code that knows both.

// HostTracer starts spans in the host program's tracing. Start returns ctx
// carrying the host's span, so spans the host starts below it (an
// interceptor's, an HTTP client's) nest under ghonce's.
type HostTracer interface {
	Start(ctx context.Context, name string, kind Kind, attrs ...Attr) (context.Context, HostSpan)
}

// HostSpan is a span HostTracer started. Context is its identity, which
// ghonce's GitHub transport sends on as the traceparent header.
type HostSpan interface {
	Set(attrs ...Attr)
	Fail(errType, msg string)
	End()
	Context() SpanContext
}

// NewHostTracer returns a Tracer whose spans are h's: it exports nothing
// itself, and its Shutdown and ForceFlush do nothing (the host's own
// provider flushes).
func NewHostTracer(h HostTracer) *Tracer { return &Tracer{host: h} }

// HostMeter receives ghonce's counters as they move: Add for a counter
// family (ActionsTotal, GitHubRequestsTotal, ...) by its label names and
// values, Record for a histogram's observation (ActionDuration, in
// seconds). Gauges are read when scraped and stay on Handler and
// WriteText.
type HostMeter interface {
	Add(name string, v float64, labels map[string]string)
	Record(name string, v float64, labels map[string]string)
}

// Forward sends every later count of m to h as well.
func (m *Metrics) Forward(h HostMeter) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.host = h
	m.mu.Unlock()
}

// forward hands one count to the host meter, if any, outside m's lock.
func (m *Metrics) forward(record bool, name string, v float64, values []string) {
	m.mu.Lock()
	h := m.host
	m.mu.Unlock()
	if h == nil {
		return
	}
	labels := make(map[string]string, len(values))
	for i, l := range familyOf(name).labels {
		if i < len(values) {
			labels[l] = values[i]
		}
	}
	if record {
		h.Record(name, v, labels)
	} else {
		h.Add(name, v, labels)
	}
}
