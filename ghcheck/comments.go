package ghcheck

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/taskkey"
)

// FindComment looks for our comment for key on issue or pull request
// number: GET /repos/{o}/{r}/issues/{number}/comments?per_page=100, every
// page (threads run to hundreds of comments; the marker may be on any
// page). The list is consistent right after a write. A comment counts only
// if its author is ours and its first line is exactly key's marker: the
// marker quoted later in a body, or written by someone else, or with
// another key does not count.
//
// Found: the oldest such comment. Absent: none. A 404 (no such issue, or
// no such repository for this token) is Absent too: it definitively says
// no comment of ours exists there, and the create will fail with a 404
// itself (ClassRefused), so nothing is ever created twice on its account.
// Unknown: a read failed.
//
// GitHub API docs: https://docs.github.com/rest/issues/comments#list-issue-comments
func (c *Client) FindComment(ctx context.Context, r Repo, number int, key string) Result {
	return c.FindCommentSince(ctx, r, number, key, time.Time{})
}

// FindCommentSince is FindComment reading only the comments updated at or
// after since (GET .../comments?since=..., GitHub's filter on updated_at;
// a zero since reads the whole thread). A comment created at or after
// since is always in that list, so a caller that knows when the first
// attempt of key began (the ledger records it before anything is sent)
// reads one page instead of the whole thread. An older comment edited
// since appears too; it is checked like any other. since is on this
// machine's clock; it is sent on GitHub's clock once a response has told
// it (ClockOffset), so a clock ahead of GitHub's skips no comment.
func (c *Client) FindCommentSince(ctx context.Context, r Repo, number int, key string, since time.Time) Result {
	if err := checkKey(key); err != nil {
		return c.unknown(fmt.Errorf("find comment: %w", err))
	}
	if err := CheckIssueNumber(number); err != nil {
		return c.unknown(fmt.Errorf("find comment: %w", err))
	}
	ours, err := c.oursFunc(ctx)
	if err != nil {
		return c.unknown(fmt.Errorf("find comment: %w", err))
	}
	since = c.onGitHub(since) // since= filters on GitHub's clock
	var best *github.IssueComment
	err = c.newRun().pages(ctx, func(ctx context.Context, page int) (*github.Response, error) {
		opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{Page: page, PerPage: 100}}
		if !since.IsZero() {
			opts.Since = &since
		}
		cs, resp, err := c.gh.Issues.ListComments(ctx, r.Owner, r.Name, number, opts)
		best = oldestOurs(append(cs, best), (*github.IssueComment).GetUser, ours, key)
		return resp, err
	})
	switch {
	case notFound(err):
		return Result{State: Absent}
	case err != nil:
		return c.unknown(fmt.Errorf("list comments of %s#%d: %w", r, number, err))
	case best == nil:
		return Result{State: Absent}
	}
	return Result{State: Found, Artifact: commentArtifact(best)}
}

// CreateComment comments on issue or pull request number with body, its
// first line key's marker.
//
// POST /repos/{o}/{r}/issues/{number}/comments is not idempotent (GitHub
// has no uniqueness for comments) and is never retried once it may have
// been sent. A body too long once the marker is added or an invalid key is
// refused before sending (ClassRefused); so is a 404 for a missing issue.
//
// GitHub API docs: https://docs.github.com/rest/issues/comments#create-an-issue-comment
func (c *Client) CreateComment(ctx context.Context, r Repo, number int, key, body string) (Artifact, error) {
	if _, err := checkCreate(key, body, nil); err != nil {
		return Artifact{}, c.createErr(ClassRefused, fmt.Errorf("create comment: %w", err))
	}
	if err := CheckIssueNumber(number); err != nil {
		return Artifact{}, c.createErr(ClassRefused, fmt.Errorf("create comment: %w", err))
	}
	cm, class, err := send(ctx, c.newRun(), createOnce, func(ctx context.Context) (*github.IssueComment, *github.Response, error) {
		return c.gh.Issues.CreateComment(ctx, r.Owner, r.Name, number, &github.IssueComment{
			Body: github.String(taskkey.WithMarker(key, body)),
		})
	})
	if err != nil {
		return Artifact{}, c.createErr(class, issueRefused(err, r, number, fmt.Sprintf("create comment on %s#%d", r, number)))
	}
	return commentArtifact(cm), nil
}

func commentArtifact(cm *github.IssueComment) Artifact {
	return Artifact{ID: cm.GetID(), URL: cm.GetHTMLURL(), Author: cm.GetUser().GetLogin(), Body: cm.GetBody(), Created: cm.GetCreatedAt().Time}
}

// CheckIssueNumber refuses the issue or pull request number FindComment and
// CreateComment would refuse before sending anything: zero or negative.
func CheckIssueNumber(number int) error {
	if number <= 0 {
		return fmt.Errorf("invalid issue or pull request number %d", number)
	}
	return nil
}
