package reconcile_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/audit"
	"github.com/ghonce/ghonce/internal/fakegithub"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
)

// A review's good and bad shapes, for shape_test.go's
// TestPrepareRefusesEveryShapeGitHubsLayerRefuses: events, inline
// comments, commits, numbers and a body too long.
func init() {
	shapesOf["review"] = func(add func(reconcile.Spec)) {
		const sha = "0123456789abcdef0123456789abcdef01234567"
		numbers := []int{1, 0, -3}
		inline := [][]ghcheck.ReviewComment{nil, {{Path: "a.go", Line: 2, Body: "x"}}, {{Path: "a.go", Line: 2, StartLine: 3, Body: "x"}},
			{{Path: "a.go", Line: 0, Body: "x"}}, {{Path: "../a.go", Line: 1, Body: "x"}}, {{Path: "a.go", Line: 1, Side: "up", Body: "x"}}}
		for _, n := range numbers {
			for _, ev := range []string{"COMMENT", "", "LGTM"} {
				for _, cs := range inline {
					for _, s := range []string{"", sha, "abc"} {
						add(reconcile.Review{Number: n, Event: ev, Body: "b", CommitID: s, Comments: cs})
					}
				}
			}
			add(reconcile.Review{Number: n, Event: "APPROVE", Body: strings.Repeat("x", taskkey.MaxBody)})
		}
	}
}

// reviewWorld is a world with a pull request by someone else, to review.
func reviewWorld(t *testing.T) (*world, int) {
	t.Helper()
	w := newWorld(t)
	w.Push("feat")
	return w, w.GitHub.SeedPR(owner, name, "someone", fixtures.SeedPR{Title: "Feature", Head: "feat"})
}

func reviewAction(n int, event, body string) reconcile.Action {
	return reconcile.Action{Task: "REVIEW-1", Repo: repo, Spec: reconcile.Review{Number: n, Event: event, Body: body,
		Comments: []ghcheck.ReviewComment{{Path: "main.go", Line: 4, Body: "this can be shorter"}}}}
}

func (w *world) reviews(n int) []fakegithub.Review { return w.GitHub.Reviews(owner, name, n) }

func postReviews(n int, kind fixtures.FaultKind) fixtures.Fault {
	return fixtures.Fault{Match: fixtures.MatchMethodPath("POST", fmt.Sprintf("/repos/%s/pulls/%d/reviews", repo, n)), Kind: kind}
}

// Created once, inline comments in the same request; a replay sends
// nothing to GitHub.
func TestReviewCreatedOnceAndReplayedFree(t *testing.T) {
	w, n := reviewWorld(t)
	r := mustDo(t, w.engine(), reviewAction(n, "COMMENT", "Two notes."))
	if r.Outcome != outcome.Created || r.URL == "" {
		t.Fatalf("first run: %+v, want created", r)
	}
	if w.writes() != 1 {
		t.Fatalf("%d writes, want the one POST carrying the review and its comment", w.writes())
	}
	before := len(w.GitHub.Requests())
	if again := mustDo(t, w.engine(), reviewAction(n, "COMMENT", "Two notes.")); again.Outcome != outcome.Skipped {
		t.Fatalf("replay: %+v, want skipped", again)
	}
	if got := len(w.GitHub.Requests()) - before; got != 0 {
		t.Fatalf("replay sent %d requests, want 0", got)
	}
	if rvs := w.reviews(n); len(rvs) != 1 || rvs[0].Comments != 1 || rvs[0].State != "COMMENTED" {
		t.Fatalf("reviews %+v, want one COMMENTED with its inline comment", rvs)
	}
}

