package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/guard"
	"github.com/ghonce/ghonce/internal/audit"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
)

// Labels' good and bad shapes, for shape_test.go's
// TestPrepareRefusesEveryShapeGitHubsLayerRefuses: numbers and labels
// empty, blank or too long.
func init() {
	shapesOf["labels"] = func(add func(reconcile.Spec)) {
		for _, n := range []int{1, 0, -3} {
			for _, l := range [][]string{nil, {"ok"}, {""}, {" "}, {strings.Repeat("l", taskkey.MaxLabel+1)}, {"a", "b"}} {
				add(reconcile.Labels{Number: n, Labels: l})
			}
		}
	}
}

func labelsAction(task string, number int, labels ...string) reconcile.Action {
	return reconcile.Action{Task: task, Repo: repo, Spec: reconcile.Labels{Number: number, Labels: labels}}
}

func (w *world) postLabels(n int) func(r *http.Request) bool {
	return fixtures.MatchMethodPath("POST", fmt.Sprintf("/repos/%s/issues/%d/labels", repo, n))
}

// Added once: a replay sends nothing, and a label a person removed after
// the add stays removed; its labeled workflows ran once.
func TestLabelsAddedOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	n := w.issue()
	a := labelsAction("ISSUE-7", n, "bug", "ready")
	if r := mustDo(t, w.engine(), a); r.Outcome != outcome.Created || r.Number != n {
		t.Fatalf("first run: %+v, want created on #%d", r, n)
	}
	w.GitHub.RemoveLabel(owner, name, n, other, "ready")
	reqs := w.spent(func() {
		if r := mustDo(t, w.engine(), a); r.Outcome != outcome.Skipped {
			t.Fatalf("replay: %+v, want skipped", r)
		}
	})
	atMost(t, "replay", reqs, 0)
	if w.GitHub.Labeled(owner, name, n, "bug") != 1 || w.GitHub.Labeled(owner, name, n, "ready") != 1 {
		t.Fatalf("labeled events bug %d, ready %d; want one each", w.GitHub.Labeled(owner, name, n, "bug"), w.GitHub.Labeled(owner, name, n, "ready"))
	}
}

// An add whose answer is lost (GitHub applied it: the state a kill after
// the create leaves, a 504 after commit) is a maybe: exit 3, nothing sent
// again. A person then removes a label (create-pull-request#4370's retry
// applied it twice): the rerun finds our labeled events and adds nothing,
// with the ledger kept or lost.
func TestLabelsMaybeAppliedIsFound(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault fixtures.FaultKind
		lose  bool
	}{
		{"dropped", fixtures.DropAfterCommit, false},
		{"504", fixtures.Status504AfterCommit, false},
		{"dropped, ledger lost", fixtures.DropAfterCommit, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			n := w.issue()
			a := labelsAction("ISSUE-7", n, "ready")
			w.GitHub.Inject(fixtures.Fault{Match: w.postLabels(n), Kind: tc.fault})
			var uc *outcome.UnconfirmedError
			if _, err := do(w.ctx, w.engine(), a); !errors.As(err, &uc) {
				t.Fatalf("lost answer: %v, want *UnconfirmedError (a maybe is never a no)", err)
			}
			w.GitHub.RemoveLabel(owner, name, n, other, "ready")
			if tc.lose {
				if err := os.RemoveAll(w.Ledger); err != nil {
					t.Fatal(err)
				}
			}
			if r := mustDo(t, w.engine(), a); r.Outcome != outcome.Found {
				t.Fatalf("rerun: %+v, want found", r)
			}
			if got := w.GitHub.Labeled(owner, name, n, "ready"); got != 1 {
				t.Fatalf("%d labeled events, want 1", got)
			}
		})
	}
}

// A 502 before GitHub applied anything stays a maybe until GitHub answers;
// the rerun reads, finds no add of ours (a stranger's add and removal of
// the same label is not ours) and adds once.
func TestLabelsNotAppliedIsAddedOnRerun(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	n := w.issue()
	a := labelsAction("ISSUE-7", n, "ready")
	w.GitHub.Inject(fixtures.Fault{Match: w.postLabels(n), Kind: fixtures.Status502BeforeCommit})
	var uc *outcome.UnconfirmedError
	if _, err := do(w.ctx, w.engine(), a); !errors.As(err, &uc) {
		t.Fatalf("502: %v, want *UnconfirmedError", err)
	}
	w.GitHub.SeedLabel(owner, name, n, other, "ready")
	w.GitHub.RemoveLabel(owner, name, n, other, "ready")
	if r := mustDo(t, w.engine(), a); r.Outcome != outcome.Created {
		t.Fatalf("rerun: %+v, want created", r)
	}
	if got := w.GitHub.Labeled(owner, name, n, "ready"); got != 2 {
		t.Fatalf("%d labeled events, want the stranger's and ours", got)
	}
}

// A first add on an established ledger: one read of the issue beside
// nothing else, then the add; a replay sends nothing.
func TestRequestsFirstLabelsAndReplay(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.establish()
	n := w.issue()
	a := labelsAction("ISSUE-7", n, "ready")
	e, _ := w.budgetEngine()
	reqs := w.spent(func() {
		if r, err := do(w.ctx, e, a); err != nil || r.Outcome != outcome.Created {
			t.Fatalf("first add: %+v, %v", r, err)
		}
	})
	atMost(t, "first labels add on an established ledger", reqs, 2)
	reqs = w.spent(func() {
		e2, _ := w.budgetEngine()
		if r, err := do(w.ctx, e2, a); err != nil || r.Outcome != outcome.Skipped {
			t.Fatalf("replay: %+v, %v", r, err)
		}
	})
	atMost(t, "replay", reqs, 0)
}

