package ledger_test

import (
	"testing"
	"time"

	"github.com/ghonce/ghonce/ledger"
)

// TestLeaseBeyondMaxLeaseHoldsNothing: a stored lease that ends further
// away than any ghonce renews to (a shared ledger's row or claim written
// by someone else, "until 2099") is dead: it cannot hold a key for good,
// and a person may settle the entry.
func TestLeaseBeyondMaxLeaseHoldsNothing(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		until time.Time
		live  bool
	}{
		{now.Add(time.Minute), true},
		{now.Add(ledger.MaxLease), true},
		{now.Add(ledger.MaxLease + time.Second), false},
		{time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC), false},
		{now, false},
	} {
		e := &ledger.Entry{Status: ledger.Attempting, Owner: ledger.Owner{ID: "h:1"}, LeaseUntil: tc.until, Fence: 1}
		if got := e.LeaseLive(now); got != tc.live {
			t.Errorf("lease until %v at %v: live %v, want %v", tc.until, now, got, tc.live)
		}
		_, err := ledger.ResolveParams{Key: "k", Status: ledger.Failed, Who: "ops"}.Apply(e, now)
		if (err != nil) != tc.live {
			t.Errorf("resolve --retry of a lease until %v: %v", tc.until, err)
		}
	}
}
