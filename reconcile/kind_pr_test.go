package reconcile_test

import (
	"testing"

	"github.com/ghonce/ghonce/reconcile"
)

// A pull request's shapes the wire budget holds beside its example
// (TestWireFirstCreate): with the ledger lost, the rerun that names
// another head finds the first by its key's label; with its labels
// written before the answer, a third round trip precedes it.
func TestWirePRShapes(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.establish()
	for _, b := range []string{"wire-head", "wire-head-2", "wire-head-3"} {
		w.Push(b)
	}
	pr := func(head string) reconcile.PR {
		return reconcile.PR{Base: "main", Head: head, Title: "t", Body: "b", Labels: []string{"agent"}}
	}
	w.wireFirstCreate(t, wireCase{name: "pr, rerun naming another head", spec: pr("wire-head"), lost: pr("wire-head-2"), writes: 2, trips: 2, early: true})
	w.wireFirstCreate(t, wireCase{name: "pr, labels before the answer", spec: pr("wire-head-3"), writes: 2, trips: 3})
}
