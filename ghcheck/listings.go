package ghcheck

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/go-github/v66/github"
)

// The repository-wide listings that `ghonce audit` reads. Each is a
// consistent list endpoint (never search, which lags and caps at 1,000),
// read 100 items a page, every page, by the Link header. They only read.

// Listed is one issue, pull request or comment as a listing shows it.
type Listed struct {
	Number      int    // issue or PR number; for a comment, its thread's
	ID          int64  // a comment's id; an issue's or PR's node-independent id
	Title, Body string // Title is empty for a comment
	Author      string
	URL         string // html_url
	State       string // open or closed; empty for a comment
	StateReason string
	Labels      []string
	Created     time.Time
	Updated     time.Time
	// Reactions is the reactions' total_count that every listing carries.
	Reactions int
	// Comments is an issue's or PR's comment count (the listing's own).
	Comments int
	IsPR     bool // an issues-API item with a pull_request key

	// Pull requests only (the prs listing).
	Base, Head, HeadOwner, HeadSHA string
	Merged                         bool

	// Position is an inline comment's place (the review_comments
	// listing): its target ("RIGHT:12:path"; "reply:ID" for a reply).
	Position string
}

// Commit is what GetCommitInfo reads of a commit.
type Commit struct {
	SHA, Tree string
	// Author is the login GitHub linked to the commit's author (empty when
	// the commit's e-mail belongs to no account); Committer likewise.
	Author, Committer string
	Date              time.Time
}

// Review is one pull request review.
type Review struct {
	ID     int64
	Author string
	State  string // PENDING (listed to its author only), APPROVED, ...
	Body   string
	URL    string
	// Submitted is when it was submitted; zero while pending.
	Submitted time.Time
}

// listIssues lists every issue and pull request updated at or after
// since (zero: all), oldest first: GET
// /repos/{o}/{r}/issues?state=all&since=…&sort=created&direction=asc&per_page=100,
// every page. Pull requests come back too, with IsPR set (the pull_request
// key); their PR-only fields are left empty (see listPullsSince).
//
// GitHub API docs: https://docs.github.com/rest/issues/issues#list-repository-issues
func listIssues(ctx context.Context, l *Lists) ([]Listed, error) {
	var out []Listed
	err := l.c.issuePages(ctx, l.c.newRun(), l.repo, l.since, "", func(items []*github.Issue) {
		for _, is := range items {
			out = append(out, listedIssue(is))
		}
		l.tell(issuesAndPulls, len(out))
	})
	if err != nil {
		return nil, l.c.redact(fmt.Errorf("list issues of %s: %w", l.repo, err))
	}
	return out, nil
}

// issuePages reads every page of GET
// /repos/{o}/{r}/issues?state=all&since=…&creator=…&sort=created&direction=asc&per_page=100
// (since and creator only when set), handing each page to fn.
func (c *Client) issuePages(ctx context.Context, rn *run, r Repo, since time.Time, creator string, fn func([]*github.Issue)) error {
	return rn.pages(ctx, func(ctx context.Context, page int) (*github.Response, error) {
		opts := &github.IssueListByRepoOptions{State: "all", Creator: creator, Sort: "created", Direction: "asc", ListOptions: github.ListOptions{Page: page, PerPage: 100}}
		if !since.IsZero() {
			opts.Since = since
		}
		items, resp, err := c.gh.Issues.ListByRepo(ctx, r.Owner, r.Name, opts)
		if err == nil {
			fn(items)
		}
		return resp, err
	})
}

