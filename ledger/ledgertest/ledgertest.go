// Package ledgertest is the conformance suite of the ledger contract: every
// backend (SQLite, Postgres, ...) runs Run from its own tests and must pass
// it unchanged. It tests only what ledger.Ledger promises, through the
// interface, with a clock the suite controls.
//
// Besides the interface comments, the suite holds backends to these points,
// which the comments leave implicit:
//
//   - Times are read from the clock the backend was opened with. Every time
//     the suite sets is a whole millisecond, so a backend that stores
//     microseconds compares equal.
//   - A lease whose end equals now is dead.
//   - Claim, when it writes (created or acquired), Finish (including a
//     release), SetPayload and Resolve each append one transition; Claim
//     that finds the entry done or busy, Renew, and the reads append none.
//     A transition records the owner that made it ("person:<who>" for
//     Resolve), the fence the entry has after it, and the Why (Resolve: the
//     Note).
//   - Finish and Resolve clear Owner and LeaseUntil (a release keeps the
//     status attempting); Resolve sets Outcome "resolved".
//   - An acquiring Claim keeps LastError (it tells the new runner what went
//     wrong before); only Finish changes it.
//   - List with a zero Limit returns every match.
//
// What a holder's own second Claim of a key it holds returns is not pinned
// down: the contract names no state for it.
package ledgertest

import (
	"context"
	"testing"
	"time"

	"github.com/ghonce/ghonce/ledger"
)

// Open returns a new, empty ledger that reads the time from now. Run calls
// it once per subtest and closes the ledger when the subtest ends; Open
// itself removes any backing store it made, with t.Cleanup.
type Open func(t *testing.T, now func() time.Time) ledger.Ledger

// start is the time the suite's clock shows when a subtest begins: a whole
// second, far from the zero time and from the Unix epoch.
func start() time.Time { return time.Date(2030, time.January, 2, 3, 4, 5, 0, time.UTC) }

// Option adjusts what the suite holds a backend to.
type Option func(*harness)

// LockOnly is for a backend whose entries anyone who can read its store
// reads (the repository ledger, on a public repository anyone): it keeps
// of an entry only what a lock and a record need. The payload is kept as
// its hash only (Payload reads back as this process claimed it, or
// empty), no LastError, no Ref.Text, the holder as an opaque ID whose
// process identity only its own machine reads back, the sending mark's
// process likewise, and a history of times, statuses and fences, without
// who or why. Everything else the suite holds it to as any backend.
func LockOnly() Option { return func(h *harness) { h.lockOnly = true } }

// Run runs the conformance suite against the backend that open makes.
func Run(t *testing.T, open Open, opts ...Option) {
	tests := []struct {
		name string
		fn   func(h *harness)
	}{
		{"ClaimCreates", testClaimCreates},
		{"ClaimBusyWritesNothing", testClaimBusy},
		{"ClaimDoneWritesNothing", testClaimDone},
		{"LeaseExpiry", testLeaseExpiry},
		{"ClaimNowIsTheLedgersClock", testClaimNow},
		{"SendingMark", testSending},
		{"ClaimWithSendingMark", testClaimSending},
		{"StaleOwnerFenced", testStaleOwnerFenced},
		{"TakeOverFence", testTakeOverFence},
		{"Release", testRelease},
		{"ReleaseKeepsAge", testReleaseKeepsAge},
		{"FailedIsAcquired", testFailedIsAcquired},
		{"FinishDone", testFinishDone},
		{"FinishVerifiable", testFinishVerifiable},
		{"LastError", testLastError},
		{"Payload", testPayload},
		{"Renew", testRenew},
		{"ResolveBusy", testResolveBusy},
		{"ResolveDone", testResolveDone},
		{"ResolveFailed", testResolveFailed},
		{"History", testHistory},
		{"List", testList},
		{"NotFound", testNotFound},
		{"ConcurrentCreate", testConcurrentCreate},
		{"ConcurrentAcquire", testConcurrentAcquire},
		{"Meta", testMeta},
		{"ConcurrentMetaIfAbsent", testConcurrentMetaIfAbsent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := NewClock(start())
			l := open(t, clock.Now)
			t.Cleanup(func() {
				if err := l.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
			h := &harness{t: t, l: l, clock: clock, start: clock.Now(), ctx: context.Background()}
			for _, o := range opts {
				o(h)
			}
			tt.fn(h)
		})
	}
}
