package fakegithub

import (
	"context"
	"testing"

	"github.com/google/go-github/v66/github"
)

// A reply joins the thread of the comment it answers, at its line; a
// reply to a reply joins the same thread. A reply to a comment of another
// pull request is 404, and a file-level comment needs only a changed path.
func TestReviewCommentThreads(t *testing.T) {
	s, gh := newTest(t, Options{})
	ctx := context.Background()
	head := s.AddCommitBy(owner, name, "main", owner)
	s.SetRef(owner, name, "feat", head)
	n := s.SeedPR(owner, name, owner, SeedPR{Head: "feat", Title: "feat"})
	other := s.SeedPR(owner, name, owner, SeedPR{Head: "feat", Title: "again"})
	root, _, err := gh.PullRequests.CreateComment(ctx, owner, name, n, &github.PullRequestComment{
		Body: github.String("root"), CommitID: github.String(head), Path: github.String("change-octo.txt"), Line: github.Int(1)})
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
		if r.GetInReplyTo() != root.GetID() || r.GetPath() != "change-octo.txt" || r.GetLine() != 1 {
			t.Errorf("reply %+v: want it in %d's thread, at its line", r, root.GetID())
		}
	}
	if _, resp, err := gh.PullRequests.CreateCommentInReplyTo(ctx, owner, name, other, "elsewhere", root.GetID()); err == nil || resp.StatusCode != 404 {
		t.Errorf("a reply on another pull request: %v, want 404", err)
	}
	file, _, err := gh.PullRequests.CreateComment(ctx, owner, name, n, &github.PullRequestComment{
		Body: github.String("whole file"), CommitID: github.String(head), Path: github.String("change-octo.txt"), SubjectType: github.String("file")})
	if err != nil || file.GetSubjectType() != "file" {
		t.Fatalf("file-level: %+v, %v", file, err)
	}
	if got := s.ReviewComments(owner, name, n); len(got) != 4 {
		t.Errorf("%d comments, want 4", len(got))
	}
}
