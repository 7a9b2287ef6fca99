package fakegithub

import (
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/tests/fgtest"
)

// Assignees as GitHub takes them: adding is idempotent, and a login that
// cannot be assigned is dropped without an error; the answer shows who is.
func TestAddAssignees(t *testing.T) {
	s, gh := newTest(t, Options{})
	s.AddCollaborator(owner, name, "monalisa")
	n := s.SeedIssue(owner, name, owner, SeedIssue{Title: "It crashes"})
	for i := 0; i < 2; i++ {
		is, resp, err := gh.Issues.AddAssignees(t.Context(), owner, name, n, []string{"MonaLisa", "stranger"})
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("add assignees: %v %v", resp, err)
		}
		if len(is.Assignees) != 1 || is.Assignees[0].GetLogin() != "monalisa" || is.GetAssignee().GetLogin() != "monalisa" {
			t.Fatalf("run %d: assignees %v", i, is.Assignees)
		}
	}
	if got := s.Issues(owner, name)[0].Assignees; !slices.Equal(got, []string{"monalisa"}) {
		t.Fatalf("Issues() assignees = %q", got)
	}
	if _, _, err := gh.Issues.AddAssignees(t.Context(), owner, name, 99, []string{"monalisa"}); !isStatus(err, http.StatusNotFound) {
		t.Fatalf("unknown issue: %v", err)
	}
}

// Review requests: users and teams with access, refused whole (422, no
// errors array) when one has none or is the author; a review answers a
// request.
func TestRequestReviewers(t *testing.T) {
	s, gh := newTest(t, Options{})
	fgtest.FeatureBranch(t, s, "fix")
	s.AddCollaborator(owner, name, "hubot")
	s.AddTeam(owner, name, "core")
	n := s.SeedPR(owner, name, owner, SeedPR{Title: "Fix", Head: "fix"})
	pr, resp, err := gh.PullRequests.RequestReviewers(t.Context(), owner, name, n, github.ReviewersRequest{Reviewers: []string{"hubot"}, TeamReviewers: []string{"Core"}})
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("request reviewers: %v %v", resp, err)
	}
	if len(pr.RequestedReviewers) != 1 || pr.RequestedReviewers[0].GetLogin() != "hubot" || len(pr.RequestedTeams) != 1 || pr.RequestedTeams[0].GetSlug() != "core" {
		t.Fatalf("requested %v %v", pr.RequestedReviewers, pr.RequestedTeams)
	}
	rv, _, err := gh.PullRequests.ListReviewers(t.Context(), owner, name, n, nil)
	if err != nil || len(rv.Users) != 1 || len(rv.Teams) != 1 {
		t.Fatalf("list requested reviewers: %+v %v", rv, err)
	}
	for _, tc := range []struct {
		req  github.ReviewersRequest
		says string
	}{
		{github.ReviewersRequest{Reviewers: []string{"stranger"}}, "not a collaborator of the octo/hello repository"},
		{github.ReviewersRequest{TeamReviewers: []string{"nobody"}}, "not a collaborator"},
		{github.ReviewersRequest{Reviewers: []string{owner}}, "pull request author"},
	} {
		t.Run(tc.says, func(t *testing.T) {
			_, _, err := gh.PullRequests.RequestReviewers(t.Context(), owner, name, n, tc.req)
			var er *github.ErrorResponse
			if !errors.As(err, &er) || er.Response.StatusCode != http.StatusUnprocessableEntity || !strings.Contains(er.Message, tc.says) || len(er.Errors) != 0 {
				t.Errorf("request %+v: %v, want 422 %q", tc.req, err, tc.says)
			}
		})
	}
	s.SeedReview(owner, name, n, "hubot", "APPROVED", "ok")
	if got := s.PullRequests(owner, name)[0].Reviewers; !slices.Equal(got, []string{"octo/core"}) {
		t.Fatalf("after hubot's review, pending requests %q", got)
	}
}

// Milestones: listed by state, set and cleared on an issue or PR by
// number; an unknown number is 422 invalid.
func TestMilestones(t *testing.T) {
	s, gh := newTest(t, Options{})
	s.SeedMilestone(owner, name, "v1", "closed")
	v2 := s.SeedMilestone(owner, name, "v2", "")
	n := s.SeedIssue(owner, name, owner, SeedIssue{Title: "It crashes"})
	open, _, err := gh.Issues.ListMilestones(t.Context(), owner, name, nil)
	if err != nil || len(open) != 1 || open[0].GetTitle() != "v2" {
		t.Fatalf("open milestones %v %v", open, err)
	}
	all, _, err := gh.Issues.ListMilestones(t.Context(), owner, name, &github.MilestoneListOptions{State: "all"})
	if err != nil || len(all) != 2 || all[0].GetNumber() != 1 || all[0].GetState() != "closed" {
		t.Fatalf("all milestones %v %v", all, err)
	}
	is, _, err := gh.Issues.Edit(t.Context(), owner, name, n, &github.IssueRequest{Milestone: github.Int(v2)})
	if err != nil || is.GetMilestone().GetTitle() != "v2" || is.GetMilestone().GetOpenIssues() != 1 {
		t.Fatalf("set milestone: %v %v", is.GetMilestone(), err)
	}
	if got := s.Issues(owner, name)[0].Milestone; got != "v2" {
		t.Fatalf("Issues() milestone %q", got)
	}
	_, _, err = gh.Issues.Edit(t.Context(), owner, name, n, &github.IssueRequest{Milestone: github.Int(9)})
	var er *github.ErrorResponse
	if !errors.As(err, &er) || er.Response.StatusCode != http.StatusUnprocessableEntity || len(er.Errors) != 1 || er.Errors[0].Field != "milestone" || er.Errors[0].Code != "invalid" {
		t.Fatalf("unknown milestone: %v", err)
	}
	if _, _, err := gh.Issues.RemoveMilestone(t.Context(), owner, name, n); err != nil || s.Issues(owner, name)[0].Milestone != "" {
		t.Fatalf("clear milestone: %v, now %q", err, s.Issues(owner, name)[0].Milestone)
	}
}

func isStatus(err error, status int) bool {
	var er *github.ErrorResponse
	return errors.As(err, &er) && er.Response.StatusCode == status
}