// listPullsSince lists every pull request updated at or after since (zero:
// all), newest update first: GET
// /repos/{o}/{r}/pulls?state=all&sort=updated&direction=desc&per_page=100,
// stopping at the first page that reaches back before since (the pulls
// list has no since filter; sorted by update, nothing later can be newer).
// Their reactions are the issues listing's, which counts them.
//
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#list-pull-requests
func listPullsSince(ctx context.Context, l *Lists) ([]Listed, error) {
	issues, err := l.Get(ctx, issuesAndPulls)
	if err != nil {
		return nil, err
	}
	reactions := map[int]int{}
	for _, it := range issues {
		reactions[it.Number] = it.Reactions
	}
	var out []Listed
	done := false
	err = l.c.newRun().pages(ctx, func(ctx context.Context, page int) (*github.Response, error) {
		if done {
			return nil, nil
		}
		opts := &github.PullRequestListOptions{State: "all", Sort: "updated", Direction: "desc", ListOptions: github.ListOptions{Page: page, PerPage: 100}}
		prs, resp, err := l.c.gh.PullRequests.List(ctx, l.repo.Owner, l.repo.Name, opts)
		if err != nil {
			return resp, err
		}
		for _, pr := range prs {
			if !l.since.IsZero() && pr.GetUpdatedAt().Time.Before(l.since) {
				done = true
				break
			}
			out = append(out, listedPR(pr))
			out[len(out)-1].Reactions = reactions[pr.GetNumber()]
		}
		l.tell("pull requests", len(out))
		// Done: the next call returns no response, which ends the paging
		// without a request.
		return resp, nil
	})
	if err != nil {
		return nil, l.c.redact(fmt.Errorf("list pull requests of %s: %w", l.repo, err))
	}
	return out, nil
}

// listComments lists every issue and pull request comment updated at or
// after since (zero: all), repository-wide in one listing
// (not one per thread): GET
// /repos/{o}/{r}/issues/comments?since=…&sort=created&direction=asc&per_page=100,
// every page. Number is the comment's thread, read from its issue_url.
//
// GitHub API docs: https://docs.github.com/rest/issues/comments#list-issue-comments-for-a-repository
func listComments(ctx context.Context, l *Lists) ([]Listed, error) {
	var out []Listed
	err := l.c.repoCommentPages(ctx, l.c.newRun(), l.repo, l.since, func(cs []*github.IssueComment) {
		for _, cm := range cs {
			out = append(out, listedComment(cm))
		}
		l.tell("comments", len(out))
	})
	if err != nil {
		return nil, l.c.redact(fmt.Errorf("list comments of %s: %w", l.repo, err))
	}
	return out, nil
}

// repoCommentPages reads every page of GET
// /repos/{o}/{r}/issues/comments?since=…&sort=created&direction=asc&per_page=100
// (since only when set), handing each page to fn. Number 0 is how
// go-github names the repository-wide listing.
func (c *Client) repoCommentPages(ctx context.Context, rn *run, r Repo, since time.Time, fn func([]*github.IssueComment)) error {
	return rn.pages(ctx, func(ctx context.Context, page int) (*github.Response, error) {
		opts := &github.IssueListCommentsOptions{Sort: github.String("created"), Direction: github.String("asc"), ListOptions: github.ListOptions{Page: page, PerPage: 100}}
		if !since.IsZero() {
			opts.Since = &since
		}
		cs, resp, err := c.gh.Issues.ListComments(ctx, r.Owner, r.Name, 0, opts)
		if err == nil {
			fn(cs)
		}
		return resp, err
	})
}

// DefaultBranch returns r's default branch: GET /repos/{o}/{r}.
//
// GitHub API docs: https://docs.github.com/rest/repos/repos#get-a-repository
func (c *Client) DefaultBranch(ctx context.Context, r Repo) (string, error) {
	rp, err := get(ctx, c.newRun(), func(ctx context.Context) (*github.Repository, *github.Response, error) {
		return c.gh.Repositories.Get(ctx, r.Owner, r.Name)
	})
	if err != nil {
		return "", c.redact(fmt.Errorf("read repository %s: %w", r, err))
	}
	return rp.GetDefaultBranch(), nil
}

// GetCommitInfo reads commit sha of r: its tree and the login of its
// author. GET /repos/{o}/{r}/commits/{sha}. A commit GitHub no longer has
// (404, 422) answers with Tree and Author empty and no error.
//
// GitHub API docs: https://docs.github.com/rest/commits/commits#get-a-commit
func (c *Client) GetCommitInfo(ctx context.Context, r Repo, sha string) (Commit, error) {
	rc, err := get(ctx, c.newRun(), func(ctx context.Context) (*github.RepositoryCommit, *github.Response, error) {
		return c.gh.Repositories.GetCommit(ctx, r.Owner, r.Name, sha, &github.ListOptions{PerPage: 1})
	})
	if st := httpStatus(err); st == http.StatusNotFound || st == http.StatusUnprocessableEntity {
		return Commit{SHA: sha}, nil
	}
	if err != nil {
		return Commit{}, c.redact(fmt.Errorf("read commit %s of %s: %w", sha, r, err))
	}
	return Commit{
		SHA:    strings.ToLower(rc.GetSHA()),
		Tree:   strings.ToLower(rc.GetCommit().GetTree().GetSHA()),
		Author: rc.GetAuthor().GetLogin(),
		Date:   rc.GetCommit().GetAuthor().GetDate().Time,
	}, nil
}

