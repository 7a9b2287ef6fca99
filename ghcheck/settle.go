package ghcheck

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/taskkey"
)

// The reads and writes that settle a duplicate `ghonce audit` found:
// closing an issue or pull request, deleting a comment or a branch. Each
// write sets a state (closed, gone), so it is idempotent and retried like
// a read; a failed one is a *CreateError whose Class says whether it may
// have taken effect. Each read is a consistent get.

// IssueState reads issue or pull request number: GET
// /repos/{o}/{r}/issues/{number}. Found with its state (open, closed) and
// author; Absent for a 404; Unknown when the read failed.
//
// GitHub API docs: https://docs.github.com/rest/issues/issues#get-an-issue
func (c *Client) IssueState(ctx context.Context, r Repo, number int) Result {
	if err := CheckIssueNumber(number); err != nil {
		return c.unknown(fmt.Errorf("read issue: %w", err))
	}
	var is *github.Issue
	err := c.newRun().read(ctx, func(ctx context.Context) (*github.Response, error) {
		var resp *github.Response
		var err error
		is, resp, err = c.gh.Issues.Get(ctx, r.Owner, r.Name, number)
		return resp, err
	})
	switch {
	case notFound(err):
		return Result{State: Absent}
	case err != nil:
		return c.unknown(fmt.Errorf("read %s#%d: %w", r, number, err))
	}
	return Result{State: Found, Artifact: issueArtifact(is)}
}

// CloseIssue closes issue number with reason as its state_reason
// ("duplicate", "completed", "not_planned"): PATCH /repos/{o}/{r}/issues/{number}.
//
// GitHub API docs: https://docs.github.com/rest/issues/issues#update-an-issue
func (c *Client) CloseIssue(ctx context.Context, r Repo, number int, reason string) (Artifact, error) {
	if err := CheckIssueNumber(number); err != nil {
		return Artifact{}, c.createErr(ClassRefused, fmt.Errorf("close issue: %w", err))
	}
	var is *github.Issue
	class, err := c.newRun().do(ctx, idempotent, func(ctx context.Context) (*github.Response, error) {
		var resp *github.Response
		var err error
		is, resp, err = c.gh.Issues.Edit(ctx, r.Owner, r.Name, number, &github.IssueRequest{State: github.String("closed"), StateReason: github.String(reason)})
		return resp, err
	})
	if err != nil {
		return Artifact{}, c.createErr(class, issueRefused(err, r, number, fmt.Sprintf("close issue %s#%d", r, number)))
	}
	return issueArtifact(is), nil
}

// ClosePR closes pull request number: PATCH /repos/{o}/{r}/pulls/{number}
// (a pull request has no state_reason).
//
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#update-a-pull-request
func (c *Client) ClosePR(ctx context.Context, r Repo, number int) (Artifact, error) {
	if err := CheckIssueNumber(number); err != nil {
		return Artifact{}, c.createErr(ClassRefused, fmt.Errorf("close pull request: %w", err))
	}
	var pr *github.PullRequest
	class, err := c.newRun().do(ctx, idempotent, func(ctx context.Context) (*github.Response, error) {
		var resp *github.Response
		var err error
		pr, resp, err = c.gh.PullRequests.Edit(ctx, r.Owner, r.Name, number, &github.PullRequest{State: github.String("closed")})
		return resp, err
	})
	if err != nil {
		return Artifact{}, c.createErr(class, issueRefused(err, r, number, fmt.Sprintf("close pull request %s#%d", r, number)))
	}
	return prArtifact(pr), nil
}

