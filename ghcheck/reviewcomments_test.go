package ghcheck_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/taskkey"
	"github.com/ghonce/ghonce/tests/testworld"
)

// changed is the file reviewPR's pull request adds: one line, on the
// RIGHT side only.
const changed = "change-" + bLogin + ".txt"

// reviewPR makes a world with a pull request whose head adds changed, and
// returns the world, our client, the pull request's number and its head.
func reviewPR(t *testing.T) (*testworld.World, *ghcheck.Client, int, string) {
	t.Helper()
	w := testworld.New(t)
	head := w.GitHub.AddCommitBy(owner, name, "main", bLogin)
	w.GitHub.SetRef(owner, name, "feat", head)
	n := w.GitHub.SeedPR(owner, name, bLogin, fixtures.SeedPR{Head: "feat", Title: "feat"})
	return w, w.Client(ghcheck.Options{}), n, head
}

func rcKey(step string) string {
	return taskkey.Key(taskkey.Identity{Task: "T", Step: step, Kind: "review-comment", Repo: repo})
}

// A comment on the head's line is made once, tagged, and found again by
// its key; the head comes with the look-up, in one round trip.
func TestReviewCommentCreateAndFind(t *testing.T) {
	t.Parallel()
	_, c, n, head := reviewPR(t)
	ctx, r, key := context.Background(), ghcheck.Repo{Owner: owner, Name: name}, rcKey("line-1")
	got, res := c.FindReviewCommentAtHead(ctx, r, n, key)
	if res.State != ghcheck.Absent || got != head {
		t.Fatalf("before: %v, head %q; want absent at %s", res.State, got, head)
	}
	a, err := c.CreateReviewComment(ctx, r, n, key, ghcheck.NewReviewComment{Body: "nit", CommitID: head, Path: changed, Line: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !taskkey.HasMarker(a.Body, key) || a.Author != bLogin || a.SHA != head || !strings.Contains(a.URL, "#discussion_r") {
		t.Errorf("artifact %+v: want our tagged comment on %s", a, head)
	}
	if res := c.FindReviewComment(ctx, r, n, key); res.State != ghcheck.Found || res.Artifact.ID != a.ID {
		t.Errorf("after: %v %+v, want found %d", res.State, res.Artifact, a.ID)
	}
	// A reply is found by its own key; the comment it answers is not it.
	rk := rcKey("reply")
	if res := c.FindReviewComment(ctx, r, n, rk); res.State != ghcheck.Absent {
		t.Fatalf("reply before: %v", res.State)
	}
	ra, err := c.CreateReviewComment(ctx, r, n, rk, ghcheck.NewReviewComment{Body: "done", InReplyTo: a.ID})
	if err != nil {
		t.Fatal(err)
	}
	if res := c.FindReviewComment(ctx, r, n, rk); res.State != ghcheck.Found || res.Artifact.ID != ra.ID {
		t.Errorf("reply after: %v %+v, want found %d", res.State, res.Artifact, ra.ID)
	}
}

// Only our identity's comment with the key's tags counts, on any page: a
// stranger's copy and our quote of the marker do not.
func TestFindReviewCommentTrustsOnlyOurs(t *testing.T) {
	t.Parallel()
	w, c, n, head := reviewPR(t)
	ctx, r, key := context.Background(), ghcheck.Repo{Owner: owner, Name: name}, rcKey("line-1")
	stranger := github.NewClient(nil).WithAuthToken(testworld.StrangerToken)
	stranger, _ = stranger.WithEnterpriseURLs(w.GitHub.URL(), w.GitHub.URL())
	post := func(gh *github.Client, body string) {
		t.Helper()
		_, _, err := gh.PullRequests.CreateComment(ctx, owner, name, n, &github.PullRequestComment{
			Body: github.String(body), CommitID: github.String(head), Path: github.String(changed), Line: github.Int(1)})
		if err != nil {
			t.Fatal(err)
		}
	}
	for range 101 {
		post(stranger, taskkey.WithMarker(key, "a stranger's copy"))
	}
	ours := github.NewClient(nil).WithAuthToken(bToken)
	ours, _ = ours.WithEnterpriseURLs(w.GitHub.URL(), w.GitHub.URL())
	post(ours, "> "+taskkey.Marker(key))
	if res := c.FindReviewComment(ctx, r, n, key); res.State != ghcheck.Absent {
		t.Fatalf("%v %+v, want absent", res.State, res.Artifact)
	}
	post(ours, taskkey.WithMarker(key, "ours, on page two"))
	if res := c.FindReviewComment(ctx, r, n, key); res.State != ghcheck.Found || res.Artifact.Author != bLogin {
		t.Errorf("%v %+v, want ours found", res.State, res.Artifact)
	}
}

// GitHub's refusals are refusals, in words: a line the diff does not
// show, a commit not in the pull request, a reply to no comment, a pull
// request that does not exist.
func TestReviewCommentRefusals(t *testing.T) {
	t.Parallel()
	w, c, n, head := reviewPR(t)
	ctx, r := context.Background(), ghcheck.Repo{Owner: owner, Name: name}
	for _, tc := range []struct {
		name string
		p    ghcheck.NewReviewComment
		want string
	}{
		{"line past the end", ghcheck.NewReviewComment{Path: changed, Line: 2}, "diff"},
		{"left side of an added file", ghcheck.NewReviewComment{Path: changed, Line: 1, Side: "LEFT"}, "diff"},
		{"unchanged file", ghcheck.NewReviewComment{Path: "README.md", Line: 1}, "diff"},
		{"commit not in the pull request", ghcheck.NewReviewComment{Path: changed, Line: 1, CommitID: w.Main}, "commit_id"},
		{"reply to no comment", ghcheck.NewReviewComment{InReplyTo: 999999}, "no such inline comment"},
	} {
		tc.p.Body = "x"
		if tc.p.InReplyTo == 0 && tc.p.CommitID == "" {
			tc.p.CommitID = head
		}
		_, err := c.CreateReviewComment(ctx, r, n, rcKey(tc.name), tc.p)
		if ghcheck.Classify(err) != ghcheck.ClassRefused || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v (%v), want refused saying %q", tc.name, err, ghcheck.Classify(err), tc.want)
		}
	}
	if len(w.GitHub.PullRequests(owner, name)) != 1 {
		t.Fatal("the world changed")
	}
	if _, res := c.FindReviewCommentAtHead(ctx, r, n+100, rcKey("x")); res.State != ghcheck.Conflict || !strings.Contains(res.Err.Error(), "does not exist") {
		t.Errorf("missing pull request: %v %v, want a conflict saying so", res.State, res.Err)
	}
}

// An answer lost after GitHub stored the comment is a maybe, never
// retried by the layer: one comment exists, and the next look finds it.
func TestReviewCommentLostAnswerIsMaybe(t *testing.T) {
	t.Parallel()
	w, c, n, head := reviewPR(t)
	ctx, r, key := context.Background(), ghcheck.Repo{Owner: owner, Name: name}, rcKey("line-1")
	for _, k := range []fixtures.FaultKind{fixtures.Status504AfterCommit, fixtures.DropAfterCommit} {
		w.GitHub.Inject(fixtures.Fault{Kind: k, Match: fixtures.MatchMethod(http.MethodPost)})
		_, err := c.CreateReviewComment(ctx, r, n, key, ghcheck.NewReviewComment{Body: "nit", CommitID: head, Path: changed, Line: 1})
		var ce *effect.CreateError
		if !errors.As(err, &ce) || ce.Class != ghcheck.ClassMaybe {
			t.Fatalf("%v: %v, want a maybe", k, err)
		}
		if res := c.FindReviewComment(ctx, r, n, key); res.State != ghcheck.Found {
			t.Fatalf("%v: then %v, want found", k, res.State)
		}
	}
	posts := 0
	for _, q := range w.GitHub.Requests() {
		if q.Method == http.MethodPost {
			posts++
		}
	}
	if posts != 2 {
		t.Errorf("%d POSTs for two creates, want 2: the layer retried", posts)
	}
}

// Every shape the layer refuses is refused before sending.
func TestCheckReviewComment(t *testing.T) {
	t.Parallel()
	key, sha := rcKey("s"), strings.Repeat("a", 40)
	ok := []ghcheck.NewReviewComment{
		{Path: "a.go", Line: 3},
		{Path: "a.go", Line: 3, Side: "LEFT", CommitID: sha},
		{Path: "a.go", Line: 3, StartLine: 1},
		{Path: "a.go", Line: 3, StartLine: 7, StartSide: "LEFT"},
		{InReplyTo: 12},
	}
	bad := map[string]ghcheck.NewReviewComment{
		"path":       {Line: 1},
		"rooted":     {Path: "/a.go", Line: 1},
		"line":       {Path: "a.go"},
		"side":       {Path: "a.go", Line: 1, Side: "right"},
		"start_line": {Path: "a.go", Line: 3, StartLine: 3},
		"start_side": {Path: "a.go", Line: 3, StartSide: "LEFT"},
		"commit_id":  {Path: "a.go", Line: 3, CommitID: "HEAD"},
		"reply":      {InReplyTo: 12, Path: "a.go"},
		"negative":   {InReplyTo: -1},
		"body":       {Path: "a.go", Line: 1, Body: strings.Repeat("x", taskkey.MaxBody)},
	}
	for _, p := range ok {
		if err := ghcheck.CheckReviewComment(key, 1, p); err != nil {
			t.Errorf("%+v: %v", p, err)
		}
	}
	for name, p := range bad {
		if err := ghcheck.CheckReviewComment(key, 1, p); err == nil {
			t.Errorf("%s: %+v accepted", name, p)
		}
	}
	if ghcheck.CheckReviewComment(key, 0, ok[0]) == nil {
		t.Error("pull request 0 accepted")
	}
}

// The fake GitHub's threads, as GitHub's: a reply joins the thread of the
// comment it answers, at its line; a reply to a reply joins the same
// thread. A reply to a comment of another pull request is 404, and a
// file-level comment needs only a changed path.
func TestFakeReviewCommentThreads(t *testing.T) {
	t.Parallel()
	w, _, n, head := reviewPR(t)
	ctx := context.Background()
	gh := github.NewClient(nil).WithAuthToken(testworld.Token)
	gh.BaseURL, _ = gh.BaseURL.Parse(w.GitHub.URL())
	other := w.GitHub.SeedPR(owner, name, bLogin, fixtures.SeedPR{Head: "feat", Title: "again"})
	root, _, err := gh.PullRequests.CreateComment(ctx, owner, name, n, &github.PullRequestComment{
		Body: github.String("root"), CommitID: github.String(head), Path: github.String(changed), Line: github.Int(1)})
	if err != nil {
		t.Fatal(err)
	}
	r1, _, err := gh.PullRequests.CreateCommentInReplyTo(ctx, owner, name, n, "first reply", root.GetID())
	if err != nil {
		t.Fatal(err)
	}
	r2, _, err := gh.PullRequests.CreateCommentInReplyTo(ctx, owner, name, n, "reply to the reply", r1.GetID())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*github.PullRequestComment{r1, r2} {
		if r.GetInReplyTo() != root.GetID() || r.GetPath() != changed || r.GetLine() != 1 {
			t.Errorf("reply %+v: want it in %d's thread, at its line", r, root.GetID())
		}
	}
	if _, resp, err := gh.PullRequests.CreateCommentInReplyTo(ctx, owner, name, other, "elsewhere", root.GetID()); err == nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("a reply on another pull request: %v, want 404", err)
	}
	file, _, err := gh.PullRequests.CreateComment(ctx, owner, name, n, &github.PullRequestComment{
		Body: github.String("whole file"), CommitID: github.String(head), Path: github.String(changed), SubjectType: github.String("file")})
	if err != nil || file.GetSubjectType() != "file" {
		t.Fatalf("file-level: %+v, %v", file, err)
	}
	if got := w.GitHub.ReviewComments(owner, name, n); len(got) != 4 {
		t.Errorf("%d comments, want 4", len(got))
	}
}
