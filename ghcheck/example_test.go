package ghcheck_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-github/v66/github"
	"github.com/migueleliasweb/go-github-mock/src/mock"

	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/taskkey"
)

// A task runner asks before it comments, and creates only when the
// consistent reads say absent. A failed create's Class says whether the
// comment may exist.
func Example() {
	key := taskkey.Key(taskkey.Identity{Task: "T-42", Step: "summary", Kind: "comment", Repo: "octo/hello", Target: "7"})
	c, err := ghcheck.New(ghcheck.Options{
		Token: "ghp_example",
		HTTPClient: mock.NewMockedHTTPClient(
			mock.WithRequestMatch(mock.GetUser, github.User{Login: github.String("ghonce-bot")}),
			mock.WithRequestMatch(mock.GetReposIssuesCommentsByOwnerByRepoByIssueNumber, []github.IssueComment{}),
			mock.WithRequestMatch(mock.PostReposIssuesCommentsByOwnerByRepoByIssueNumber, github.IssueComment{
				ID: github.Int64(1001), HTMLURL: github.String("https://github.com/octo/hello/issues/7#issuecomment-1001"),
			}),
		),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	repo := ghcheck.Repo{Owner: "octo", Name: "hello"}

	res := c.FindComment(ctx, repo, 7, key)
	fmt.Println("find:", res.State)
	if res.State != ghcheck.Absent {
		return
	}
	a, err := c.CreateComment(ctx, repo, 7, key, "All checks passed.")
	var ce *ghcheck.CreateError
	if errors.As(err, &ce) {
		fmt.Println("create failed:", ce.Class)
		return
	}
	fmt.Println("created:", a.URL)
	// Output:
	// find: absent
	// created: https://github.com/octo/hello/issues/7#issuecomment-1001
}
