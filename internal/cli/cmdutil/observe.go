package cmdutil

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

// Telemetry is what a run reports to an operator: counters (for a textfile
// or /metrics) and traces (OTLP, from the OTEL_* variables). Both are nil
// when not asked for, and nil costs nothing.
type Telemetry struct {
	Metrics *observe.Metrics
	Tracer  *observe.Tracer
}

// Telemetry builds the run's telemetry once: metrics when GHONCE_METRICS_FILE
// is set or always is (the MCP server's /metrics), traces when the OTEL_*
// variables ask for them. A wrong OTEL_* setting is reported and traces
// stay off, as OpenTelemetry's SDKs do: telemetry never stops the work.
func (f *Factory) Telemetry(always bool) *Telemetry {
	if f.tel == nil {
		f.tel = &Telemetry{}
		t, err := observe.TracerFromEnv(f.IO.Getenv, observe.TracerOptions{Version: f.Version, Logf: f.Logf})
		if err != nil {
			f.Logf("traces are off: %v", err)
		}
		f.tel.Tracer = t
	}
	if f.tel.Metrics == nil && (always || f.IO.Getenv(MetricsFileEnv) != "") {
		f.tel.Metrics = observe.NewMetrics()
		f.tel.Metrics.Zero(kinds.All(), once.Outcomes)
		v := f.Version
		f.tel.Metrics.Gauges(func(set func(string, float64, ...string)) { set(observe.BuildInfo, 1, v) })
	}
	return f.tel
}

// CloseTelemetry, at the end of a run, exports the spans not yet sent and
// adds the run's counters to GHONCE_METRICS_FILE. A failure is reported,
// never the run's exit code.
func (f *Factory) CloseTelemetry() {
	if f.tel == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f.tel.Tracer.Shutdown(ctx)
	if path := f.IO.Getenv(MetricsFileEnv); path != "" && f.tel.Metrics != nil {
		if err := f.tel.Metrics.WriteTextfile(path, f.IO.Now()); err != nil {
			f.Logf("%v (the run's counters are lost; %s names a file in node_exporter's textfile directory, e.g. /var/lib/node_exporter/textfile/ghonce.prom)", err, MetricsFileEnv)
		}
	}
}
