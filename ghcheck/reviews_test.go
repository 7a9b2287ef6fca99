package ghcheck_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/taskkey"
)

// reviewWorld is a fake with a pull request by someone else and one by
// our identity.
func reviewWorld(t *testing.T) (s *fixtures.Server, c *ghcheck.Client, theirs, ours int) {
	t.Helper()
	s = budgetFake(t)
	s.SetRef(owner, name, "fix", s.AddCommit(owner, name, "main"))
	s.SetRef(owner, name, "mine", s.AddCommit(owner, name, "main"))
	theirs = s.SeedPR(owner, name, "someone", fixtures.SeedPR{Title: "Fix", Head: "fix"})
	ours = s.SeedPR(owner, name, bLogin, fixtures.SeedPR{Title: "Mine", Head: "mine"})
	return s, listingClient(t, s), theirs, ours
}

func reviewKey(n int) string {
	return taskkey.Key(taskkey.Identity{Task: "T-1", Step: "pr-review", Kind: "review", Repo: repo, Target: strconv.Itoa(n)})
}

func posts(s *fixtures.Server) int { return len(writesTo(s)) }

func createErrClass(t *testing.T, err error) effect.Class {
	t.Helper()
	var ce *effect.CreateError
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is not a *CreateError", err)
	}
	return ce.Class
}

// One request makes the review with its inline comments; the look-up finds
// it by our marker, and ignores the same marker on a stranger's review.
func TestCreateReviewOnceWithInlineComments(t *testing.T) {
	s, c, n, _ := reviewWorld(t)
	r, key := ghcheck.Repo{Owner: owner, Name: name}, reviewKey(n)
	s.SeedReview(owner, name, n, "stranger", "COMMENTED", taskkey.WithMarker(key, "a look-alike"))
	if res := c.FindReview(context.Background(), r, n, key, "COMMENT"); res.State != effect.Absent {
		t.Fatalf("before: %v %v, want absent (a stranger's review is not ours)", res.State, res.Err)
	}
	art, err := c.CreateReview(context.Background(), r, n, key, ghcheck.NewReview{Body: "Looks fine.", Event: "COMMENT",
		Comments: []ghcheck.ReviewComment{{Path: "a.go", Line: 3, Body: "nit"}, {Path: "b.go", Line: 9, StartLine: 7, Side: "RIGHT", Body: "why?"}}})
	if err != nil {
		t.Fatal(err)
	}
	if posts(s) != 1 || art.State != "COMMENTED" || art.ID == 0 || art.URL == "" {
		t.Fatalf("writes %q, artifact %+v: want one POST making a COMMENTED review", writesTo(s), art)
	}
	rvs := s.Reviews(owner, name, n)
	if got := rvs[len(rvs)-1]; got.Comments != 2 || got.Author != bLogin || !taskkey.HasMarker(got.Body, key) {
		t.Fatalf("stored review %+v: want ours, marked, with its 2 inline comments", got)
	}
	res := c.FindReview(context.Background(), r, n, key, "COMMENT")
	if res.State != effect.Found || res.Artifact.ID != art.ID {
		t.Fatalf("after: %v %+v, want found %d", res.State, res.Artifact, art.ID)
	}
}

// A pending review ours for the key (a pending flow cut short) is submitted,
// never doubled; one not made for the key is a refusal that says so.
func TestCreateReviewSettlesOurPendingReview(t *testing.T) {
	s, c, n, _ := reviewWorld(t)
	r, key := ghcheck.Repo{Owner: owner, Name: name}, reviewKey(n)
	pending, err := c.CreateReview(context.Background(), r, n, key, ghcheck.NewReview{Body: "draft", Comments: []ghcheck.ReviewComment{{Path: "a.go", Line: 1, Body: "x"}}})
	if err != nil || pending.State != "PENDING" {
		t.Fatalf("pending create: %+v %v", pending, err)
	}
	if res := c.FindReview(context.Background(), r, n, key, ""); res.State != effect.Found {
		t.Fatalf("a pending review asked for and there: %v, want found", res.State)
	}
	if res := c.FindReview(context.Background(), r, n, key, "APPROVE"); res.State != effect.Absent {
		t.Fatalf("an approval asked for, only pending there: %v, want absent", res.State)
	}
	art, err := c.CreateReview(context.Background(), r, n, key, ghcheck.NewReview{Body: "Approved.", Event: "APPROVE"})
	if err != nil {
		t.Fatal(err)
	}
	rvs := s.Reviews(owner, name, n)
	if len(rvs) != 1 || rvs[0].ID != pending.ID || rvs[0].State != "APPROVED" || rvs[0].Comments != 1 || art.ID != pending.ID {
		t.Fatalf("reviews %+v, artifact %+v: want the pending one submitted, alone", rvs, art)
	}

	// This identity's own pending review, not ghonce's for this key.
	other := taskkey.Key(taskkey.Identity{Task: "T-2", Step: "pr-review", Kind: "review", Repo: repo, Target: "1"})
	s.SeedReview(owner, name, n, bLogin, "PENDING", "my own notes")
	before := len(s.Reviews(owner, name, n))
	_, err = c.CreateReview(context.Background(), r, n, other, ghcheck.NewReview{Body: "LGTM", Event: "COMMENT"})
	if createErrClass(t, err) != effect.ClassRefused || !strings.Contains(err.Error(), "pending review") || len(s.Reviews(owner, name, n)) != before {
		t.Fatalf("err %v: want a refusal naming the pending review, nothing made", err)
	}
}