// PullCommits lists the commits of pull request number, oldest first,
// each with its author's and committer's logins: GET
// /repos/{o}/{r}/pulls/{n}/commits, every page. GitHub lists at most 250.
//
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#list-commits-on-a-pull-request
func (c *Client) PullCommits(ctx context.Context, r Repo, number int) ([]Commit, error) {
	var out []Commit
	err := c.newRun().pages(ctx, func(ctx context.Context, page int) (*github.Response, error) {
		cs, resp, err := c.gh.PullRequests.ListCommits(ctx, r.Owner, r.Name, number, &github.ListOptions{Page: page, PerPage: 100})
		for _, rc := range cs {
			out = append(out, Commit{SHA: strings.ToLower(rc.GetSHA()), Author: rc.GetAuthor().GetLogin(), Committer: rc.GetCommitter().GetLogin()})
		}
		return resp, err
	})
	if err != nil {
		return nil, c.redact(fmt.Errorf("list commits of %s#%d: %w", r, number, err))
	}
	return out, nil
}

// ListReviews lists the reviews of pull request number: GET
// /repos/{o}/{r}/pulls/{number}/reviews, every page. A 404 (no such pull
// request) is an empty list.
//
// GitHub API docs: https://docs.github.com/rest/pulls/reviews#list-reviews-for-a-pull-request
func (c *Client) ListReviews(ctx context.Context, r Repo, number int) ([]Review, error) {
	var out []Review
	err := c.newRun().pages(ctx, func(ctx context.Context, page int) (*github.Response, error) {
		rs, resp, err := c.gh.PullRequests.ListReviews(ctx, r.Owner, r.Name, number, &github.ListOptions{Page: page, PerPage: 100})
		if err == nil {
			for _, rv := range rs {
				out = append(out, listedReview(rv))
			}
		}
		return resp, err
	})
	if httpStatus(err) == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, c.redact(fmt.Errorf("list reviews of %s#%d: %w", r, number, err))
	}
	return out, nil
}

func listedReview(rv *github.PullRequestReview) Review {
	return Review{ID: rv.GetID(), Author: rv.GetUser().GetLogin(), State: rv.GetState(), Body: rv.GetBody(), URL: rv.GetHTMLURL(), Submitted: rv.GetSubmittedAt().Time}
}

func labelNames(ls []*github.Label) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.GetName())
	}
	return out
}

func listedIssue(is *github.Issue) Listed {
	return Listed{
		Number: is.GetNumber(), ID: is.GetID(), Title: is.GetTitle(), Body: is.GetBody(),
		Author: is.GetUser().GetLogin(), URL: is.GetHTMLURL(), State: is.GetState(), StateReason: is.GetStateReason(),
		Labels: labelNames(is.Labels), Created: is.GetCreatedAt().Time, Updated: is.GetUpdatedAt().Time,
		Reactions: is.GetReactions().GetTotalCount(), Comments: is.GetComments(), IsPR: is.IsPullRequest(),
	}
}

func listedPR(pr *github.PullRequest) Listed {
	return Listed{
		Number: pr.GetNumber(), ID: pr.GetID(), Title: pr.GetTitle(), Body: pr.GetBody(),
		Author: pr.GetUser().GetLogin(), URL: pr.GetHTMLURL(), State: pr.GetState(),
		Labels: labelNames(pr.Labels), Created: pr.GetCreatedAt().Time, Updated: pr.GetUpdatedAt().Time,
		IsPR: true, Base: pr.GetBase().GetRef(), Head: pr.GetHead().GetRef(),
		HeadOwner: pr.GetHead().GetUser().GetLogin(), HeadSHA: strings.ToLower(pr.GetHead().GetSHA()),
		Merged: pr.MergedAt != nil,
	}
}

func listedComment(cm *github.IssueComment) Listed {
	return Listed{
		Number: issueNumberOf(cm.GetIssueURL()), ID: cm.GetID(), Body: cm.GetBody(),
		Author: cm.GetUser().GetLogin(), URL: cm.GetHTMLURL(),
		Created: cm.GetCreatedAt().Time, Updated: cm.GetUpdatedAt().Time,
		Reactions: cm.GetReactions().GetTotalCount(),
	}
}

