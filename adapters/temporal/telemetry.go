package ghoncetemporal

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/ghonce/ghonce/observe"
)

// Telemetry routes ghonce's spans and counters into the worker's own
// OpenTelemetry providers, under the names ghonce exports (observe's
// families): pass the Tracer and Metrics to reconcile.Config and to
// ghcheck.Options. A ghonce span started inside an activity is a child of
// the span Temporal's tracing interceptor started for it, so one trace
// shows the workflow, the activity and ghonce's look-up and create.
func Telemetry(tp trace.TracerProvider, mp metric.MeterProvider) (*observe.Tracer, *observe.Metrics) {
	m := observe.NewMetrics()
	m.Forward(&otelMeter{meter: mp.Meter("github.com/ghonce/ghonce"), counters: map[string]metric.Float64Counter{}, histograms: map[string]metric.Float64Histogram{}})
	return observe.NewHostTracer(otelTracer{tp.Tracer("github.com/ghonce/ghonce")}), m
}

type otelTracer struct{ t trace.Tracer }

func (o otelTracer) Start(ctx context.Context, name string, kind observe.Kind, attrs ...observe.Attr) (context.Context, observe.HostSpan) {
	ctx, s := o.t.Start(ctx, name, trace.WithSpanKind(trace.SpanKind(kind)), trace.WithAttributes(otelAttrs(attrs)...))
	return ctx, otelSpan{s}
}

type otelSpan struct{ s trace.Span }

func (o otelSpan) Set(attrs ...observe.Attr) { o.s.SetAttributes(otelAttrs(attrs)...) }
func (o otelSpan) End()                      { o.s.End() }

func (o otelSpan) Fail(errType, msg string) {
	o.s.SetAttributes(attribute.String("error.type", errType))
	o.s.SetStatus(codes.Error, msg)
}

func (o otelSpan) Context() observe.SpanContext {
	sc := o.s.SpanContext()
	return observe.SpanContext{TraceID: sc.TraceID(), SpanID: sc.SpanID(), Sampled: sc.IsSampled()}
}

func otelAttrs(attrs []observe.Attr) []attribute.KeyValue {
	out := make([]attribute.KeyValue, 0, len(attrs))
	for _, a := range attrs {
		switch v := a.Value.(type) {
		case string:
			out = append(out, attribute.String(a.Key, v))
		case int64:
			out = append(out, attribute.Int64(a.Key, v))
		case bool:
			out = append(out, attribute.Bool(a.Key, v))
		}
	}
	return out
}

// otelMeter makes each ghonce family an instrument of the same name on
// first use: a counter, or for the action duration a histogram.
type otelMeter struct {
	meter      metric.Meter
	mu         sync.Mutex
	counters   map[string]metric.Float64Counter
	histograms map[string]metric.Float64Histogram
}

func labels(l map[string]string) metric.MeasurementOption {
	kv := make([]attribute.KeyValue, 0, len(l))
	for k, v := range l {
		kv = append(kv, attribute.String(k, v))
	}
	return metric.WithAttributes(kv...)
}

func (o *otelMeter) Add(name string, v float64, l map[string]string) {
	o.mu.Lock()
	c, ok := o.counters[name]
	if !ok {
		c, _ = o.meter.Float64Counter(name)
		o.counters[name] = c
	}
	o.mu.Unlock()
	c.Add(context.Background(), v, labels(l))
}

func (o *otelMeter) Record(name string, v float64, l map[string]string) {
	o.mu.Lock()
	h, ok := o.histograms[name]
	if !ok {
		h, _ = o.meter.Float64Histogram(name, metric.WithUnit("s"))
		o.histograms[name] = h
	}
	o.mu.Unlock()
	h.Record(context.Background(), v, labels(l))
}