// Killed after GitHub stored the review (its answer lost): the rerun finds
// it, with the ledger kept or lost, and never makes a second.
func TestReviewAnswerLostIsFound(t *testing.T) {
	for _, lose := range []string{"keep ledger", "delete ledger"} {
		t.Run(lose, func(t *testing.T) {
			w, n := reviewWorld(t)
			w.GitHub.Inject(postReviews(n, fixtures.DropAfterCommit))
			_, err := do(w.ctx, w.engine(), reviewAction(n, "APPROVE", "Ship it."))
			var uc *outcome.UnconfirmedError
			if !errors.As(err, &uc) {
				t.Fatalf("lost answer: %v, want *UnconfirmedError", err)
			}
			if lose == "delete ledger" {
				if err := os.RemoveAll(w.Ledger); err != nil {
					t.Fatal(err)
				}
			}
			r := mustDo(t, w.engine(), reviewAction(n, "APPROVE", "Ship it."))
			if rvs := w.reviews(n); r.Outcome != outcome.Found || len(rvs) != 1 || rvs[0].State != "APPROVED" {
				t.Fatalf("rerun %s, reviews %+v: want the one approval, found", r.Outcome, rvs)
			}
		})
	}
}

// A maybe (504 after the write) stays unconfirmed while GitHub cannot be
// read, and is settled by the first run that reads it.
func TestReviewMaybeStaysUnconfirmedUntilGitHubAnswers(t *testing.T) {
	w, n := reviewWorld(t)
	w.GitHub.Inject(postReviews(n, fixtures.Status504AfterCommit))
	var uc *outcome.UnconfirmedError
	if _, err := do(w.ctx, w.engine(), reviewAction(n, "COMMENT", "Hm.")); !errors.As(err, &uc) {
		t.Fatalf("504: %v, want *UnconfirmedError", err)
	}
	w.GitHub.Inject(fixtures.Fault{Match: fixtures.MatchMethodPath("GET", fmt.Sprintf("/repos/%s/pulls/%d/reviews", repo, n)), Kind: fixtures.Status502BeforeCommit, Times: 10})
	if _, err := do(w.ctx, w.engine(), reviewAction(n, "COMMENT", "Hm.")); err == nil {
		t.Fatal("reads failing: the rerun answered, want it still unconfirmed")
	}
	w.GitHub.ClearFaults()
	if r := mustDo(t, w.engine(), reviewAction(n, "COMMENT", "Hm.")); r.Outcome != outcome.Found || len(w.reviews(n)) != 1 {
		t.Fatalf("GitHub answering: %s, %d reviews, want the one found", r.Outcome, len(w.reviews(n)))
	}
}

// A look-alike by another identity (the key's marker copied) is not ours:
// ours is made.
func TestReviewLookAlikeByAnotherIdentityIsIgnored(t *testing.T) {
	w, n := reviewWorld(t)
	a := reviewAction(n, "COMMENT", "Notes.")
	w.GitHub.SeedReview(owner, name, n, other, "COMMENTED", taskkey.WithMarker(keyOf(t, a), "Notes."))
	if r := mustDo(t, w.engine(), a); r.Outcome != outcome.Created {
		t.Fatalf("%+v, want created beside the stranger's", r)
	}
	if rvs := w.reviews(n); len(rvs) != 2 || rvs[1].Author != login {
		t.Fatalf("reviews %+v, want the stranger's and ours", rvs)
	}
}

// A pending review ours for the key (a pending flow a killed agent left) is
// submitted by the run, never doubled; a rerun finds the one review.
func TestReviewSettlesPendingReviewACrashLeft(t *testing.T) {
	w, n := reviewWorld(t)
	a := reviewAction(n, "REQUEST_CHANGES", "Please split this.")
	w.GitHub.SeedReview(owner, name, n, login, "PENDING", taskkey.WithMarker(keyOf(t, a), "draft"))
	r := mustDo(t, w.engine(), a)
	rvs := w.reviews(n)
	if r.Outcome != outcome.Created || len(rvs) != 1 || rvs[0].State != "CHANGES_REQUESTED" || !strings.Contains(rvs[0].Body, "Please split this.") {
		t.Fatalf("%s, reviews %+v: want the pending review submitted, alone", r.Outcome, rvs)
	}
	if r := mustDo(t, w.engine(), a); r.Outcome != outcome.Skipped || len(w.reviews(n)) != 1 {
		t.Fatalf("rerun %s: want skipped, one review", r.Outcome)
	}
}

