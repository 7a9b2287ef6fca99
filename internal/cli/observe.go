package cli

import (
	"context"
	"time"

	"github.com/ghonce/ghonce/internal/once"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/observe"
)

// MetricsFileEnv names the file a CLI run adds its counters to, for
// node_exporter's textfile collector.
const MetricsFileEnv = "GHONCE_METRICS_FILE"

// telemetry is what a run reports to an operator: counters (for a textfile
// or /metrics) and traces (OTLP, from the OTEL_* variables). Both are nil
// when not asked for, and nil costs nothing.
type telemetry struct {
	metrics *observe.Metrics
	tracer  *observe.Tracer
}

// telemetry builds the run's telemetry once: metrics when GHONCE_METRICS_FILE
// is set or always is (the MCP server's /metrics), traces when the OTEL_*
// variables ask for them. A wrong OTEL_* setting is reported and traces
// stay off, as OpenTelemetry's SDKs do: telemetry never stops the work.
func (f *factory) telemetry(always bool) *telemetry {
	if f.tel == nil {
		f.tel = &telemetry{}
		t, err := observe.TracerFromEnv(f.sys.Getenv, observe.TracerOptions{Version: f.version, Logf: f.logf})
		if err != nil {
			f.logf("traces are off: %v", err)
		}
		f.tel.tracer = t
	}
	if f.tel.metrics == nil && (always || f.sys.Getenv(MetricsFileEnv) != "") {
		f.tel.metrics = observe.NewMetrics()
		f.tel.metrics.Zero(kinds.All(), once.Outcomes)
		v := f.version
		f.tel.metrics.Gauges(func(set func(string, float64, ...string)) { set(observe.BuildInfo, 1, v) })
	}
	return f.tel
}

// closeTelemetry, at the end of a run, exports the spans not yet sent and
// adds the run's counters to GHONCE_METRICS_FILE. A failure is reported,
// never the run's exit code.
func (f *factory) closeTelemetry() {
	if f.tel == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f.tel.tracer.Shutdown(ctx)
	if path := f.sys.Getenv(MetricsFileEnv); path != "" && f.tel.metrics != nil {
		if err := f.tel.metrics.WriteTextfile(path, f.sys.Now()); err != nil {
			f.logf("%v (the run's counters are lost; %s names a file in node_exporter's textfile directory, e.g. /var/lib/node_exporter/textfile/ghonce.prom)", err, MetricsFileEnv)
		}
	}
}
