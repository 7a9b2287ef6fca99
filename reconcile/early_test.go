package reconcile_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
)

// TestEarlyLookUp: where a done entry needs proof (the repository ledger),
// the look-up runs beside the claim. Its answer stands for the look of a
// claim that created the entry quickly, and proves a done entry when it
// found the artifact; a claim that took longer than a few seconds looks
// again once it is held (what a look-up made before the claim missed could
// then have been made and pruned meanwhile).
func TestEarlyLookUp(t *testing.T) {
	for _, tc := range []struct {
		name      string
		tick      time.Duration // how far this machine's clock moves at each reading
		listings  int           // issue listings of the first create
		replayLst int           // of its replay
	}{
		{"a quick claim uses it", 0, 1, 1},
		{"a slow claim looks again", 11 * time.Second, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			var mu sync.Mutex
			now := time.Now()
			clock := func() time.Time {
				mu.Lock()
				defer mu.Unlock()
				now = now.Add(tc.tick)
				return now
			}
			e := w.engine(func(c *reconcile.Config) { c.DoneNeedsProof, c.Now = true, clock })
			a := reconcile.Action{Task: "EARLY", Step: "issue-create", Repo: repo, Spec: reconcile.Issue{Title: "t", Body: "b"}}
			listings := func(run func()) int {
				t.Helper()
				w.GitHub.WaitIdle()
				before := len(w.GitHub.Requests())
				run()
				w.GitHub.WaitIdle()
				n := 0
				for _, r := range w.GitHub.Requests()[before:] {
					if r.Method == http.MethodGet && strings.HasSuffix(r.Path, "/issues") {
						n++
					}
				}
				return n
			}
			var first *outcome.Result
			if n := listings(func() { first = mustDo(t, e, a) }); first.Outcome != outcome.Created || n != tc.listings {
				t.Fatalf("first create: %s with %d issue listings, want created with %d", first.Outcome, n, tc.listings)
			}
			var replay *outcome.Result
			if n := listings(func() { replay = mustDo(t, e, a) }); replay.Outcome != outcome.Skipped || replay.Number != first.Number || n != tc.replayLst {
				t.Fatalf("replay: %s #%d with %d issue listings, want skipped #%d with %d", replay.Outcome, replay.Number, n, first.Number, tc.replayLst)
			}
			if got := len(w.GitHub.Issues(owner, name)); got != 1 {
				t.Errorf("%d issues, want 1", got)
			}
		})
	}
}
