package ghcheck

import (
	"context"
	"fmt"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/taskkey"
)

// The edits below bring an artifact ghonce made in line with a later run's
// description (--on-change update). Each PATCH sets fields to given values,
// so it is idempotent and retried like a read; the body keeps key's marker
// on its first line, so the artifact is found again by it.

// UpdatePR sets pull request number's title and body.
//
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#update-a-pull-request
func (c *Client) UpdatePR(ctx context.Context, r Repo, number int, key, title, body string) (Artifact, error) {
	if _, err := checkCreate(key, body, nil); err != nil {
		return Artifact{}, fmt.Errorf("update pull request #%d: %w", number, err)
	}
	pr, err := get(ctx, c.newRun(), func(ctx context.Context) (*github.PullRequest, *github.Response, error) {
		return c.gh.PullRequests.Edit(ctx, r.Owner, r.Name, number, &github.PullRequest{
			Title: github.String(title), Body: github.String(taskkey.WithMarker(key, body)),
		})
	})
	if err != nil {
		return Artifact{}, c.redact(issueRefused(err, r, number, fmt.Sprintf("update pull request %s#%d", r, number)))
	}
	return prArtifact(pr), nil
}

// UpdateIssue sets issue number's title and body.
//
// GitHub API docs: https://docs.github.com/rest/issues/issues#update-an-issue
func (c *Client) UpdateIssue(ctx context.Context, r Repo, number int, key, title, body string) (Artifact, error) {
	if _, err := checkCreate(key, body, nil); err != nil {
		return Artifact{}, fmt.Errorf("update issue #%d: %w", number, err)
	}
	is, err := get(ctx, c.newRun(), func(ctx context.Context) (*github.Issue, *github.Response, error) {
		return c.gh.Issues.Edit(ctx, r.Owner, r.Name, number, &github.IssueRequest{
			Title: github.String(title), Body: github.String(taskkey.WithMarker(key, body)),
		})
	})
	if err != nil {
		return Artifact{}, c.redact(issueRefused(err, r, number, fmt.Sprintf("update issue %s#%d", r, number)))
	}
	return issueArtifact(is), nil
}

// UpdateComment sets comment id's body.
//
// GitHub API docs: https://docs.github.com/rest/issues/comments#update-an-issue-comment
func (c *Client) UpdateComment(ctx context.Context, r Repo, id int64, key, body string) (Artifact, error) {
	if _, err := checkCreate(key, body, nil); err != nil {
		return Artifact{}, fmt.Errorf("update comment %d: %w", id, err)
	}
	cm, err := get(ctx, c.newRun(), func(ctx context.Context) (*github.IssueComment, *github.Response, error) {
		return c.gh.Issues.EditComment(ctx, r.Owner, r.Name, id, &github.IssueComment{Body: github.String(taskkey.WithMarker(key, body))})
	})
	if err != nil {
		return Artifact{}, c.redact(worded(err, fmt.Sprintf("update comment %d in %s", id, r), ""))
	}
	return commentArtifact(cm), nil
}
