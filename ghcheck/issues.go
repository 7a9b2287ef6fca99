package ghcheck

import (
	"context"
	"fmt"
	"sync"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/taskkey"
)

// FindIssue looks for our issue for key: GET
// /repos/{o}/{r}/issues?labels=LABEL&state=all&per_page=100, every page.
// The list is consistent right after a write (search is not), and a label
// that does not exist yet answers an empty list: absence is proved by a
// read, never by writing. The issues API returns pull requests too: items
// with pull_request are skipped. An issue counts only if its author is ours
// and the first line of its body is key's marker; a label anyone can add
// proves nothing alone. The token's identity is read (when it is not
// cached) while the list is: one round trip for both.
//
// Found: the oldest such issue, open or closed. Absent: none, or the
// repository does not exist for this token (404; the create then fails
// too). Unknown: a read failed.
//
// GitHub API docs: https://docs.github.com/rest/issues/issues#list-repository-issues
func (c *Client) FindIssue(ctx context.Context, r Repo, q IssueQuery) Result {
	key := q.Key
	if err := checkKey(key); err != nil {
		return c.unknown(fmt.Errorf("find issue: %w", err))
	}
	label := taskkey.Label(key)
	var ours func(string) bool
	var oursErr, err error
	var issues []*github.Issue
	together(
		func() { ours, oursErr = c.oursFunc(ctx) },
		func() { issues, err = c.allByLabel(ctx, r, label) },
	)
	switch {
	case oursErr != nil:
		return c.unknown(fmt.Errorf("find issue: %w", oursErr))
	case notFound(err):
		return Result{State: Absent}
	case err != nil:
		return c.unknown(fmt.Errorf("list issues of %s labeled %s: %w", r, label, err))
	}
	var best *github.Issue
	for _, is := range issues {
		if !is.IsPullRequest() && ours(is.GetUser().GetLogin()) && taskkey.HasMarker(is.GetBody(), key) &&
			(best == nil || is.GetNumber() < best.GetNumber()) {
			best = is
		}
	}
	if best == nil {
		return Result{State: Absent}
	}
	return Result{State: Found, Artifact: issueArtifact(best)}
}

// allByLabel reads every page of GET
// /repos/{o}/{r}/issues?labels=L&state=all, in a run of its own (safe
// beside other look-ups).
func (c *Client) allByLabel(ctx context.Context, r Repo, label string) ([]*github.Issue, error) {
	return every(ctx, c.newRun(), func(ctx context.Context, opts github.ListOptions) ([]*github.Issue, *github.Response, error) {
		return c.gh.Issues.ListByRepo(ctx, r.Owner, r.Name, &github.IssueListByRepoOptions{State: "all", Labels: []string{label}, ListOptions: opts})
	})
}

// together runs fns concurrently and returns when all have: look-ups that
// do not depend on each other cost one round trip, not one each. Each fn
// writes only its own results.
func together(fns ...func()) {
	var wg sync.WaitGroup
	for _, fn := range fns[1:] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn()
		}()
	}
	fns[0]()
	wg.Wait()
}

// CreateIssue files an issue whose body starts with key's marker, labeled
// with the key's label and p.Labels in the same request: one
// content-creating request. GitHub creates a label that does not exist yet
// (the key's label on a first create) as it applies it.
//
// POST /repos/{o}/{r}/issues is not idempotent (GitHub has no uniqueness
// for issues) and is never retried once it may have been sent. A body too
// long once the marker is added, an invalid key or label is refused before
// sending (ClassRefused).
//
// GitHub silently drops labels when the token may not set them; the issue
// then cannot be found by label again and Artifact.Warning says so.
//
// GitHub API docs: https://docs.github.com/rest/issues/issues#create-an-issue
func (c *Client) CreateIssue(ctx context.Context, r Repo, key string, p NewIssue) (Artifact, error) {
	labels, err := checkCreate(key, p.Body, p.Labels)
	if err != nil {
		return Artifact{}, c.createErr(ClassRefused, fmt.Errorf("create issue: %w", err))
	}
	is, class, err := send(ctx, c.newRun(), createOnce, func(ctx context.Context) (*github.Issue, *github.Response, error) {
		return c.gh.Issues.Create(ctx, r.Owner, r.Name, &github.IssueRequest{
			Title:  github.String(p.Title),
			Body:   github.String(taskkey.WithMarker(key, p.Body)),
			Labels: &labels,
		})
	})
	if err != nil {
		return Artifact{}, c.createErr(class, issueRefused(err, r, 0, "create issue in "+r.String()))
	}
	a := issueArtifact(is)
	if !hasLabel(is.Labels, taskkey.Label(key)) {
		a.Warning = fmt.Sprintf("create issue: GitHub did not apply label %s (the token may lack triage access): "+
			"the issue #%d exists, but ghonce cannot find it on GitHub again; only the ledger records it", taskkey.Label(key), a.Number)
	}
	return a, nil
}

func issueArtifact(is *github.Issue) Artifact {
	return Artifact{
		Number: is.GetNumber(),
		URL:    is.GetHTMLURL(),
		Author: is.GetUser().GetLogin(),
		State:  is.GetState(),
		Title:  is.GetTitle(),
		Body:   is.GetBody(),
		// Created: when it was made, for a run that must say so.
		Created: is.GetCreatedAt().Time,
	}
}