// An approval of one's own pull request is refused by GitHub: the run says
// so, nothing was made, and the entry is not left unconfirmed.
func TestReviewOfOwnPullRequestIsRefused(t *testing.T) {
	w := newWorld(t)
	w.Push("mine")
	n := w.GitHub.SeedPR(owner, name, login, fixtures.SeedPR{Title: "Mine", Head: "mine"})
	_, err := do(w.ctx, w.engine(), reviewAction(n, "APPROVE", "LGTM"))
	var uc *outcome.UnconfirmedError
	if err == nil || errors.As(err, &uc) || !strings.Contains(err.Error(), "their own pull request") {
		t.Fatalf("%v, want a refusal that says why", err)
	}
	if len(w.reviews(n)) != 0 {
		t.Fatal("a review was made")
	}
}

// Validate refuses, before anything is recorded, what GitHub would.
func TestReviewValidate(t *testing.T) {
	for _, tc := range []struct {
		r     reconcile.Review
		field string
	}{
		{reconcile.Review{Number: 1, Event: "LGTM", Body: "x"}, "event"},
		{reconcile.Review{Number: 1, Event: "REQUEST_CHANGES", Body: " \u200b"}, "body"},
		{reconcile.Review{Number: 1, Event: "COMMENT"}, "body"},
	} {
		_, err := reconcile.Prepare(reconcile.Action{Task: "T", Repo: repo, Spec: tc.r})
		var ie *reconcile.InvalidError
		if !errors.As(err, &ie) || ie.Field != tc.field {
			t.Errorf("%+v: %v, want field %s refused", tc.r, err, tc.field)
		}
	}
	for _, ok := range []reconcile.Review{{Number: 1, Event: "APPROVE"}, {Number: 1}, {Number: 1, Event: "COMMENT", Comments: []ghcheck.ReviewComment{{Path: "a", Line: 1, Body: "x"}}}} {
		if _, err := reconcile.Prepare(reconcile.Action{Task: "T", Repo: repo, Spec: ok}); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
}

// Issue 39's cost: a first review on an established ledger reads the
// reviews once and sends one POST (its inline comments in it); a replay
// sends nothing.
func TestRequestsFirstReviewAndReplay(t *testing.T) {
	w, n := reviewWorld(t)
	w.establish()
	e, _ := w.budgetEngine()
	a := reviewAction(n, "COMMENT", "Two notes.")
	reqs := w.spent(func() {
		if r, err := do(w.ctx, e, a); err != nil || r.Outcome != outcome.Created {
			t.Fatalf("first review: %+v, %v", r, err)
		}
	})
	atMost(t, "first review on an established ledger", reqs, 2)
	if w.writes() != 2 { // the setup's comment and the review
		t.Fatalf("%d writes, want 2", w.writes())
	}
	reqs = w.spent(func() {
		e2, _ := w.budgetEngine()
		if r, err := do(w.ctx, e2, a); err != nil || r.Outcome != outcome.Skipped {
			t.Fatalf("replay: %+v, %v", r, err)
		}
	})
	atMost(t, "replay", reqs, 0)
}

// Racers on one ledger: one review, whichever worker makes it.
func TestConcurrentReviewersOnOneLedgerReviewOnce(t *testing.T) {
	w, n := reviewWorld(t)
	const workers = 6
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for i := range workers {
		e := w.engine(func(c *reconcile.Config) { c.Owner = reconcile.NewOwner(); c.Wait = time.Minute })
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = do(w.ctx, e, reviewAction(n, "COMMENT", "Two notes."))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("worker %d: %v", i, err)
		}
	}
	if rvs := w.reviews(n); len(rvs) != 1 {
		t.Fatalf("%d reviews, want 1", len(rvs))
	}
}

