package ghcheck

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/google/go-github/v66/github"
)

// The reads `ghonce audit` makes of one artifact before it groups it and
// again right before it closes or deletes it: what people did to it,
// whatever its age, and the artifact as it is now.

// Event is one item of an issue's or pull request's timeline, as
// GET .../issues/{n}/timeline reports it.
type Event struct {
	// Kind is GitHub's event name: commented, labeled, cross-referenced,
	// reviewed, ...
	Kind string
	// Actor is who did it: a comment's or a review's author, who added a
	// label, who wrote the reference.
	Actor string
	// Label is a labeled event's label.
	Label string
	// Created is when it happened.
	Created time.Time
	// Source is a cross-referenced event's issue or pull request, and
	// SourcePR whether it is a pull request, SourceAuthor its author.
	Source       int
	SourcePR     bool
	SourceAuthor string
}

// Timeline lists every event of issue or pull request number, oldest
// first, whatever its age: GET /repos/{o}/{r}/issues/{n}/timeline, every
// page. A 404 (no such issue) is an error.
//
// GitHub API docs: https://docs.github.com/rest/issues/timeline#list-timeline-events-for-an-issue
func (c *Client) Timeline(ctx context.Context, r Repo, number int) ([]Event, error) {
	var out []Event
	err := c.newRun().pages(ctx, func(ctx context.Context, page int) (*github.Response, error) {
		evs, resp, err := c.gh.Issues.ListIssueTimeline(ctx, r.Owner, r.Name, number, &github.ListOptions{Page: page, PerPage: 100})
		if err == nil {
			for _, ev := range evs {
				e := Event{Kind: ev.GetEvent(), Actor: ev.GetActor().GetLogin(), Label: ev.GetLabel().GetName(), Created: ev.GetCreatedAt().Time}
				if e.Actor == "" {
					e.Actor = ev.GetUser().GetLogin() // reviewed events name the user only
				}
				if src := ev.GetSource(); src != nil && src.Issue != nil {
					e.Source, e.SourcePR, e.SourceAuthor = src.Issue.GetNumber(), src.Issue.IsPullRequest(), src.Issue.GetUser().GetLogin()
				}
				out = append(out, e)
			}
		}
		return resp, err
	})
	if err != nil {
		return nil, c.redact(fmt.Errorf("list timeline of %s#%d: %w", r, number, err))
	}
	return out, nil
}

// Reactors lists who reacted to issue or pull request number, or to
// comment commentID when it is not 0: GET
// /repos/{o}/{r}/issues/{n}/reactions or
// /repos/{o}/{r}/issues/comments/{id}/reactions, every page.
//
// GitHub API docs: https://docs.github.com/rest/reactions/reactions#list-reactions-for-an-issue
// and https://docs.github.com/rest/reactions/reactions#list-reactions-for-an-issue-comment
func (c *Client) Reactors(ctx context.Context, r Repo, number int, commentID int64) ([]string, error) {
	var out []string
	err := c.newRun().pages(ctx, func(ctx context.Context, page int) (*github.Response, error) {
		opts := &github.ListOptions{Page: page, PerPage: 100}
		var rs []*github.Reaction
		var resp *github.Response
		var err error
		if commentID != 0 {
			rs, resp, err = c.gh.Reactions.ListIssueCommentReactions(ctx, r.Owner, r.Name, commentID, opts)
		} else {
			rs, resp, err = c.gh.Reactions.ListIssueReactions(ctx, r.Owner, r.Name, number, opts)
		}
		for _, x := range rs {
			out = append(out, x.GetUser().GetLogin())
		}
		return resp, err
	})
	if err != nil {
		return nil, c.redact(fmt.Errorf("list reactions on %s#%d: %w", r, number, err))
	}
	return out, nil
}

// Reread reads one issue (GET /repos/{o}/{r}/issues/{n}), pull request
// (GET .../pulls/{n}) or comment (GET .../issues/comments/{id}, when id is
// not 0) as it is now, in a listing's shape; found is false on a 404 (it
// was deleted, or moved where this token cannot see it).
//
// GitHub API docs: https://docs.github.com/rest/issues/issues#get-an-issue,
// https://docs.github.com/rest/pulls/pulls#get-a-pull-request and
// https://docs.github.com/rest/issues/comments#get-an-issue-comment
func (c *Client) Reread(ctx context.Context, r Repo, number int, pr bool, id int64) (l Listed, found bool, err error) {
	err = c.newRun().read(ctx, func(ctx context.Context) (*github.Response, error) {
		switch {
		case id != 0:
			cm, resp, err := c.gh.Issues.GetComment(ctx, r.Owner, r.Name, id)
			if err == nil {
				l = listedComment(cm)
			}
			return resp, err
		case pr:
			p, resp, err := c.gh.PullRequests.Get(ctx, r.Owner, r.Name, number)
			if err == nil {
				l = listedPR(p)
			}
			return resp, err
		}
		is, resp, err := c.gh.Issues.Get(ctx, r.Owner, r.Name, number)
		if err == nil {
			l = listedIssue(is)
		}
		return resp, err
	})
	if httpStatus(err) == http.StatusNotFound {
		return Listed{}, false, nil
	}
	if err != nil {
		return Listed{}, false, c.redact(fmt.Errorf("read %s#%d again: %w", r, number, err))
	}
	return l, true, nil
}
