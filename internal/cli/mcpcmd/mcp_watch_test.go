package mcpcmd

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/internal/human"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/observe"
)

// countedLedger is a ledger whose clock and listing a test controls.
type countedLedger struct {
	ledger.Ledger
	mu         sync.Mutex
	reads      int
	err        error
	attempting []*ledger.Entry
}

func (l *countedLedger) Now(context.Context) (time.Time, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.reads++
	return time.Unix(1_000_000, 0), l.err
}

func (l *countedLedger) List(context.Context, ledger.ListParams) ([]*ledger.Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.attempting, l.err
}

func (l *countedLedger) set(err error, attempting ...*ledger.Entry) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.err, l.attempting = err, attempting
}

func (l *countedLedger) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reads
}

// The watch behind /healthz and /metrics reads the ledger at most once per
// interval, however often it is asked; a GitHub rate limit leaves its last
// answer standing (a limit every replica shares must not take them all out
// of the load balancer); a ledger that fails is a 503 until it answers.
func TestLedgerWatch(t *testing.T) {
	t.Parallel()
	l := &countedLedger{attempting: []*ledger.Entry{{UpdatedAt: time.Unix(1_000_000-3600, 0)}, {UpdatedAt: time.Unix(1_000_000-60, 0)}}}
	var mu sync.Mutex
	clock := time.Unix(0, 0)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	tick := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
	m := observe.NewMetrics()
	w := &ledgerWatch{l: l, m: m, staleAge: 15 * time.Minute, every: time.Minute, now: now, logf: t.Logf, ctx: context.Background()}
	m.Gauges(w.gauges)
	gauges := func() string {
		s := m.Snapshot()
		return fmt.Sprintf("%v/%v", s[observe.LedgerAttempting], s[observe.StaleEntries])
	}
	ask := func(n int) error {
		for range n {
			_ = w.Ready(context.Background())
			m.Snapshot()
		}
		w.wait()
		return w.Ready(context.Background())
	}

	if err := ask(100); err != nil || l.count() != 1 || gauges() != "2/1" {
		t.Fatalf("100 probes and scrapes: %v, %d reads, gauges %s; want ok, 1 read, 2 attempting of which 1 stale", err, l.count(), gauges())
	}
	tick(59 * time.Second)
	if ask(10); l.count() != 1 {
		t.Fatalf("within the interval: %d reads, want still 1", l.count())
	}
	tick(time.Second)
	resp := &http.Response{StatusCode: 403, Request: &http.Request{Method: "GET", URL: &url.URL{Scheme: "https", Host: "api.github.com", Path: "/repos/o/r"}}}
	limited := fmt.Errorf("read GitHub's clock: %w", &github.RateLimitError{Response: resp, Message: "API rate limit exceeded"})
	l.set(limited)
	if err := ask(10); err != nil || l.count() != 2 || gauges() != "2/1" {
		t.Fatalf("rate limited: %v, %d reads, gauges %s; want ok, 2 reads, the last counts", err, l.count(), gauges())
	}
	tick(time.Minute)
	down := errors.New("dial tcp 10.0.0.5:5432: connect: connection refused")
	l.set(down)
	if err := ask(10); !errors.Is(err, down) || l.count() != 3 {
		t.Fatalf("ledger down: %v, %d reads; want its error (a 503), 3 reads", err, l.count())
	}
	tick(time.Minute)
	l.set(nil)
	if err := ask(1); err != nil || gauges() != "0/0" {
		t.Fatalf("ledger back: %v, gauges %s; want ok and its counts", err, gauges())
	}

	// The repository ledger keeps its pace after this process acts; a
	// database ledger is read again by the next scrape.
	reads := l.count()
	m.Action("pr", "created", time.Second)
	if ask(3); l.count() != reads {
		t.Fatalf("repository ledger, after an action: %d reads, want %d (its interval holds)", l.count(), reads)
	}
	w.local = true
	m.Action("pr", "found", time.Second)
	if gauges(); l.count() != reads+1 {
		t.Fatalf("database ledger, after an action: %d reads, want %d (the scrape reads it again)", l.count(), reads+1)
	}
	if gauges(); l.count() != reads+1 {
		t.Fatalf("database ledger, a second scrape: %d reads, want still %d", l.count(), reads+1)
	}
}

// The service guide says how often probes and scrapes read the ledger, as
// the constants are.
func TestServiceGuideSaysHowOftenTheLedgerIsRead(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "guide", "service.md"))
	if err != nil {
		t.Fatal(err)
	}
	page := strings.Join(strings.Fields(string(b)), " ")
	for _, want := range []string{"at most every " + human.Duration(watchEvery) + " (every " + human.Duration(watchEveryInRepository) + " on the"} {
		if !strings.Contains(page, want) {
			t.Errorf("docs/guide/service.md does not say %q", want)
		}
	}
}
