package reconcile_test

import (
	"strings"
	"testing"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/audit"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
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

// What `ghonce audit` makes of two pull requests with one key whose heads
// sit at one commit, and a person's commit then pushed on one: it is the
// kept one (a person's work is never the duplicate), and the other,
// another change now, is reported as differing.
func TestAuditKeepsThePullRequestAPersonCommittedTo(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	feat := w.GitHub.AddCommitBy(owner, name, "main", login)
	k := keyOf(t, prAction("naive-run", "a", "Cache", "x"))
	for _, b := range []string{"a", "b"} {
		w.GitHub.SetRef(owner, name, b, feat)
	}
	w.GitHub.SeedPR(owner, name, login, fixtures.SeedPR{Title: "Cache", Body: "x", Head: "a", Labels: []string{taskkey.Label(k)}})
	theirs := w.GitHub.SeedPR(owner, name, login, fixtures.SeedPR{Title: "Cache", Body: "x", Head: "b", Labels: []string{taskkey.Label(k)}})
	w.GitHub.SetRef(owner, name, "b", w.GitHub.AddCommitBy(owner, name, "b", other))
	rep, err := audit.Find(w.ctx, w.client(token), audit.Options{Repo: ghcheck.Repo{Owner: owner, Name: name}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 1 || rep.Groups[0].Keep.Number != theirs || !strings.Contains(rep.Groups[0].Keep.Human, "commits by "+other) {
		t.Fatalf("groups %+v: want #%d kept for %s's commits", rep.Groups, theirs, other)
	}
	if d := rep.Groups[0].Duplicates[0]; d.Differs == "" {
		t.Errorf("#%d, another change, is not reported as differing", d.Number)
	}
}
