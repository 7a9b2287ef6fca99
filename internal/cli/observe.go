package cli

import (
	"context"
	"sync"
	"time"

	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/once"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/store"
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
		t, err := observe.TracerFromEnv(f.sys.Getenv, observe.TracerOptions{Version: buildVersion(), Logf: f.logf})
		if err != nil {
			f.logf("traces are off: %v", err)
		}
		f.tel.tracer = t
	}
	if f.tel.metrics == nil && (always || f.sys.Getenv(MetricsFileEnv) != "") {
		f.tel.metrics = observe.NewMetrics()
		f.tel.metrics.Zero(kinds.All(), once.Outcomes)
		v := buildVersion()
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

// How often /healthz and /metrics may read the ledger, whatever the number
// of probes and scrapes: a read of the repository ledger is a few GitHub
// requests (its clock, the claims' refs, claims not read before), spent
// from the agents' own limit, so it is rarer there.
const (
	watchEvery             = 15 * time.Second
	watchEveryInRepository = time.Minute
)

// ledgerWatch is what /healthz and /metrics say of the ledger: the last
// read of it (its clock and its attempting entries), made in the
// background at most once every `every`, when a probe or a scrape finds the
// last one older. No probe waits on the ledger, and no number of probes or
// scrapes costs more than that one read. A GitHub rate limit is not the
// ledger failing (it is every replica's at once, and it passes): the last
// answer stands, and /healthz stays 200.
//
// This process's own actions change the ledger too: once one has ended
// since the last read, a scrape of a database ledger (SQLite, Postgres: a
// local query, no GitHub request) reads it again before it answers, so
// the gauges show what the process did. The repository ledger keeps its
// pace: each of its reads costs GitHub requests.
type ledgerWatch struct {
	l        ledger.Ledger
	m        *observe.Metrics
	local    bool   // a database ledger: a read costs no GitHub request
	seen     uint64 // m.Acted() when the last read began
	staleAge time.Duration
	every    time.Duration
	now      func() time.Time
	logf     func(format string, args ...any)
	ctx      context.Context // the server's: a read still running ends with it
	reads    sync.WaitGroup

	mu                sync.Mutex
	began             time.Time // when the last read began; zero before the first
	reading           bool
	err               error // the last read's failure; nil once the ledger answered
	counted           bool  // attempting and stale hold a read's counts
	attempting, stale int
}

// watchLedger starts watching l for /healthz (Ready) and the ledger gauges
// of m, reading it once now; wait, when the server is done, returns once
// no read runs.
func watchLedger(ctx context.Context, m *observe.Metrics, l *store.Opened, staleAge time.Duration, now func() time.Time, logf func(string, ...any)) (w *ledgerWatch) {
	w = &ledgerWatch{l: l, m: m, local: !l.InRepository, staleAge: staleAge, every: watchEvery, now: now, logf: logf, ctx: ctx}
	if l.InRepository {
		w.every = watchEveryInRepository
	}
	m.Gauges(w.gauges)
	w.poke()
	return w
}

// Ready is /healthz's answer: the last read's failure, if it failed.
func (w *ledgerWatch) Ready(context.Context) error {
	w.poke()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *ledgerWatch) gauges(set func(string, float64, ...string)) {
	if w.local && w.m.Acted() != w.seenNow() {
		// An action of this process ended since the last read: read now.
		w.reads.Add(1)
		w.mu.Lock()
		w.reading, w.began, w.seen = true, w.now(), w.m.Acted()
		w.mu.Unlock()
		w.read()
	} else {
		w.poke()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.counted {
		set(observe.LedgerAttempting, float64(w.attempting))
		set(observe.StaleEntries, float64(w.stale))
	}
}

func (w *ledgerWatch) seenNow() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen
}

// wait returns once no read runs.
func (w *ledgerWatch) wait() { w.reads.Wait() }

// poke starts a read unless one runs or the last began less than every ago.
func (w *ledgerWatch) poke() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.reading || !w.began.IsZero() && w.now().Sub(w.began) < w.every {
		return
	}
	w.reading, w.began, w.seen = true, w.now(), w.m.Acted()
	w.reads.Add(1)
	go w.read()
}

func (w *ledgerWatch) read() {
	defer w.reads.Done()
	ctx, cancel := context.WithTimeout(w.ctx, 30*time.Second)
	defer cancel()
	attempting, stale, err := w.count(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reading = false
	switch {
	case err == nil:
		if w.err != nil {
			w.logf("the ledger answers again: /healthz answers 200")
		}
		w.err, w.counted, w.attempting, w.stale = nil, true, attempting, stale
	case w.ctx.Err() != nil:
		// The server is stopping: this read says nothing of the ledger.
	case ghcheck.IsRateLimit(err):
		w.logf("GitHub's rate limit holds the ledger's read for /healthz and /metrics; both keep their last answer: %v", err)
	default:
		if w.err == nil {
			w.logf("the ledger does not answer: %v; /healthz answers 503 until it does", err)
		}
		w.err = err
	}
}

// count reads the ledger's attempting entries, and those of them last
// written longer ago than staleAge (what `ghonce status --stale` lists).
func (w *ledgerWatch) count(ctx context.Context) (attempting, stale int, err error) {
	now, err := w.l.Now(ctx)
	if err != nil {
		return 0, 0, err
	}
	es, err := w.l.List(ctx, ledger.ListParams{Status: ledger.Attempting})
	if err != nil {
		return 0, 0, err
	}
	for _, e := range es {
		if now.Sub(e.UpdatedAt) > w.staleAge {
			stale++
		}
	}
	return len(es), stale, nil
}