// The pending flow (github-mcp-server's create without an event, then
// submit_pending): the submit is the same key's act under --on-change
// update, and submits the pending review. A killed agent that retries the
// submit after GitHub stored it, and a replay, leave one review.
func TestReviewPendingFlowEndsInOneSubmittedReview(t *testing.T) {
	w, n := reviewWorld(t)
	draft := reviewAction(n, "", "")
	if r := mustDo(t, w.engine(), draft); r.Outcome != outcome.Created || w.reviews(n)[0].State != "PENDING" {
		t.Fatalf("pending create: %+v, reviews %+v", r, w.reviews(n))
	}
	submit := reviewAction(n, "APPROVE", "Good to go.")
	submit.OnChange = reconcile.OnChangeUpdate
	w.GitHub.Inject(fixtures.Fault{Match: fixtures.MatchMethodPath("POST", fmt.Sprintf("/repos/%s/pulls/%d/reviews/%d/events", repo, n, w.reviews(n)[0].ID)),
		Kind: fixtures.DropAfterCommit})
	if _, err := do(w.ctx, w.engine(), submit); err == nil {
		t.Fatal("the submit's answer was lost: want an error")
	}
	r := mustDo(t, w.engine(), submit) // the killed agent's retry
	rvs := w.reviews(n)
	if len(rvs) != 1 || rvs[0].State != "APPROVED" || rvs[0].Comments != 1 || !strings.Contains(rvs[0].Body, "Good to go.") || !r.Updated {
		t.Fatalf("retry %+v, reviews %+v: want the one review, approved, its inline comment kept", r, rvs)
	}
	before := len(w.GitHub.Requests())
	if r := mustDo(t, w.engine(), submit); r.Outcome != outcome.Skipped || len(w.GitHub.Requests()) != before {
		t.Fatalf("replay: %+v, want skipped with no request", r)
	}
}