// Bad input is refused before anything is recorded, by its JSON name.
func TestLabelsValidate(t *testing.T) {
	for _, s := range []reconcile.Labels{{Number: 7}, {Number: 0, Labels: []string{"bug"}}, {Number: 7, Labels: []string{""}}} {
		if err := s.Validate(""); err == nil {
			t.Errorf("%+v: %v, want an error", s, err)
		}
	}
}

// The labels are the payload, not the target: another set under a done key
// is reported (payload_changed), never added; another step adds others.
func TestLabelsChangedSetIsReportedNotAdded(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	n := w.issue()
	mustDo(t, w.engine(), labelsAction("ISSUE-7", n, "ready"))
	writes := w.writes()
	r := mustDo(t, w.engine(), labelsAction("ISSUE-7", n, "ready", "p1"))
	if r.Outcome != outcome.Skipped || !r.PayloadChanged || w.writes() != writes {
		t.Fatalf("another set: %+v after %d writes, want skipped with payload_changed and no write", r, w.writes()-writes)
	}
	other := labelsAction("ISSUE-7", n, "p1")
	other.Step = "triage"
	if r := mustDo(t, w.engine(), other); r.Outcome != outcome.Created {
		t.Fatalf("another step: %+v, want created", r)
	}
}

// go-github's AddLabelsToIssue (a bare JSON array) through guard's
// transport: an add whose answer was lost, and a label a person removed
// meanwhile, is found on the rerun, not applied again; go-github decodes
// the labels either way, and a third run is answered by the ledger.
func TestLabelsThroughTheTransport(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	n := w.issue()
	w.GitHub.Inject(fixtures.Fault{Kind: fixtures.DropAfterCommit, Match: w.postLabels(n)})
	add := func() (string, []string, error) {
		ctx := guard.WithStep(context.Background(), "ISSUE-42", "")
		ls, resp, err := w.goGitHub().Issues.AddLabelsToIssue(ctx, owner, name, n, []string{"ready"})
		var names []string
		for _, l := range ls {
			names = append(names, l.GetName())
		}
		if resp == nil {
			return "", names, err
		}
		return resp.Header.Get("X-Ghonce-Outcome"), names, err
	}
	if _, _, err := add(); err == nil {
		t.Fatal("first attempt: want the lost answer as an error")
	}
	w.GitHub.RemoveLabel(owner, name, n, other, "ready")
	w.GitHub.SeedLabel(owner, name, n, other, "triage")
	said, names, err := add()
	if err != nil || said != "found" || len(names) != 1 || names[0] != "triage" {
		t.Fatalf("rerun: %s %q, %v; want found, with the labels the issue has (triage)", said, names, err)
	}
	posts := 0
	for _, r := range w.GitHub.Requests() {
		if r.Method == http.MethodPost {
			posts++
		}
	}
	if said, _, err = add(); err != nil || said != "skipped" {
		t.Fatalf("third run: %s, %v; want skipped", said, err)
	}
	if got := w.GitHub.Labeled(owner, name, n, "ready"); got != 1 || posts != 1 {
		t.Fatalf("%d labeled events after %d POSTs, want 1 and 1", got, posts)
	}
}

// What `ghonce audit` makes of a label a naive retry applied again after
// a person removed it (the example added twice changes nothing the second
// time, as TestEveryKindsExampleMadeTwice in internal/audit finds): a
// labels group, asked for by --kind labels, the first add kept and the
// second reported, never open: a workflow that ran cannot be undone. A
// person's own re-adds are not ours.
func TestAuditFindsALabelAppliedAgain(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	n := w.GitHub.SeedIssue(owner, name, other, fixtures.SeedIssue{Title: "Crash on start"})
	for range 2 {
		w.GitHub.SeedLabel(owner, name, n, login, "ready")
		w.GitHub.RemoveLabel(owner, name, n, other, "ready")
		w.GitHub.SeedLabel(owner, name, n, other, "bug")
		w.GitHub.RemoveLabel(owner, name, n, other, "bug")
	}
	r := ghcheck.Repo{Owner: owner, Name: name}
	rep, err := audit.Find(w.ctx, w.client(token), audit.Options{Repo: r})
	if err != nil || len(rep.Groups) != 0 {
		t.Fatalf("default kinds: %+v, %v; want no group (labels are asked for)", rep, err)
	}
	rep, err = audit.Find(w.ctx, w.client(token), audit.Options{Repo: r, Kinds: []string{"labels"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Groups) != 1 || rep.Groups[0].Keep.Number != n || len(rep.Groups[0].Duplicates) != 1 || !strings.Contains(rep.Groups[0].Detail, `"ready"`) {
		t.Fatalf("groups %+v, want one for label ready on #%d", rep.Groups, n)
	}
	if d := rep.Groups[0].Duplicates[0]; d.Open || d.Differs == "" || rep.OpenDuplicates != 0 {
		t.Errorf("duplicate %+v (open duplicates %d): want reported, not open, never acted on", d, rep.OpenDuplicates)
	}
}
