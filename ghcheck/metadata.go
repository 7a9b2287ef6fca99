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
	// Created says this run created the issue or pull request, so it has
	// none of these yet: ApplyMetadata then reads only what it must to
	// name them (the milestones), not what the artifact already has.
	Created bool
	// Milestones, if set, are the repository's milestones as ReadMilestones
	// read them (while the create was made, say): Milestone is named from
	// them, and they are not read again.
	Milestones *Milestones
}

// Milestones are a repository's milestones, every one, open and closed,
// as one listing read them (or why it could not).
type Milestones struct {
	list []*github.Milestone
	err  error
}

// ReadMilestones lists r's milestones, every page (GET
// /repos/{o}/{r}/milestones?state=all), for Metadata.Milestones. A
// listing that fails is kept as it is: ApplyMetadata reports it as its
// own listing's failure.
func (c *Client) ReadMilestones(ctx context.Context, r Repo) *Milestones {
	m := &Milestones{}
	err := c.newRun().pages(ctx, func(ctx context.Context, page int) (*github.Response, error) {
		ms, resp, err := c.gh.Issues.ListMilestones(ctx, r.Owner, r.Name, &github.MilestoneListOptions{State: "all", ListOptions: github.ListOptions{Page: page, PerPage: 100}})
		m.list = append(m.list, ms...)
		return resp, err
	})
	if err != nil {
		m.err = c.redact(worded(err, fmt.Sprintf("list the milestones of %s", r), ""))
	}
	return m
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
// Every read is made at once, then every write: two round trips, whatever
// m asks for. With m.Created (this run created number: GitHub's create
// assigned it nothing, requested no review and set no milestone; a
// review requested by CODEOWNERS is requested again, as gh does) only the
// milestones are read.
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
	reviews := len(m.Reviewers) > 0 && isPR
	var (
		is            = &github.Issue{Number: github.Int(number)}
		isErr         error
		asked         reviewState
		askedErr      error
		milestone     *github.Milestone
		milestoneErr  error
		reads, writes []func()
	)
	if !m.Created && (len(m.Assignees) > 0 || m.Milestone != "") {
		reads = append(reads, func() { is, isErr = c.getIssue(ctx, r, number) })
	}
	if reviews && !m.Created {
		reads = append(reads, func() { asked, askedErr = c.reviewState(ctx, r, number, m.Reviewers) })
	}
	if m.Milestone != "" {
		reads = append(reads, func() {
			ms := m.Milestones
			if ms == nil {
				ms = c.ReadMilestones(ctx, r)
			}
			milestone, milestoneErr = ms.find(r, number, m.Milestone)
		})
	}
	if len(reads) > 0 {
		together(reads...)
	}
	if isErr != nil {
		return c.redact(issueRefused(isErr, r, number, fmt.Sprintf("read %s %s#%d to add its assignees, reviewers and milestone", what, r, number)))
	}
	errs := make([]error, 3)
	if len(m.Assignees) > 0 {
		writes = append(writes, func() { errs[0] = c.addAssignees(ctx, r, is, m.Assignees) })
	}
	if reviews {
		writes = append(writes, func() {
			if errs[1] = askedErr; askedErr == nil {
				errs[1] = c.requestReviewers(ctx, r, number, m.Reviewers, asked)
			}
		})
	}
	if m.Milestone != "" {
		writes = append(writes, func() {
			if errs[2] = milestoneErr; milestoneErr == nil {
				errs[2] = c.setMilestone(ctx, r, is, milestone)
			}
		})
	}
	if len(writes) > 0 {
		together(writes...)
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
	got, err := get(ctx, c.newRun(), func(ctx context.Context) (*github.Issue, *github.Response, error) {
		return c.gh.Issues.AddAssignees(ctx, r.Owner, r.Name, n, missing)
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
		return fmt.Errorf("%s: GitHub did not assign %s: it silently drops a login not a collaborator of %s (and any past 10, or all without push access): check the login", did, strings.Join(dropped, ", "), r)
	}
	return nil
}

// reviewState is who a pull request's reviews are already asked of or
// given by: users and team slugs requested, and the authors of its reviews.
type reviewState struct{ users, teams, reviewed []string }

// reviewState reads the review requests of pull request n and, when
// reviewers name a user, its reviews, at once.
func (c *Client) reviewState(ctx context.Context, r Repo, n int, reviewers []string) (reviewState, error) {
	var st reviewState
	var pending *github.Reviewers
	var pendingErr, reviewsErr error
	var rs []Review
	reads := []func(){func() {
		pending, pendingErr = get(ctx, c.newRun(), func(ctx context.Context) (*github.Reviewers, *github.Response, error) {
			return c.gh.PullRequests.ListReviewers(ctx, r.Owner, r.Name, n, &github.ListOptions{PerPage: 100})
		})
	}}
	if slices.ContainsFunc(reviewers, func(s string) bool { return !strings.Contains(s, "/") }) {
		// A review answers its request, which then leaves the list: asking
		// again would ask that reviewer for another.
		reads = append(reads, func() { rs, reviewsErr = c.ListReviews(ctx, r, n) })
	}
	together(reads...)
	if pendingErr != nil {
		return st, c.redact(issueRefused(pendingErr, r, n, fmt.Sprintf("read the review requests of %s#%d", r, n)))
	}
	if reviewsErr != nil {
		return st, reviewsErr
	}
	for _, u := range pending.Users {
		st.users = append(st.users, u.GetLogin())
	}
	for _, t := range pending.Teams {
		st.teams = append(st.teams, t.GetSlug())
	}
	for _, rv := range rs {
		st.reviewed = append(st.reviewed, rv.Author)
	}
	return st, nil
}

// requestReviewers asks reviewers of pull request n who are not in st.
func (c *Client) requestReviewers(ctx context.Context, r Repo, n int, reviewers []string, st reviewState) error {
	reviewers, err := c.me(ctx, reviewers)
	if err != nil {
		return fmt.Errorf("request reviews on %s#%d: %w", r, n, err)
	}
	var req github.ReviewersRequest
	for _, s := range reviewers {
		if _, slug, ok := strings.Cut(s, "/"); ok {
			if !hasFold(st.teams, slug) && !hasFold(req.TeamReviewers, slug) {
				req.TeamReviewers = append(req.TeamReviewers, slug)
			}
		} else if !hasFold(st.users, s) && !hasFold(st.reviewed, s) && !hasFold(req.Reviewers, s) {
			req.Reviewers = append(req.Reviewers, s)
		}
	}
	if len(req.Reviewers)+len(req.TeamReviewers) == 0 {
		return nil
	}
	did := fmt.Sprintf("request reviews from %s on %s#%d", strings.Join(slices.Concat(req.Reviewers, req.TeamReviewers), ", "), r, n)
	err = c.newRun().read(ctx, func(ctx context.Context) (*github.Response, error) {
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

// find finds milestone want among ms by title (without case), else by
// number; n is the issue it is for, in errors.
func (ms *Milestones) find(r Repo, n int, want string) (*github.Milestone, error) {
	if ms.err != nil {
		return nil, ms.err
	}
	var byTitle, byNumber *github.Milestone
	num, numErr := strconv.Atoi(want)
	for _, m := range ms.list {
		if byTitle == nil && strings.EqualFold(m.GetTitle(), want) {
			byTitle = m
		}
		if numErr == nil && m.GetNumber() == num {
			byNumber = m
		}
	}
	m := byTitle
	if m == nil {
		m = byNumber
	}
	if m == nil {
		return nil, fmt.Errorf("set milestone %q on %s#%d: %s has no milestone with that title or number: create it, or check -m", want, r, n, r)
	}
	return m, nil
}

// setMilestone sets milestone m on issue is, unless it has it.
func (c *Client) setMilestone(ctx context.Context, r Repo, is *github.Issue, m *github.Milestone) error {
	n := is.GetNumber()
	if is.GetMilestone().GetNumber() == m.GetNumber() {
		return nil
	}
	err := c.newRun().read(ctx, func(ctx context.Context) (*github.Response, error) {
		_, resp, err := c.gh.Issues.Edit(ctx, r.Owner, r.Name, n, &github.IssueRequest{Milestone: github.Int(m.GetNumber())})
		return resp, err
	})
	if err != nil {
		return c.redact(issueRefused(err, r, n, fmt.Sprintf("set milestone %q on %s#%d", m.GetTitle(), r, n)))
	}
	return nil
}
