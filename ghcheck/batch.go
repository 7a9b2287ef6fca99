package ghcheck

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/taskkey"
)

// LookupKind is what a Lookup looks for.
type LookupKind int

const (
	LookupPR LookupKind = iota + 1
	LookupIssue
	LookupComment
)

// Lookup is one artifact FindMany looks for: a pull request or issue
// whose body starts with Key's marker, or a comment with it on issue or
// pull request Number.
type Lookup struct {
	Kind   LookupKind
	Key    string
	Number int // LookupComment: the issue or pull request commented on
}

// FindMany answers many look-ups in one repository with a few listings
// instead of one look-up each, for reconciling entries whose attempts all
// began at or after since (the oldest entry's start, less clock skew):
//
//   - pull requests and issues: GET /repos/{o}/{r}/issues?state=all&since=S
//     (with creator=LOGIN when the token's login is the only identity that
//     counts), every page. The issues API returns pull requests too, told
//     apart by pull_request; merged_at comes with it.
//   - comments: GET /repos/{o}/{r}/issues/comments?since=S&sort=created,
//     every page (repository-wide).
//
// Both are consistent list endpoints, and since filters on updated_at:
// anything created at or after since is listed, so a complete listing
// proves absence. Each item counts only when its author is ours and its
// first line is a marker of a looked-up key (and, for a comment, it is on
// the right number). Results are in the order of ls: found (the oldest),
// absent, or unknown for every look-up of a listing that failed. A 404
// (no such repository for this token) is absent, as for FindIssue.
//
// GitHub API docs: https://docs.github.com/rest/issues/issues#list-repository-issues,
// https://docs.github.com/rest/issues/comments#list-issue-comments-for-a-repository
func (c *Client) FindMany(ctx context.Context, r Repo, since time.Time, ls []Lookup) []Result {
	out := make([]Result, len(ls))
	fail := func(kinds map[LookupKind]bool, err error) {
		for i, l := range ls {
			if kinds[l.Kind] {
				out[i] = c.unknown(err)
			}
		}
	}
	all := map[LookupKind]bool{LookupPR: true, LookupIssue: true, LookupComment: true}
	if since.IsZero() {
		fail(all, fmt.Errorf("find in %s: no start time to list from", r))
		return out
	}
	ours, err := c.oursFunc(ctx)
	if err != nil {
		fail(all, fmt.Errorf("find in %s: %w", r, err))
		return out
	}
	since = c.onGitHub(since) // since= filters on GitHub's clock
	byKey := map[string][]int{}
	need := map[LookupKind]bool{}
	for i, l := range ls {
		out[i] = Result{State: Absent}
		if err := checkKey(l.Key); err != nil {
			out[i] = c.unknown(fmt.Errorf("find in %s: %w", r, err))
			continue
		}
		byKey[l.Key] = append(byKey[l.Key], i)
		need[l.Kind] = true
	}
	// match records what an item proves for the look-ups of its key.
	match := func(body, author string, kind LookupKind, number int, id int64, art func() Artifact) {
		key, ok := taskkey.ParseMarker(body)
		if !ok || !ours(author) {
			return
		}
		for _, i := range byKey[key] {
			l := ls[i]
			if l.Kind != kind || kind == LookupComment && l.Number != number {
				continue
			}
			prev := out[i]
			older := kind == LookupComment && id < prev.Artifact.ID || kind != LookupComment && number < prev.Artifact.Number
			if prev.State != Found || older {
				out[i] = Result{State: Found, Artifact: art()}
			}
		}
	}
	rn := c.newRun()
	if need[LookupPR] || need[LookupIssue] {
		creator := ""
		if id, _ := c.Login(ctx); id != "" && len(c.opts.TrustedAuthors) == 0 {
			creator = id
		}
		err := c.issuePages(ctx, rn, r, since, creator, func(items []*github.Issue) {
			for _, is := range items {
				if is.IsPullRequest() {
					match(is.GetBody(), is.GetUser().GetLogin(), LookupPR, is.GetNumber(), 0, func() Artifact { return prFromIssue(is) })
				} else {
					match(is.GetBody(), is.GetUser().GetLogin(), LookupIssue, is.GetNumber(), 0, func() Artifact { return issueArtifact(is) })
				}
			}
		})
		if err != nil && !notFound(err) {
			fail(map[LookupKind]bool{LookupPR: true, LookupIssue: true}, fmt.Errorf("list issues and pull requests of %s updated since %s: %w", r, since.UTC().Format(time.RFC3339), err))
		}
	}
	if need[LookupComment] {
		err := c.repoCommentPages(ctx, rn, r, since, func(cs []*github.IssueComment) {
			for _, cm := range cs {
				match(cm.GetBody(), cm.GetUser().GetLogin(), LookupComment, issueNumberOf(cm.GetIssueURL()), cm.GetID(), func() Artifact { return commentArtifact(cm) })
			}
		})
		if err != nil && !notFound(err) {
			fail(map[LookupKind]bool{LookupComment: true}, fmt.Errorf("list comments of %s updated since %s: %w", r, since.UTC().Format(time.RFC3339), err))
		}
	}
	return out
}

// issueNumberOf reads N from a comment's issue_url (.../issues/N); 0 when
// it has none.
func issueNumberOf(u string) int {
	i := strings.LastIndex(u, "/issues/")
	if i < 0 {
		return 0
	}
	n, err := strconv.Atoi(u[i+len("/issues/"):])
	if err != nil {
		return 0
	}
	return n
}

// prFromIssue is a pull request's artifact from its issue representation.
func prFromIssue(is *github.Issue) Artifact {
	a := issueArtifact(is)
	if u := is.GetPullRequestLinks().GetHTMLURL(); u != "" {
		a.URL = u
	}
	if is.GetPullRequestLinks().MergedAt != nil {
		a.State = "merged"
	}
	for _, l := range is.Labels {
		a.Labels = append(a.Labels, l.GetName())
	}
	return a
}
