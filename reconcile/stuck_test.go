package reconcile_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/sqlite"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
)

// Nothing stuck: `branch create` of a branch that exists, from a start
// commit the repository lacks, is GitHub's answer ("no such commit"), not
// a maybe: the entry ends failed, nothing is created, and the error says
// what to fix.
func TestBranchFromAMissingCommitFailsWithWords(t *testing.T) {
	w := newWorld(t)
	w.Push("feature")
	missing := strings.Repeat("ab", 20)
	a := reconcile.Action{Task: "T-1", Step: "branch", Repo: repo, Spec: reconcile.Branch{Name: "feature", SHA: missing}}
	e := w.engine()
	_, err := do(w.ctx, e, a)
	var uc *outcome.UnconfirmedError
	if err == nil || errors.As(err, &uc) || !strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), "push that commit") {
		t.Fatalf("err = %v; want a refusal saying the start commit does not exist and what to do", err)
	}
	l, err := sqlite.Open(w.ctx, w.Ledger, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ent, gerr := l.Get(w.ctx, keyOf(t, a))
	if gerr != nil || ent.Status != ledger.Failed {
		t.Fatalf("entry %+v, %v; want failed, not left attempting", ent, gerr)
	}
}

// A library caller's Reconcile settles GitHub kinds only: an entry of a
// guarded command (package offgithub's to settle) left attempting by a
// dead process is neither claimed nor written, so offgithub's Reconcile,
// or a rerun of the command, finds it as it was left.
func TestReconcileLeavesTheKindsOfAnotherEngineAlone(t *testing.T) {
	w := newWorld(t)
	l := w.OpenLedger()
	dead := ledger.Owner{ID: "dead-runner"}
	if _, err := l.Claim(w.ctx, ledger.ClaimParams{Key: "exec-key", Task: "T-1", Step: "notify", Kind: "exec", Payload: []byte(`{"argv":["true"]}`), PayloadHash: "h", Owner: dead, Lease: time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	before, err := l.Get(w.ctx, "exec-key")
	if err != nil {
		t.Fatal(err)
	}
	out, err := w.engine().Reconcile(w.ctx, reconcile.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range out {
		if s.Key == "exec-key" {
			t.Errorf("settlement %+v; a GitHub engine must not report, claim or write a guarded command's entry", s)
		}
	}
	after, err := l.Get(w.ctx, "exec-key")
	if err != nil {
		t.Fatal(err)
	}
	if after.Fence != before.Fence || after.LastError != before.LastError || after.Status != ledger.Attempting {
		t.Fatalf("entry went from %+v to %+v; want it untouched", before, after)
	}
}
