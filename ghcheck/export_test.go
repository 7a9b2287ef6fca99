package ghcheck

import (
	"context"
	"time"
)

// PaceForTest sends n writes through a budget b and returns when each
// left.
func PaceForTest(b Budget, n int) []time.Time {
	bg := newBudget(b)
	var out []time.Time
	for range n {
		release, err := bg.acquire(context.Background(), true)
		if err != nil {
			panic(err)
		}
		out = append(out, bg.cfg.Now())
		release()
	}
	return out
}
