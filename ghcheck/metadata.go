package ghcheck

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-github/v66/github"
)

// Metadata is what gh's --assignee, --reviewer and --milestone ask for on a
// new issue or pull request. None of it makes an artifact: each is a
// property set on one that exists, so applying it again changes nothing,
// and it can follow a create that a crash interrupted.
type Metadata struct {
	// Assignees are logins; "@me" is the token's own.
	Assignees []string
	// Reviewers are logins ("@me" too) or ORG/TEAM; pull requests only.
	Reviewers []string
	// Milestone is a milestone's title or number; "" leaves it as it is.
	Milestone string
}

// Empty reports whether m asks for nothing.
func (m Metadata) Empty() bool {
	return len(m.Assignees) == 0 && len(m.Reviewers) == 0 && m.Milestone == ""
}

// ApplyMetadata brings issue or pull request number of r in line with m,
// sending only what is missing, so a rerun after a crash finishes what the
// first run began and one that finds everything in place writes nothing:
//
//   - assignees: GET /repos/{o}/{r}/issues/{n}, then POST
//     .../issues/{n}/assignees with the logins not assigned yet. GitHub
//     answers 201 even for a login it cannot assign, and drops it; the
//     answer's assignees are checked, and a dropped login is an error.
//   - reviewers (isPR): GET .../pulls/{n}/requested_reviewers and the
//     reviews, then POST .../pulls/{n}/requested_reviewers with the users
//     and teams neither requested nor (users) already reviewing.
//   - milestone: GET .../milestones?state=all, every page (a consistent
//     list), to find it by title (without case), else by number; then
//     PATCH .../issues/{n} only if the issue has another.
//
// Each part is tried even when another fails; the error joins their
// failures, each saying what failed and what to do. Every request sets a
// value or adds to a set, so it is retried like a read.
//
// GitHub API docs: https://docs.github.com/rest/issues/assignees#add-assignees-to-an-issue,
// https://docs.github.com/rest/pulls/review-requests#request-reviewers-for-a-pull-request,
// https://docs.github.com/rest/issues/milestones#list-milestones
func (c *Client) ApplyMetadata(ctx context.Context, r Repo, number int, isPR bool, m Metadata) error {
	if m.Empty() {
		return nil
	}
	what := "issue"
	if isPR {
		what = "pull request"
	}
	is, err := c.getIssue(ctx, r, number)
	if err != nil {
		return c.redact(issueRefused(err, r, number, fmt.Sprintf("read %s %s#%d to add its assignees, reviewers and milestone", what, r, number)))
	}
	var errs []error
	if len(m.Assignees) > 0 {
		errs = append(errs, c.addAssignees(ctx, r, is, m.Assignees))
	}
	if len(m.Reviewers) > 0 && isPR {
		errs = append(errs, c.requestReviewers(ctx, r, number, m.Reviewers))
	}
	if m.Milestone != "" {
		errs = append(errs, c.setMilestone(ctx, r, is, m.Milestone))
	}
	return errors.Join(errs...)
}

// me replaces "@me" in logins with the token's login.
func (c *Client) me(ctx context.Context, logins []string) ([]string, error) {
	if !slices.Contains(logins, "@me") {
		return logins, nil
	}
	login, err := c.Login(ctx)
	if err != nil {
		return nil, err
	}
	if login == "" {
		return nil, errors.New(`"@me": this token cannot tell who it is (an installation token cannot read GET /user): name the login instead`)
	}
	out := make([]string, 0, len(logins))
	for _, l := range logins {
		if l == "@me" {
			l = login
		}
		out = append(out, l)
	}
	return out, nil
}

func hasFold(list []string, s string) bool {
	return slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, s) })
}

