package mcpcmd

import (
	"context"
	"sync"
	"time"

	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/store"
	"github.com/ghonce/ghonce/observe"
)

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
