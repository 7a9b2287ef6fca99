package ghoncetemporal

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.temporal.io/sdk/activity"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/observe"
	"github.com/ghonce/ghonce/reconcile"
)

// A worker that traces with the Temporal SDK's own OpenTelemetry
// interceptor hands ghonce the same providers (Telemetry): ghonce's action
// span is a child of the interceptor's activity span, its GitHub requests
// children of the action, and its counters land in the worker's meter
// under ghonce's names.
func TestTelemetryJoinsTheWorkersOpenTelemetry(t *testing.T) {
	w := newWorld(t)
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))

	tracer, metrics := Telemetry(tp, mp)
	eng := w.Engine(func(c *reconcile.Config) {
		c.Tracer, c.Metrics = tracer, metrics
		c.GitHub = w.Client(ghcheck.Options{Tracer: tracer, Metrics: metrics})
	})
	tracing, err := temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{Tracer: tp.Tracer("temporal-sdk-go")})
	if err != nil {
		t.Fatal(err)
	}
	env := newEnv(t, "wf-telemetry")
	env.SetWorkerOptions(worker.Options{Interceptors: []interceptor.WorkerInterceptor{tracing}})
	env.RegisterActivityWithOptions(func(ctx context.Context, title string) (opened, error) {
		res, err := Do(ctx, eng, prAction(title))
		if err != nil {
			return opened{}, err
		}
		return opened{Outcome: string(res.Outcome), Number: res.Number, Attempt: activity.GetInfo(ctx).Attempt}, nil
	}, activity.RegisterOptions{Name: "OpenPR"})
	env.ExecuteWorkflow(openPRWorkflow, "Fix the flaky test")
	var out opened
	if err := env.GetWorkflowResult(&out); err != nil || out.Outcome != "created" {
		t.Fatalf("workflow: %+v %v", out, err)
	}

	byID := map[string]sdktrace.ReadOnlySpan{}
	for _, s := range spans.Ended() {
		byID[s.SpanContext().SpanID().String()] = s
	}
	var action sdktrace.ReadOnlySpan
	requests := 0
	for _, s := range spans.Ended() {
		if s.InstrumentationScope().Name != "github.com/ghonce/ghonce" {
			continue
		}
		parent := byID[s.Parent().SpanID().String()]
		switch {
		case parent != nil && parent.InstrumentationScope().Name == "temporal-sdk-go":
			action = s
		case s.SpanKind().String() == "client":
			requests++
		}
	}
	if action == nil {
		t.Fatalf("no ghonce span is a child of the interceptor's activity span: %d spans", len(spans.Ended()))
	}
	if requests == 0 {
		t.Error("no GitHub request span reached the worker's tracer")
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	created := 0.0
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[float64]); ok && m.Name == observe.ActionsTotal {
				for _, dp := range sum.DataPoints {
					if v, _ := dp.Attributes.Value(attribute.Key("outcome")); v.AsString() == "created" {
						created += dp.Value
					}
				}
			}
		}
	}
	if created != 1 {
		t.Errorf("%s{outcome=created} = %v in the worker's meter, want 1", observe.ActionsTotal, created)
	}
}
