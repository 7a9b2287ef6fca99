package ledgertest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ghonce/ghonce/ledger"
)

// BenchClaim is the claim the backends' benchmarks make for key: a pull
// request with a payload of typical size, the same in every backend so
// that their figures compare.
func BenchClaim(key string) ledger.ClaimParams {
	return ledger.ClaimParams{
		Key: key, Task: "task", Step: "open-pr", Kind: "pr", Repo: "octo/repo", Target: "main",
		Payload:     []byte(`{"title":"Fix the frobnicator","body":"A body of a typical pull request, a few hundred bytes long."}`),
		PayloadHash: "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		Owner:       ledger.Owner{ID: "bench", Host: "host", PID: 1},
		Lease:       time.Minute, Why: "bench",
	}
}

// BenchAction is one fresh action as the engine records it: p claims a key
// that has no entry, and the finish marks it done. verifiable says whether
// the done record may go unforced (a GitHub kind) or not (a guarded
// command without --check). Anything but a new entry is an error.
func BenchAction(ctx context.Context, l ledger.Ledger, p ledger.ClaimParams, verifiable bool) error {
	c, err := l.Claim(ctx, p)
	if err != nil {
		return err
	}
	if c.State != ledger.ClaimCreated {
		return fmt.Errorf("claim %s: %v, want a new entry", p.Key, c.State)
	}
	_, err = l.Finish(ctx, ledger.FinishParams{Key: p.Key, Fence: c.Entry.Fence, Status: ledger.Done, Outcome: "created",
		Ref: ledger.Ref{Number: 1}, Why: "bench", Verifiable: verifiable})
	return err
}

// BenchCreate is a fresh action that creates, as the engine records it:
// the claim, the sending mark just before the create leaves (forced, with
// the lease renewed: before the mark existed the engine renewed the lease
// there, unforced), and the done record (Verifiable).
func BenchCreate(ctx context.Context, l ledger.Ledger, p ledger.ClaimParams) error {
	c, err := l.Claim(ctx, p)
	if err != nil {
		return err
	}
	if c.State != ledger.ClaimCreated {
		return fmt.Errorf("claim %s: %v, want a new entry", p.Key, c.State)
	}
	if err := l.MarkSending(ctx, ledger.SendingParams{Key: p.Key, Fence: c.Entry.Fence, Lease: p.Lease}); err != nil {
		return err
	}
	_, err = l.Finish(ctx, ledger.FinishParams{Key: p.Key, Fence: c.Entry.Fence, Status: ledger.Done, Outcome: "created",
		Ref: ledger.Ref{Number: 1}, Why: "bench", Verifiable: true})
	return err
}

// ConcurrentOpens opens one ledger n times at once, as n processes starting
// together would, and returns how many of the opens report that they
// created it. Every open must succeed.
func ConcurrentOpens[L interface {
	Created() bool
	Close() error
}](t *testing.T, n int, open func() (L, error)) int {
	t.Helper()
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		mu      sync.Mutex
		created int
	)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			l, err := open()
			if err != nil {
				t.Errorf("Open: %v", err)
				return
			}
			defer l.Close()
			if l.Created() {
				mu.Lock()
				created++
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	return created
}