func (c *Client) addAssignees(ctx context.Context, r Repo, is *github.Issue, logins []string) error {
	n := is.GetNumber()
	logins, err := c.me(ctx, logins)
	if err != nil {
		return fmt.Errorf("assign %s#%d: %w", r, n, err)
	}
	var have, missing []string
	for _, u := range is.Assignees {
		have = append(have, u.GetLogin())
	}
	for _, l := range logins {
		if !hasFold(have, l) && !hasFold(missing, l) {
			missing = append(missing, l)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	did := fmt.Sprintf("assign %s to %s#%d", strings.Join(missing, ", "), r, n)
	var got *github.Issue
	err = c.newRun().read(ctx, func(ctx context.Context) (*github.Response, error) {
		var resp *github.Response
		var err error
		got, resp, err = c.gh.Issues.AddAssignees(ctx, r.Owner, r.Name, n, missing)
		return resp, err
	})
	if err != nil {
		return c.redact(worded(err, did, ""))
	}
	have = have[:0]
	for _, u := range got.Assignees {
		have = append(have, u.GetLogin())
	}
	var dropped []string
	for _, l := range missing {
		if !hasFold(have, l) {
			dropped = append(dropped, l)
		}
	}
	if len(dropped) > 0 {
		return fmt.Errorf("%s: GitHub did not assign %s: it drops, without an error, a login that is not a collaborator of %s (or one beyond 10 assignees, or any when the token cannot push there): check the login and its access", did, strings.Join(dropped, ", "), r)
	}
	return nil
}

func (c *Client) requestReviewers(ctx context.Context, r Repo, n int, reviewers []string) error {
	reviewers, err := c.me(ctx, reviewers)
	if err != nil {
		return fmt.Errorf("request reviews on %s#%d: %w", r, n, err)
	}
	var pending *github.Reviewers
	rn := c.newRun()
	err = rn.read(ctx, func(ctx context.Context) (*github.Response, error) {
		var resp *github.Response
		var err error
		pending, resp, err = c.gh.PullRequests.ListReviewers(ctx, r.Owner, r.Name, n, &github.ListOptions{PerPage: 100})
		return resp, err
	})
	if err != nil {
		return c.redact(issueRefused(err, r, n, fmt.Sprintf("read the review requests of %s#%d", r, n)))
	}
	var users, teams []string
	for _, u := range pending.Users {
		users = append(users, u.GetLogin())
	}
	for _, t := range pending.Teams {
		teams = append(teams, t.GetSlug())
	}
	var reviewed []string
	if slices.ContainsFunc(reviewers, func(s string) bool { return !strings.Contains(s, "/") }) {
		// A review answers its request, which then leaves the list: asking
		// again would ask that reviewer for another.
		rs, err := c.ListReviews(ctx, r, n)
		if err != nil {
			return err
		}
		for _, rv := range rs {
			reviewed = append(reviewed, rv.Author)
		}
	}
	var req github.ReviewersRequest
	for _, s := range reviewers {
		if _, slug, ok := strings.Cut(s, "/"); ok {
			if !hasFold(teams, slug) && !hasFold(req.TeamReviewers, slug) {
				req.TeamReviewers = append(req.TeamReviewers, slug)
			}
		} else if !hasFold(users, s) && !hasFold(reviewed, s) && !hasFold(req.Reviewers, s) {
			req.Reviewers = append(req.Reviewers, s)
		}
	}
	if len(req.Reviewers)+len(req.TeamReviewers) == 0 {
		return nil
	}
	did := fmt.Sprintf("request reviews from %s on %s#%d", strings.Join(slices.Concat(req.Reviewers, req.TeamReviewers), ", "), r, n)
	err = rn.read(ctx, func(ctx context.Context) (*github.Response, error) {
		_, resp, err := c.gh.PullRequests.RequestReviewers(ctx, r.Owner, r.Name, n, req)
		return resp, err
	})
	if err != nil {
		hint := ""
		if httpStatus(err) == http.StatusUnprocessableEntity {
			hint = fmt.Sprintf("each reviewer must be a collaborator of %s (a team: ORG/TEAM, with access to it), and not the pull request's author", r)
		}
		return c.redact(worded(err, did, hint))
	}
	return nil
}

func (c *Client) setMilestone(ctx context.Context, r Repo, is *github.Issue, want string) error {
	n := is.GetNumber()
	var byTitle, byNumber *github.Milestone
	num, numErr := strconv.Atoi(want)
	err := c.newRun().pages(ctx, func(ctx context.Context, page int) (*github.Response, error) {
		ms, resp, err := c.gh.Issues.ListMilestones(ctx, r.Owner, r.Name, &github.MilestoneListOptions{State: "all", ListOptions: github.ListOptions{Page: page, PerPage: 100}})
		for _, m := range ms {
			if byTitle == nil && strings.EqualFold(m.GetTitle(), want) {
				byTitle = m
			}
			if numErr == nil && m.GetNumber() == num {
				byNumber = m
			}
		}
		return resp, err
	})
	if err != nil {
		return c.redact(worded(err, fmt.Sprintf("list the milestones of %s", r), ""))
	}
	m := byTitle
	if m == nil {
		m = byNumber
	}
	if m == nil {
		return fmt.Errorf("set milestone %q on %s#%d: %s has no milestone with that title or number: create it, or check -m", want, r, n, r)
	}
	if is.GetMilestone().GetNumber() == m.GetNumber() {
		return nil
	}
	err = c.newRun().read(ctx, func(ctx context.Context) (*github.Response, error) {
		_, resp, err := c.gh.Issues.Edit(ctx, r.Owner, r.Name, n, &github.IssueRequest{Milestone: github.Int(m.GetNumber())})
		return resp, err
	})
	if err != nil {
		return c.redact(issueRefused(err, r, n, fmt.Sprintf("set milestone %q on %s#%d", m.GetTitle(), r, n)))
	}
	return nil
}
