package reconcile_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/sqlite"
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
	var uc *reconcile.UnconfirmedError
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
