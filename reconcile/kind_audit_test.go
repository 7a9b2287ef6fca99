package reconcile_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
)

// The kinds `ghonce audit --apply` settles with: a close, a comment
// deleted, a stray branch deleted. Each is done once: the second Do is
// skipped, and a lost ledger finds the state reached and writes nothing.
func TestSettlingKindsHappenOnce(t *testing.T) {
	w := newWorld(t)
	issue := w.GitHub.SeedIssue(owner, name, login, fixtures.SeedIssue{Title: "dup", Body: "x"})
	w.Push("agent/pr-head")
	pr := w.GitHub.SeedPR(owner, name, login, fixtures.SeedPR{Title: "dup", Head: "agent/pr-head"})
	comment := w.GitHub.SeedComment(owner, name, issue, login, "twice")
	stray := w.Push("agent/stray")
	acts := []reconcile.Action{
		{Task: "audit", Step: "s", Repo: repo, Spec: reconcile.Close{Number: issue, Reason: "duplicate"}},
		{Task: "audit", Step: "s", Repo: repo, Spec: reconcile.Close{Number: pr, PR: true}},
		{Task: "audit", Step: "s", Repo: repo, Spec: reconcile.DeleteComment{ID: comment, Number: issue}},
		{Task: "audit", Step: "s", Repo: repo, Spec: reconcile.DeleteBranch{Name: "agent/stray", SHA: stray}},
	}
	e := w.engine()
	for _, a := range acts {
		if r := mustDo(t, e, a); r.Outcome != outcome.Created {
			t.Fatalf("%s: outcome %s, want created", a.Spec.Kind(), r.Outcome)
		}
	}
	for _, is := range w.GitHub.Issues(owner, name) {
		if is.Number == issue && is.State != "closed" {
			t.Fatalf("issue #%d is %s", issue, is.State)
		}
	}
	if got := w.GitHub.Comments(owner, name, issue); len(got) != 0 {
		t.Fatalf("comments left: %+v", got)
	}
	if _, ok := w.GitHub.Branch(owner, name, "agent/stray"); ok {
		t.Fatal("stray branch still there")
	}
	writes := w.writes()
	for _, a := range acts {
		if r := mustDo(t, e, a); r.Outcome != outcome.Skipped {
			t.Fatalf("%s again: outcome %s, want skipped", a.Spec.Kind(), r.Outcome)
		}
	}
	w.Ledger += ".lost" // a runner whose ledger was lost: a new, empty one
	e = w.engine()
	for _, a := range acts {
		if r := mustDo(t, e, a); r.Outcome != outcome.Found {
			t.Fatalf("%s with the ledger lost: outcome %s, want found", a.Spec.Kind(), r.Outcome)
		}
	}
	if w.writes() != writes {
		t.Fatalf("%d writes after the first round, want none", w.writes()-writes)
	}
}

// A stray branch that moved or gained a pull request since the audit, and
// an issue that no longer exists, are conflicts: nothing is written.
func TestSettlingKindsRefuseWhatChanged(t *testing.T) {
	w := newWorld(t)
	old := w.Push("agent/moved")
	w.GitHub.SetRef(owner, name, "agent/moved", w.GitHub.AddCommit(owner, name, "main"))
	used := w.Push("agent/used")
	w.GitHub.SeedPR(owner, name, other, fixtures.SeedPR{Title: "theirs", Head: "agent/used"})
	e := w.engine()
	for _, a := range []reconcile.Action{
		{Task: "audit", Step: "s", Repo: repo, Spec: reconcile.DeleteBranch{Name: "agent/moved", SHA: old}},
		{Task: "audit", Step: "s", Repo: repo, Spec: reconcile.DeleteBranch{Name: "agent/used", SHA: used}},
		{Task: "audit", Step: "s", Repo: repo, Spec: reconcile.Close{Number: 999}},
	} {
		_, err := do(context.Background(), e, a)
		var ce *outcome.ConflictError
		if !errors.As(err, &ce) {
			t.Errorf("%s %s: err %v, want a conflict", a.Spec.Kind(), a.Spec.Target(), err)
		}
	}
	if w.writes() != 0 {
		t.Fatalf("%d writes, want none", w.writes())
	}
	for _, b := range []string{"agent/moved", "agent/used"} {
		if _, ok := w.GitHub.Branch(owner, name, b); !ok {
			t.Errorf("branch %s deleted", b)
		}
	}
}

// Adopt records a key as done once; a later run of the same description
// replays it without looking at GitHub.
func TestAdoptRecordsTheKeyDone(t *testing.T) {
	w := newWorld(t)
	a := reconcile.Action{Task: "T-9", Step: "issue-create", Repo: repo, Spec: reconcile.Issue{Title: "Tracked", Body: "Body."}}
	key := keyOf(t, a)
	e := w.engine()
	art := effect.Artifact{Number: 7, URL: "https://example.invalid/7"}
	for i, want := range []bool{true, false} {
		got, err := e.Adopt(context.Background(), reconcile.AdoptParams{Key: key, Repo: repo, Spec: a.Spec, Artifact: art})
		if err != nil || got != want {
			t.Fatalf("Adopt #%d: %v, %v; want %v", i+1, got, err, want)
		}
	}
	r := mustDo(t, e, a)
	if r.Outcome != outcome.Skipped || r.Number != 7 || r.PayloadChanged {
		t.Fatalf("the task's run after Adopt: %+v, want skipped #7, unchanged", r)
	}
	if len(w.GitHub.Requests()) != 0 {
		t.Fatalf("%d requests to GitHub, want none", len(w.GitHub.Requests()))
	}
}
