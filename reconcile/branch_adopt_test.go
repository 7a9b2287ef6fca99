package reconcile_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/sqlite"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
)

// A ref has no author: a branch of the requested name at a commit after
// the start is recorded as ours only with evidence that ghonce made it
// (an earlier attempt of this key in the ledger); without it, it is a
// conflict and nothing is recorded done. At exactly the start commit it is
// recorded either way: creating it would have made that very ref.
func TestBranchAtALaterCommitNeedsEvidence(t *testing.T) {
	w := newWorld(t)
	later := w.GitHub.AddCommit(owner, name, "main") // a descendant of main
	action := func(branch string) reconcile.Action {
		return reconcile.Action{Task: "T-adopt", Step: "branch", Repo: repo, Spec: reconcile.Branch{Name: branch, SHA: w.Main}}
	}

	// A stranger's branch one commit ahead of the start: a conflict.
	w.GitHub.SetRef(owner, name, "stranger", later)
	e := w.engine(func(c *reconcile.Config) { c.LedgerNew = false })
	_, err := do(w.ctx, e, action("stranger"))
	var ce *outcome.ConflictError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "nothing shows ghonce made it") {
		t.Fatalf("a stranger's branch at a later commit: %v, want a conflict saying nothing shows ghonce made it", err)
	}
	if sha, _ := w.GitHub.Branch(owner, name, "stranger"); sha != later {
		t.Errorf("the stranger's branch moved to %s", sha)
	}

	// Exactly at the start commit: recorded, whoever made it.
	w.GitHub.SetRef(owner, name, "exact", w.Main)
	if r := mustDo(t, e, action("exact")); r.Outcome != outcome.Found || r.SHA != w.Main {
		t.Errorf("a branch at the start commit: %s at %s, want found at %s", r.Outcome, r.SHA, w.Main)
	}

	// Ours: an earlier attempt recorded the intent, created the branch and
	// died; the agent pushed on top. The rerun adopts it.
	a := action("ours")
	l, err := sqlite.Open(context.Background(), w.Ledger, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	me := reconcile.NewOwner()
	if _, err := l.Claim(w.ctx, ledger.ClaimParams{Key: keyOf(t, a), Task: a.Task, Step: a.Step, Kind: "branch", Repo: repo, Target: "ours",
		Payload: []byte(`{"name":"ours","sha":"` + w.Main + `"}`), Owner: ledger.Owner{ID: "dead", Host: me.Host, PID: 999999}, Lease: time.Hour, Why: "run"}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	w.GitHub.SetRef(owner, name, "ours", later)
	e2 := w.engine(func(c *reconcile.Config) { c.Gone = func(p ledger.Proc) bool { return p.PID == 999999 } })
	if r := mustDo(t, e2, a); r.Outcome != outcome.Found || r.SHA != later {
		t.Errorf("our branch with a push on top, after a crash: %s at %s, want found at %s", r.Outcome, r.SHA, later)
	}
}

// A branch at a commit, beside its example from a ref
// (TestWireFirstCreate), costs one write and two round trips.
func TestWireBranchAtACommit(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.establish()
	w.wireFirstCreate(t, wireCase{name: "branch", spec: reconcile.Branch{Name: "wire-branch", SHA: w.Main}, writes: 1, trips: 2, early: true})
}
