package mcp_test

import (
	"context"
	"testing"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/tests/testworld"
)

// A killed agent that retries add_reply_to_pull_request_comment gets the
// first reply back: one reply per comment replied to and task.
func TestReplyToInlineCommentOnce(t *testing.T) {
	w := newWorld(t, opts{})
	head := w.fake.AddCommitBy(testworld.Owner, testworld.Name, "main", testworld.Login)
	w.fake.SetRef(testworld.Owner, testworld.Name, "feat", head)
	n := w.fake.SeedPR(testworld.Owner, testworld.Name, testworld.Stranger, fixtures.SeedPR{Head: "feat", Title: "feat"})
	gh := github.NewClient(nil).WithAuthToken(testworld.StrangerToken)
	gh, _ = gh.WithEnterpriseURLs(w.fake.URL(), w.fake.URL())
	root, _, err := gh.PullRequests.CreateComment(context.Background(), testworld.Owner, testworld.Name, n, &github.PullRequestComment{
		Body: github.String("Why this change?"), CommitID: github.String(head), Path: github.String("change-" + testworld.Login + ".txt"), Line: github.Int(1)})
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"owner": testworld.Owner, "repo": testworld.Name, "pullNumber": n, "commentId": root.GetID(), "body": "To fix the crash.", "task": "PR-7"}
	first, _ := w.ok("add_reply_to_pull_request_comment", args)
	again, _ := w.ok("add_reply_to_pull_request_comment", args)
	if first.Outcome != "created" || again.Outcome != "skipped" || again.URL != first.URL {
		t.Fatalf("first %+v, again %+v: want created, then the same skipped", first, again)
	}
	if cs := w.fake.ReviewComments(testworld.Owner, testworld.Name, n); len(cs) != 2 || cs[1].InReplyTo != root.GetID() {
		t.Fatalf("inline comments %+v, want the comment and one reply", cs)
	}
}
