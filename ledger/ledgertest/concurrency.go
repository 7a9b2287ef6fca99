package ledgertest

// Races: concurrent creates, acquisitions and meta writes.

import (
	"fmt"
	"sync"

	"github.com/ghonce/ghonce/ledger"
)

// racers is how many goroutines a race starts.
const racers = 16

// race has racers goroutines claim key at once, as owners r0, r1, ..., and
// returns how many got each state.
func (h *harness) race(key string) (map[ledger.ClaimState]int, *ledger.Claim) {
	h.t.Helper()
	var (
		start  = make(chan struct{})
		wg     sync.WaitGroup
		mu     sync.Mutex
		states = map[ledger.ClaimState]int{}
		winner *ledger.Claim
	)
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			c, err := h.l.Claim(h.ctx, params(key, fmt.Sprintf("r%d", i)))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				h.t.Errorf("racer %d: Claim: %v", i, err)
				return
			}
			states[c.State]++
			if c.State == ledger.ClaimCreated || c.State == ledger.ClaimAcquired {
				winner = c
			}
		}()
	}
	close(start)
	wg.Wait()
	return states, winner
}

func testConcurrentCreate(h *harness) {
	states, winner := h.race("k")
	if states[ledger.ClaimCreated] != 1 || states[ledger.ClaimBusy] != racers-1 {
		h.t.Fatalf("%d concurrent claims of a new key: %v created, %v busy, %v acquired; want 1, %d, 0",
			racers, states[ledger.ClaimCreated], states[ledger.ClaimBusy], states[ledger.ClaimAcquired], racers-1)
	}
	h.same("winner's entry", h.get("k"), winner.Entry)
	if n := len(h.history("k")); n != 1 {
		h.t.Errorf("history has %d transitions, want 1", n)
	}
}

func testConcurrentAcquire(h *harness) {
	h.claim(params("k", "a"), ledger.ClaimCreated)
	h.clock.Advance(lease)
	states, winner := h.race("k")
	if states[ledger.ClaimAcquired] != 1 || states[ledger.ClaimBusy] != racers-1 {
		h.t.Fatalf("%d concurrent claims of a dead lease: %v acquired, %v busy, %v created; want 1, %d, 0",
			racers, states[ledger.ClaimAcquired], states[ledger.ClaimBusy], states[ledger.ClaimCreated], racers-1)
	}
	e := h.get("k")
	h.same("winner's entry", e, winner.Entry)
	if e.Fence != 2 || e.Attempts != 2 {
		h.t.Errorf("fence %d, attempts %d; want 2, 2", e.Fence, e.Attempts)
	}
	if n := len(h.history("k")); n != 2 {
		h.t.Errorf("history has %d transitions, want 2", n)
	}
}

func testConcurrentMetaIfAbsent(h *harness) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		wins  []string
		start = make(chan struct{})
	)
	for i := 0; i < racers; i++ {
		wg.Add(1)
		go func(v string) {
			defer wg.Done()
			<-start
			wrote, err := h.l.PutMeta(h.ctx, "ledgertest-meta", v, true)
			if err != nil {
				h.t.Errorf("PutMeta: %v", err)
				return
			}
			if wrote {
				mu.Lock()
				wins = append(wins, v)
				mu.Unlock()
			}
		}(fmt.Sprint("writer-", i))
	}
	close(start)
	wg.Wait()
	if len(wins) != 1 {
		h.t.Fatalf("%d concurrent ifAbsent writers won: %v; want exactly one", racers, wins)
	}
	if v, err := h.l.GetMeta(h.ctx, "ledgertest-meta"); err != nil || v != wins[0] {
		h.t.Errorf("GetMeta = %q, %v; want the winner's %q", v, err, wins[0])
	}
}