// CommentState reads comment id: GET /repos/{o}/{r}/issues/comments/{id}.
// Found with its author; Absent for a 404 (deleted, or never there).
//
// GitHub API docs: https://docs.github.com/rest/issues/comments#get-an-issue-comment
func (c *Client) CommentState(ctx context.Context, r Repo, id int64) Result {
	if err := CheckCommentID(id); err != nil {
		return c.unknown(fmt.Errorf("read comment: %w", err))
	}
	var cm *github.IssueComment
	err := c.newRun().read(ctx, func(ctx context.Context) (*github.Response, error) {
		var resp *github.Response
		var err error
		cm, resp, err = c.gh.Issues.GetComment(ctx, r.Owner, r.Name, id)
		return resp, err
	})
	switch {
	case notFound(err):
		return Result{State: Absent}
	case err != nil:
		return c.unknown(fmt.Errorf("read comment %d of %s: %w", id, r, err))
	}
	return Result{State: Found, Artifact: commentArtifact(cm)}
}

// DeleteComment deletes comment id: DELETE
// /repos/{o}/{r}/issues/comments/{id}. A 404 means it is gone already,
// which is what was asked: no error.
//
// GitHub API docs: https://docs.github.com/rest/issues/comments#delete-an-issue-comment
func (c *Client) DeleteComment(ctx context.Context, r Repo, id int64) error {
	if err := CheckCommentID(id); err != nil {
		return c.createErr(ClassRefused, fmt.Errorf("delete comment: %w", err))
	}
	class, err := c.newRun().do(ctx, idempotent, func(ctx context.Context) (*github.Response, error) {
		return c.gh.Issues.DeleteComment(ctx, r.Owner, r.Name, id)
	})
	if err != nil && !notFound(err) {
		return c.createErr(class, fmt.Errorf("delete comment %d of %s: %w", id, r, err))
	}
	return nil
}

// BranchHead reads branch name exactly: GET /repos/{o}/{r}/git/ref/heads/{name}.
// ok is false for a 404.
//
// GitHub API docs: https://docs.github.com/rest/git/refs#get-a-reference
func (c *Client) BranchHead(ctx context.Context, r Repo, name string) (sha string, ok bool, err error) {
	if err := taskkey.CheckBranchName(name); err != nil {
		return "", false, fmt.Errorf("read branch: %w", err)
	}
	var ref *github.Reference
	err = c.newRun().read(ctx, func(ctx context.Context) (*github.Response, error) {
		var resp *github.Response
		var err error
		ref, resp, err = c.gh.Git.GetRef(ctx, r.Owner, r.Name, "heads/"+name)
		return resp, err
	})
	switch {
	case notFound(err):
		return "", false, nil
	case err != nil:
		return "", false, c.redact(fmt.Errorf("read branch %s of %s: %w", name, r, err))
	case ref.GetRef() != "refs/heads/"+name:
		return "", false, fmt.Errorf("read branch %s of %s: GitHub answered ref %q", name, r, ref.GetRef())
	}
	return strings.ToLower(ref.GetObject().GetSHA()), true, nil
}

// DeleteBranch deletes branch name: DELETE /repos/{o}/{r}/git/refs/heads/{name}.
// A 422 "Reference does not exist" means it is gone already: no error.
//
// GitHub API docs: https://docs.github.com/rest/git/refs#delete-a-reference
func (c *Client) DeleteBranch(ctx context.Context, r Repo, name string) error {
	if err := taskkey.CheckBranchName(name); err != nil {
		return c.createErr(ClassRefused, fmt.Errorf("delete branch: %w", err))
	}
	class, err := c.newRun().do(ctx, idempotent, func(ctx context.Context) (*github.Response, error) {
		return c.gh.Git.DeleteRef(ctx, r.Owner, r.Name, "heads/"+name)
	})
	if httpStatus(err) == http.StatusUnprocessableEntity && strings.Contains(strings.ToLower(err.Error()), "reference does not exist") {
		return nil
	}
	if err != nil {
		return c.createErr(class, fmt.Errorf("delete branch %s of %s: %w", name, r, err))
	}
	return nil
}

// CheckCommentID refuses the comment id CommentState and DeleteComment
// would refuse before sending anything: zero or negative.
func CheckCommentID(id int64) error {
	if id <= 0 {
		return fmt.Errorf("invalid comment id %d", id)
	}
	return nil
}
