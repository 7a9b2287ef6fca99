package ghcheck

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v66/github"
)

// The look-ups and writes that settle a duplicate `ghonce audit` found:
// closing an issue or pull request, deleting a comment or a stray branch.
// Each Find answers whether the effect is in place already (closed, gone)
// with consistent gets; a 404 proves "gone" only once the token is known
// to see the repository. Each write sets a state, so it is idempotent and
// retried like a read; its error is a *CreateError: ClassExists when
// GitHub says the effect was in place already, ClassMaybe when it may
// have been applied. Each refuses before sending what CheckIssueNumber,
// CheckCommentID or CheckBranch refuses.

// CheckCommentID refuses the comment id FindCommentGone and DeleteComment
// would refuse before sending anything: zero or negative.
func CheckCommentID(id int64) error {
	if id <= 0 {
		return fmt.Errorf("invalid comment id %d", id)
	}
	return nil
}

// FindClosed reads issue or pull request number: GET
// /repos/{o}/{r}/issues/{number}. Found when it is closed (by anyone),
// absent while it is open, a conflict when it does not exist (nothing can
// close it), unknown when the read failed.
//
// GitHub API docs: https://docs.github.com/rest/issues/issues#get-an-issue
func (c *Client) FindClosed(ctx context.Context, r Repo, number int) Result {
	if err := CheckIssueNumber(number); err != nil {
		return c.unknown(fmt.Errorf("read issue: %w", err))
	}
	is, err := c.getIssue(ctx, r, number)
	switch {
	case notFound(err):
		return Result{State: Conflict, Err: fmt.Errorf("%s#%d does not exist for this token (deleted, transferred, or no access): nothing to close", r, number)}
	case err != nil:
		return c.unknown(fmt.Errorf("read %s#%d: %w", r, number, err))
	case is.GetState() != "closed":
		return Result{State: Absent}
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
	is, class, err := send(ctx, c.newRun(), idempotent, func(ctx context.Context) (*github.Issue, *github.Response, error) {
		return c.gh.Issues.Edit(ctx, r.Owner, r.Name, number, &github.IssueRequest{State: github.String("closed"), StateReason: github.String(reason)})
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
	pr, class, err := send(ctx, c.newRun(), idempotent, func(ctx context.Context) (*github.PullRequest, *github.Response, error) {
		return c.gh.PullRequests.Edit(ctx, r.Owner, r.Name, number, &github.PullRequest{State: github.String("closed")})
	})
	if err != nil {
		return Artifact{}, c.createErr(class, issueRefused(err, r, number, fmt.Sprintf("close pull request %s#%d", r, number)))
	}
	return prArtifact(pr), nil
}

// goneUnlessHidden answers a 404 for something in r: found (it is gone)
// when the token can read r (GET /repos/{o}/{r}), unknown when it cannot
// (a 404 then says nothing about the thing itself).
func (c *Client) goneUnlessHidden(ctx context.Context, r Repo, what string, gone Artifact) Result {
	err := c.newRun().read(ctx, func(ctx context.Context) (*github.Response, error) {
		_, resp, err := c.gh.Repositories.Get(ctx, r.Owner, r.Name)
		return resp, err
	})
	switch {
	case notFound(err):
		return c.unknown(fmt.Errorf("read %s: GitHub answered 404 for it and for the repository %s: this token cannot see %s; check the token's access", what, r, r))
	case err != nil:
		return c.unknown(fmt.Errorf("read %s: it answered 404; reading %s to tell gone from hidden: %w", what, r, err))
	}
	return Result{State: Found, Artifact: gone}
}

// FindCommentGone reads comment id: GET /repos/{o}/{r}/issues/comments/{id}.
// Found when it is gone (a 404 in a repository the token sees), absent
// while it exists, unknown otherwise.
//
// GitHub API docs: https://docs.github.com/rest/issues/comments#get-an-issue-comment
func (c *Client) FindCommentGone(ctx context.Context, r Repo, id int64) Result {
	if err := CheckCommentID(id); err != nil {
		return c.unknown(fmt.Errorf("read comment: %w", err))
	}
	err := c.newRun().read(ctx, func(ctx context.Context) (*github.Response, error) {
		_, resp, err := c.gh.Issues.GetComment(ctx, r.Owner, r.Name, id)
		return resp, err
	})
	switch {
	case notFound(err):
		return c.goneUnlessHidden(ctx, r, fmt.Sprintf("comment %d", id), Artifact{ID: id})
	case err != nil:
		return c.unknown(fmt.Errorf("read comment %d of %s: %w", id, r, err))
	}
	return Result{State: Absent}
}

// DeleteComment deletes comment id: DELETE
// /repos/{o}/{r}/issues/comments/{id}. A 404 is ClassExists: it is gone
// already (FindCommentGone tells gone from hidden).
//
// GitHub API docs: https://docs.github.com/rest/issues/comments#delete-an-issue-comment
func (c *Client) DeleteComment(ctx context.Context, r Repo, id int64) (Artifact, error) {
	if err := CheckCommentID(id); err != nil {
		return Artifact{}, c.createErr(ClassRefused, fmt.Errorf("delete comment: %w", err))
	}
	class, err := c.newRun().do(ctx, idempotent, func(ctx context.Context) (*github.Response, error) {
		return c.gh.Issues.DeleteComment(ctx, r.Owner, r.Name, id)
	})
	switch {
	case notFound(err):
		return Artifact{}, c.createErr(ClassExists, fmt.Errorf("delete comment %d of %s: it is gone already: %w", id, r, err))
	case err != nil:
		return Artifact{}, c.createErr(class, fmt.Errorf("delete comment %d of %s: %w", id, r, err))
	}
	return Artifact{ID: id}, nil
}

// FindBranchGone reads branch name exactly (GET
// /repos/{o}/{r}/git/ref/heads/{name}) and, while it is at sha, every pull
// request with it as head (GET .../pulls?head=OWNER:NAME&state=all), both
// consistent. Found when it is gone (a 404 in a repository the token
// sees); absent while it is at sha with no pull request; a conflict when
// it moved (someone pushed) or a pull request uses it: someone's work,
// not a stray.
//
// GitHub API docs: https://docs.github.com/rest/git/refs#get-a-reference
func (c *Client) FindBranchGone(ctx context.Context, r Repo, name, sha string) Result {
	if err := CheckBranch(name, sha); err != nil {
		return c.unknown(fmt.Errorf("read branch: %w", err))
	}
	ref, missing, err := c.readBranch(ctx, c.newRun(), r, name)
	switch {
	case missing:
		return c.goneUnlessHidden(ctx, r, "branch "+name, Artifact{SHA: sha})
	case err != nil:
		return c.unknown(err)
	}
	if at := strings.ToLower(ref.GetObject().GetSHA()); !strings.EqualFold(at, sha) {
		return Result{State: Conflict, Err: fmt.Errorf("branch %s moved to %.12s since it was found stray at %.12s: someone pushed; not deleted", name, at, sha)}
	}
	prs, err := c.PullsForHead(ctx, r, name)
	switch {
	case err != nil:
		return c.unknown(err)
	case len(prs) > 0:
		return Result{State: Conflict, Err: fmt.Errorf("branch %s is the head of pull request #%d: not deleted", name, prs[0])}
	}
	return Result{State: Absent}
}

// DeleteBranch deletes branch name: DELETE /repos/{o}/{r}/git/refs/heads/{name}.
// A 422 "Reference does not exist" is ClassExists: it is gone already.
//
// GitHub API docs: https://docs.github.com/rest/git/refs#delete-a-reference
func (c *Client) DeleteBranch(ctx context.Context, r Repo, name, sha string) (Artifact, error) {
	if err := CheckBranch(name, sha); err != nil {
		return Artifact{}, c.createErr(ClassRefused, fmt.Errorf("delete branch: %w", err))
	}
	class, err := c.newRun().do(ctx, idempotent, func(ctx context.Context) (*github.Response, error) {
		return c.gh.Git.DeleteRef(ctx, r.Owner, r.Name, "heads/"+name)
	})
	switch {
	case httpStatus(err) == http.StatusUnprocessableEntity && strings.Contains(strings.ToLower(err.Error()), "reference does not exist"):
		return Artifact{}, c.createErr(ClassExists, fmt.Errorf("delete branch %s of %s: it is gone already: %w", name, r, err))
	case err != nil:
		return Artifact{}, c.createErr(class, fmt.Errorf("delete branch %s of %s: %w", name, r, err))
	}
	return Artifact{SHA: sha}, nil
}

// getIssue reads issue (or pull request) number of r: GET
// /repos/{o}/{r}/issues/{n}, a consistent read.
func (c *Client) getIssue(ctx context.Context, r Repo, number int) (*github.Issue, error) {
	is, err := get(ctx, c.newRun(), func(ctx context.Context) (*github.Issue, *github.Response, error) {
		return c.gh.Issues.Get(ctx, r.Owner, r.Name, number)
	})
	return is, err
}
