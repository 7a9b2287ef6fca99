package ghcheck

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ghonce/ghonce/observe"
)

// Limit is at most N requests in any Window.
type Limit struct {
	N      int
	Window time.Duration
}

// Budget spends GitHub's rate limits deliberately.
//
// GitHub's secondary limits allow at most 80 content-creating requests a
// minute and 500 an hour per token, and 100 concurrent requests; a request
// over them is refused (403/429) and, worse, repeated offences can get a
// token blocked for longer. ghonce therefore paces its own writes under
// those limits instead of meeting them: a Client waits, before sending, until
// the write fits every Limit of Creates, and never has more than
// MaxInFlight requests open. Pacing is per Client (one process); processes
// sharing a token should share less: lower Creates.
type Budget struct {
	// Creates limits content-creating requests (every method but GET and
	// HEAD). Default: 80 a minute and 500 an hour. Each window is kept
	// 5% (at least paceMargin) longer than stated, so latency jitter
	// between ghonce and GitHub cannot make GitHub count one more than
	// ghonce did.
	Creates []Limit
	// NoPacing turns the pacing of Creates off (tests of rate-limit answers).
	NoPacing bool
	// MaxInFlight bounds concurrent requests (default 8).
	MaxInFlight int
	// Now and Sleep are the pacer's clock (default: the wall clock).
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// DefaultCreates is GitHub's documented content-creation limit per token.
var DefaultCreates = []Limit{{N: 80, Window: time.Minute}, {N: 500, Window: time.Hour}}

// paceMargin is the least a paced window is lengthened by.
const paceMargin = 50 * time.Millisecond

// DefaultMaxInFlight is how many requests a Client has open at most.
const DefaultMaxInFlight = 8

// Stats are what a Client has spent.
type Stats struct {
	// Requests counts requests sent (each retry and each page is one).
	Requests int64
	// NotModified counts conditional reads GitHub answered 304: they do
	// not count against the primary rate limit.
	NotModified int64
	// PacedWait is the total time writes waited for the pacer.
	PacedWait time.Duration
}

type stats struct {
	sent, notModified, paced atomic.Int64
	metrics                  *observe.Metrics
}

// Stats returns what c has spent so far.
func (c *Client) Stats() Stats {
	return Stats{Requests: c.stats.sent.Load(), NotModified: c.stats.notModified.Load(), PacedWait: time.Duration(c.stats.paced.Load())}
}

// budget is a Budget at work: a semaphore for requests in flight and, per
// Limit, the send times of the last N writes.
type budget struct {
	cfg   Budget
	slots chan struct{}
	stats *stats

	mu   sync.Mutex
	sent [][]time.Time // per limit, oldest first, at most N
}

func newBudget(b Budget) *budget {
	if b.Creates == nil {
		b.Creates = DefaultCreates
	}
	if b.NoPacing {
		b.Creates = nil
	}
	if b.MaxInFlight <= 0 {
		b.MaxInFlight = DefaultMaxInFlight
	}
	if b.Now == nil {
		b.Now = time.Now
	}
	if b.Sleep == nil {
		b.Sleep = sleepTimer
	}
	var keep []Limit
	for _, l := range b.Creates {
		if l.N > 0 && l.Window > 0 {
			l.Window += max(l.Window/20, paceMargin)
			keep = append(keep, l)
		}
	}
	b.Creates = keep
	return &budget{cfg: b, slots: make(chan struct{}, b.MaxInFlight), sent: make([][]time.Time, len(keep))}
}

// creates reports whether a request of method counts as content creation.
func creates(method string) bool { return method != http.MethodGet && method != http.MethodHead }

// acquire waits for a slot and, for a write, for room under every limit.
// The returned func releases the slot.
//
// The slot comes first: a write is timed by the pacer when it leaves, not
// when it started queueing for a slot, or a queue of writes would leave
// in a burst.
func (b *budget) acquire(ctx context.Context, write bool) (func(), error) {
	select {
	case b.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	release := func() { <-b.slots }
	if p, ok := ctx.Value(pacedKey{}).(*atomic.Bool); write && ok && p.CompareAndSwap(false, true) {
		return release, nil // Pace waited for it already
	}
	if write {
		if err := b.pace(ctx); err != nil {
			release()
			return nil, err
		}
	}
	return release, nil
}

// pacedKey marks a context whose next write Pace has paced.
type pacedKey struct{}

// Pace waits, as a write would, until one more write fits the pacing
// limits, and counts it: the first write sent with the returned context
// leaves without waiting again (a retry of it waits as any write). A
// caller that must read right before a write paces first, then reads,
// then writes, so no wait comes between the read and the write. Send the
// write at once: the pacer counts it from when Pace returns (the windows'
// margin, 5% of each, covers the moments between).
func (c *Client) Pace(ctx context.Context) (context.Context, error) {
	if err := c.budget.pace(ctx); err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, pacedKey{}, new(atomic.Bool)), nil
}

// pace waits until one more write fits every limit and records it.
func (b *budget) pace(ctx context.Context) error {
	if len(b.cfg.Creates) == 0 {
		return nil
	}
	for {
		b.mu.Lock()
		now := b.cfg.Now()
		var wait time.Duration
		for i, l := range b.cfg.Creates {
			if s := b.sent[i]; len(s) >= l.N {
				wait = max(wait, s[len(s)-l.N].Add(l.Window).Sub(now))
			}
		}
		if wait <= 0 {
			for i, l := range b.cfg.Creates {
				s := append(b.sent[i], now)
				if len(s) > l.N {
					s = s[len(s)-l.N:]
				}
				b.sent[i] = s
			}
			b.mu.Unlock()
			return nil
		}
		b.mu.Unlock()
		if b.stats != nil {
			b.stats.paced.Add(int64(wait))
			b.stats.metrics.PacingSleep(wait)
		}
		if err := b.cfg.Sleep(ctx, wait); err != nil {
			return err
		}
	}
}