// PullsForHead returns the numbers of every pull request, open or closed,
// whose head is branch of r's owner: GET
// /repos/{o}/{r}/pulls?head=OWNER:BRANCH&state=all, every page (head as
// owner:branch, the only form GitHub filters on).
//
// GitHub API docs: https://docs.github.com/rest/pulls/pulls#list-pull-requests
func (c *Client) PullsForHead(ctx context.Context, r Repo, branch string) ([]int, error) {
	prs, err := c.allByHead(ctx, r, head{owner: r.Owner, branch: branch})
	if err != nil {
		return nil, c.redact(fmt.Errorf("list pull requests of %s with head %s: %w", r, branch, err))
	}
	var out []int
	for _, pr := range prs {
		// The filter is trusted only as far as it goes: a head it did not
		// apply would bring every PR back.
		if strings.EqualFold(pr.GetHead().GetUser().GetLogin(), r.Owner) && pr.GetHead().GetRef() == branch {
			out = append(out, pr.GetNumber())
		}
	}
	return out, nil
}

// RunAttempt is when one attempt of a GitHub Actions run ran.
type RunAttempt struct {
	Started time.Time // run_started_at
	Ended   time.Time // updated_at: when it ended, once it has
}

// RunAttempt reads attempt n of the Actions run id of r. A job's
// GITHUB_TOKEN needs `actions: read` for it; without, GitHub answers 403 or
// 404 and the error says so.
//
// GitHub API docs: https://docs.github.com/rest/actions/workflow-runs#get-a-workflow-run-attempt
func (c *Client) RunAttempt(ctx context.Context, r Repo, id int64, n int) (RunAttempt, error) {
	run, err := get(ctx, c.newRun(), func(ctx context.Context) (*github.WorkflowRun, *github.Response, error) {
		return c.gh.Actions.GetWorkflowRunAttempt(ctx, r.Owner, r.Name, id, n, nil)
	})
	if err != nil {
		return RunAttempt{}, c.redact(fmt.Errorf("read attempt %d of Actions run %d in %s (the job needs actions: read): %w", n, id, r, err))
	}
	return RunAttempt{Started: run.GetRunStartedAt().Time, Ended: run.GetUpdatedAt().Time}, nil
}

// Lists reads the listings of one audit of a repository, each once, by
// the names the kinds' audits give (effect.Audit.Listing): a listing
// another builds on (a pull request's reactions come from the issues
// listing) is read once for both.
type Lists struct {
	c        *Client
	repo     Repo
	since    time.Time
	progress func(what string, n int)
	read     map[string][]Listed
}

// listings are the audit's listings by name, each added from the file of
// the API it reads; one may build on others (l.Get).
var listings = map[string]func(ctx context.Context, l *Lists) ([]Listed, error){}

func init() {
	listings[issuesAndPulls], listings["prs"], listings["comments"] = listIssues, listPullsSince, listComments
	listings["issues"] = func(ctx context.Context, l *Lists) ([]Listed, error) {
		all, err := l.Get(ctx, issuesAndPulls)
		return slices.DeleteFunc(slices.Clone(all), func(it Listed) bool { return it.IsPR }), err
	}
}

// Lists starts the listings of one audit of r, of what was updated at or
// after since (zero: all); progress, if set, is told how far each is read.
func (c *Client) Lists(r Repo, since time.Time, progress func(what string, n int)) *Lists {
	return &Lists{c: c, repo: r, since: since, progress: progress, read: map[string][]Listed{}}
}

// Get returns the listing called name, read on its first call.
func (l *Lists) Get(ctx context.Context, name string) ([]Listed, error) {
	if got, ok := l.read[name]; ok {
		return got, nil
	}
	list, ok := listings[name]
	if !ok {
		return nil, fmt.Errorf("list %s: no such listing in this build of ghonce", name)
	}
	got, err := list(ctx, l)
	if err != nil {
		return nil, err
	}
	l.read[name] = got
	return got, nil
}

// tell tells progress how many items of the listing of what are read.
func (l *Lists) tell(what string, n int) {
	if l.progress != nil {
		l.progress(what, n)
	}
}

// issuesAndPulls is the issues listing, pull requests included.
const issuesAndPulls = "issues and pull requests"