// `ghonce pr review` makes the review with its inline comments from a
// JSON file in one request, once; without an event it is a usage error.
func TestPRReviewVerb(t *testing.T) {
	t.Parallel()
	w, n := reviewWorld(t)
	file := filepath.Join(t.TempDir(), "comments.json")
	if err := os.WriteFile(file, []byte(`[{"path": "main.go", "line": 3, "body": "shorter?"}, {"path": "a.go", "line": 9, "start_line": 7, "side": "RIGHT", "body": "why?"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	pr := strconv.Itoa(n)
	args := []string{"pr", "review", pr, "--task", "R1", "--repo", repo, "--request-changes", "--body", "Two notes.", "--comments", file, "--json"}
	for i, want := range []string{`"outcome":"created"`, `"outcome":"skipped"`} {
		if code, stdout, stderr := w.ghonce(args...); code != failure.ExitOK || !strings.Contains(stdout, want) {
			t.Fatalf("run %d: exit %d, stdout %s, stderr %s; want %s", i, code, stdout, stderr, want)
		}
	}
	if rvs := w.reviews(n); len(rvs) != 1 || rvs[0].State != "CHANGES_REQUESTED" || rvs[0].Comments != 2 {
		t.Fatalf("reviews %+v, want one with its 2 inline comments", rvs)
	}
	if code, _, stderr := w.ghonce("pr", "review", pr, "--task", "R2", "--repo", repo, "--body", "x"); code != failure.ExitUsage || !strings.Contains(stderr, "--approve") {
		t.Fatalf("no event: exit %d, stderr %s; want a usage error naming the events", code, stderr)
	}
	if code, _, stderr := w.ghonce("pr", "review", pr, "--task", "R3", "--repo", repo, "--comment", "--body", "x", "--comments", file+".missing"); code != failure.ExitUsage {
		t.Fatalf("a missing comments file: exit %d, stderr %s; want usage", code, stderr)
	}
}

// github-mcp-server's pending flow through ghonce mcp: create without an
// event makes a pending review; submit_pending, killed after GitHub stored
// it and retried by a restarted agent, submits it. One review, submitted;
// create with an event on another step is one more, once.
func TestPullRequestReviewWritePendingFlow(t *testing.T) {
	t.Parallel()
	w, n := reviewWorld(t)
	ok := func(args map[string]any) {
		t.Helper()
		if _, isErr, text := w.mcpCall("pull_request_review_write", args); isErr {
			t.Fatalf("%v: %s", args, text)
		}
	}
	ok(map[string]any{"method": "create", "pullNumber": n, "body": "Looking."})
	if rvs := w.reviews(n); len(rvs) != 1 || rvs[0].State != "PENDING" {
		t.Fatalf("after create: %+v, want one pending review", rvs)
	}
	submit := map[string]any{"method": "submit_pending", "pullNumber": n, "event": "APPROVE", "body": "Ship it."}
	w.GitHub.Inject(fixtures.Fault{Match: fixtures.MatchMethodPath("POST", fmt.Sprintf("/repos/%s/pulls/%d/reviews/%d/events", repo, n, w.reviews(n)[0].ID)),
		Kind: fixtures.DropAfterCommit})
	if _, isErr, text := w.mcpCall("pull_request_review_write", submit); !isErr {
		t.Fatalf("submit_pending, its answer lost: %s; want a tool error", text)
	}
	ok(submit) // the agent, restarted
	ok(submit)
	if rvs := w.reviews(n); len(rvs) != 1 || rvs[0].State != "APPROVED" {
		t.Fatalf("after submit_pending: %+v, want the one review, approved", rvs)
	}
	for range 2 {
		ok(map[string]any{"method": "create", "pullNumber": n, "event": "COMMENT", "body": "One more note.", "step": "note"})
	}
	if rvs := w.reviews(n); len(rvs) != 2 {
		t.Fatalf("%d reviews, want 2", len(rvs))
	}
}

// What `ghonce audit` makes of our review posted twice on one pull request
// (a naive retry; the example made twice, and what --apply does with it,
// are TestEveryKindsExampleMadeTwice's in internal/audit): one group, the
// older kept, the copy with a trailing newline its duplicate; the same
// text approving, on another pull request, or by a person, is none of it.
func TestAuditGroupsAReviewPostedTwice(t *testing.T) {
	t.Parallel()
	w, n := reviewWorld(t)
	w.Push("feat-2")
	n2 := w.GitHub.SeedPR(owner, name, "someone", fixtures.SeedPR{Title: "Another", Head: "feat-2"})
	first := w.GitHub.SeedReview(owner, name, n, login, "COMMENTED", "Two nits inline.")
	again := w.GitHub.SeedReview(owner, name, n, login, "COMMENTED", "Two nits inline.\n")
	w.GitHub.SeedReview(owner, name, n, login, "APPROVED", "Two nits inline.")
	w.GitHub.SeedReview(owner, name, n2, login, "COMMENTED", "Two nits inline.")
	w.GitHub.SeedReview(owner, name, n, other, "COMMENTED", "Two nits inline.")
	rep, err := audit.Find(w.ctx, w.client(token), audit.Options{Repo: ghcheck.Repo{Owner: owner, Name: name}, Kinds: []string{"review"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Listed["reviews"] != 5 || len(rep.Groups) != 1 {
		t.Fatalf("listed %+v, groups %+v: want 5 reviews and one group", rep.Listed, rep.Groups)
	}
	if g := rep.Groups[0]; g.Kind != "review" || g.Keep.ID != first || len(g.Duplicates) != 1 || g.Duplicates[0].ID != again || g.Keep.Thread != n {
		t.Fatalf("group %+v, want review %d on #%d kept and %d its duplicate", g, first, n, again)
	}
}

// Every field go-github's PullRequestReviewRequest sends is the review's or
// one its Face refuses.
func TestReviewGoGithubsFieldsAreCarriedOrRefused(t *testing.T) {
	goGithubFieldsCarriedOrRefused(t, "review", github.PullRequestReviewRequest{})
}
