package guard_test

import (
	"context"
	"testing"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/guard"
)

// reviewFile puts a three-line file on the pull request's head branch and
// returns the new head: lines 1 to 3 are on its diff.
func (w *world) reviewFile(t *testing.T) string {
	t.Helper()
	plain := github.NewClient(nil).WithAuthToken(token)
	plain.BaseURL = mustURL(w.GitHub.URL())
	c, _, err := plain.Repositories.CreateFile(context.Background(), owner, name, "src/app.go", &github.RepositoryContentFileOptions{
		Message: github.String("app"), Content: []byte("package app\n\nfunc f() {}\n"), Branch: github.String("feature"),
	})
	if err != nil {
		t.Fatal(err)
	}
	return c.GetSHA()
}

// postInline is an agent's inline comment through a go-github client,
// under task with no step (the kind's default): the key is the line's.
func postInline(gh *github.Client, task string, pr int, head string, line int, body string) (*github.PullRequestComment, *github.Response, error) {
	return gh.PullRequests.CreateComment(guard.WithStep(context.Background(), task, ""), owner, name, pr, &github.PullRequestComment{
		Body: github.String(body), CommitID: github.String(head), Path: github.String("src/app.go"), Line: github.Int(line)})
}

// anthropics/claude-code-action #1405: under the default review
// configuration every inline comment was posted twice, 15–25 s apart
// (the buffer's flush after the direct post). Through the transport the
// second of each is the first, and two lines of one task stay two
// comments without naming a step.
func TestInlineCommentsPostedTwiceLandOnce(t *testing.T) {
	w := newWorld(t)
	head := w.reviewFile(t)
	gh := w.client(t, ledgerIn(t), nil)
	comments := map[int]string{1: "Package name shadows the module's.", 3: "f does nothing."}
	ids := map[int]int64{}
	for _, round := range []string{"created", "skipped"} {
		for line, body := range comments {
			c, resp, err := postInline(gh, "PR-review", w.pull, head, line, body)
			if err != nil {
				t.Fatalf("%s line %d: %v", round, line, err)
			}
			if got := resp.Header.Get("X-Ghonce-Outcome"); got != round {
				t.Errorf("line %d: outcome %q, want %q", line, got, round)
			}
			if round == "skipped" && c.GetID() != ids[line] {
				t.Errorf("line %d: the repeat got comment %d, want the first, %d", line, c.GetID(), ids[line])
			}
			ids[line] = c.GetID()
		}
	}
	if n := len(w.GitHub.ReviewComments(owner, name, w.pull)); n != 2 {
		t.Fatalf("%d inline comments, want 2", n)
	}
}

// anthropics/claude-code-action #1542: a buffer shared by jobs on a
// self-hosted runner posted one pull request's comments three more times.
// Each re-post under the task that made them is the comment already
// there. (A re-post onto another pull request is another key, the pull
// request being part of it: ghonce cannot call a comment meant for one
// pull request a retry of one on another; GitHub refuses it where that
// pull request's diff lacks the line.)
func TestBufferRepostsLandOnce(t *testing.T) {
	w := newWorld(t)
	head := w.reviewFile(t)
	path := ledgerIn(t)
	first, _, err := postInline(w.client(t, path, nil), "PR-review", w.pull, head, 3, "f does nothing.")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // each re-post a new process on the same ledger
		c, resp, err := postInline(w.client(t, path, nil), "PR-review", w.pull, head, 3, "f does nothing.")
		if err != nil || c.GetID() != first.GetID() || resp.Header.Get("X-Ghonce-Outcome") != "skipped" {
			t.Fatalf("re-post %d: %v, comment %d (%s), want the first, %d, skipped", i+1, err, c.GetID(), resp.Header.Get("X-Ghonce-Outcome"), first.GetID())
		}
	}
	if n := len(w.GitHub.ReviewComments(owner, name, w.pull)); n != 1 {
		t.Fatalf("%d inline comments, want 1", n)
	}
}