// GitHub refuses an approval of one's own pull request: nothing was made,
// and the error says what to do.
func TestCreateReviewOwnPullRequestIsRefused(t *testing.T) {
	s, c, _, mine := reviewWorld(t)
	r := ghcheck.Repo{Owner: owner, Name: name}
	for _, ev := range []string{"APPROVE", "REQUEST_CHANGES"} {
		_, err := c.CreateReview(context.Background(), r, mine, reviewKey(mine), ghcheck.NewReview{Body: "ok", Event: ev})
		if createErrClass(t, err) != effect.ClassRefused || !strings.Contains(err.Error(), "their own pull request") {
			t.Fatalf("%s: %v, want refused, saying why", ev, err)
		}
	}
	if got := s.Reviews(owner, name, mine); len(got) != 0 {
		t.Fatalf("reviews %+v, want none", got)
	}
}

// A 504 after GitHub stored the review is a maybe, never retried by the
// layer; the next look-up finds it.
func TestCreateReviewMaybeIsNotRetried(t *testing.T) {
	s, c, n, _ := reviewWorld(t)
	r, key := ghcheck.Repo{Owner: owner, Name: name}, reviewKey(n)
	s.Inject(fixtures.Fault{Match: fixtures.MatchMethodPath("POST", "/repos/"+repo+"/pulls/1/reviews"), Kind: fixtures.Status504AfterCommit})
	_, err := c.CreateReview(context.Background(), r, n, key, ghcheck.NewReview{Body: "hm", Event: "COMMENT"})
	if createErrClass(t, err) != effect.ClassMaybe || posts(s) != 1 {
		t.Fatalf("err %v, writes %q: want one POST, maybe", err, writesTo(s))
	}
	if res := c.FindReview(context.Background(), r, n, key, "COMMENT"); res.State != effect.Found {
		t.Fatalf("after the maybe: %v, want found", res.State)
	}
}

// Every page is read: our review behind 150 others is found.
func TestFindReviewReadsEveryPage(t *testing.T) {
	s, c, n, _ := reviewWorld(t)
	key := reviewKey(n)
	for range 150 {
		s.SeedReview(owner, name, n, "someone-else", "COMMENTED", "+1")
	}
	s.SeedReview(owner, name, n, bLogin, "COMMENTED", taskkey.WithMarker(key, "ours"))
	if res := c.FindReview(context.Background(), ghcheck.Repo{Owner: owner, Name: name}, n, key, "COMMENT"); res.State != effect.Found {
		t.Fatalf("%v %v, want found on page 2", res.State, res.Err)
	}
}

func TestCheckReviewRefusesBeforeSending(t *testing.T) {
	key := reviewKey(1)
	for _, tc := range []struct {
		name string
		p    ghcheck.NewReview
	}{
		{"event", ghcheck.NewReview{Event: "LGTM"}},
		{"commit", ghcheck.NewReview{Event: "COMMENT", Body: "x", CommitID: "abc"}},
		{"long body", ghcheck.NewReview{Event: "COMMENT", Body: strings.Repeat("x", taskkey.MaxBody)}},
		{"no path", ghcheck.NewReview{Comments: []ghcheck.ReviewComment{{Line: 1, Body: "x"}}}},
		{"no line", ghcheck.NewReview{Comments: []ghcheck.ReviewComment{{Path: "a", Body: "x"}}}},
		{"range", ghcheck.NewReview{Comments: []ghcheck.ReviewComment{{Path: "a", Line: 2, StartLine: 2, Body: "x"}}}},
		{"side", ghcheck.NewReview{Comments: []ghcheck.ReviewComment{{Path: "a", Line: 2, Side: "right", Body: "x"}}}},
		{"blank", ghcheck.NewReview{Comments: []ghcheck.ReviewComment{{Path: "a", Line: 2, Body: " "}}}},
		{"dots", ghcheck.NewReview{Comments: []ghcheck.ReviewComment{{Path: "../a", Line: 2, Body: "x"}}}},
	} {
		if err := ghcheck.CheckReview(key, 1, tc.p); err == nil {
			t.Errorf("%s: accepted %+v", tc.name, tc.p)
		}
	}
	if err := ghcheck.CheckReview(key, 1, ghcheck.NewReview{Event: "APPROVE"}); err != nil {
		t.Errorf("a bare approval: %v", err)
	}
}

// SubmitReview submits only our pending review for the key: with none,
// nothing is sent; once submitted, a second call returns it.
func TestSubmitReviewOnlyOurPendingOne(t *testing.T) {
	s, c, n, _ := reviewWorld(t)
	r, key := ghcheck.Repo{Owner: owner, Name: name}, reviewKey(n)
	_, err := c.SubmitReview(context.Background(), r, n, key, ghcheck.NewReview{Event: "COMMENT", Body: "x"})
	if createErrClass(t, err) != effect.ClassRefused || posts(s) != 0 {
		t.Fatalf("no pending review: %v, writes %q; want refused, nothing sent", err, writesTo(s))
	}
	s.SeedReview(owner, name, n, bLogin, "PENDING", taskkey.WithMarker(key, "draft"))
	for range 2 {
		art, err := c.SubmitReview(context.Background(), r, n, key, ghcheck.NewReview{Event: "COMMENT", Body: "final"})
		if err != nil || art.State != "COMMENTED" {
			t.Fatalf("%+v %v", art, err)
		}
	}
	if posts(s) != 1 || len(s.Reviews(owner, name, n)) != 1 {
		t.Fatalf("writes %q: want one submit", writesTo(s))
	}
}
