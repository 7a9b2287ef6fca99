package ghcheck

import (
	"context"
	"testing"

	"github.com/google/go-github/v66/github"
	"github.com/migueleliasweb/go-github-mock/src/mock"
)

// TestGetCommitInfoUnreadable: a head commit GitHub cannot return (404 or
// 422) answers with no tree and no error, so audit compares it with
// nothing.
func TestGetCommitInfoUnreadable(t *testing.T) {
	for _, status := range []int{404, 422} {
		c, _ := newTest(t, Options{}, route(getCommit, reply(status, map[string]string{"message": "No commit found for SHA: abc"})))
		got, err := c.GetCommitInfo(context.Background(), Repo{Owner: "o", Name: "r"}, "abc")
		if err != nil || got.Tree != "" || got.Author != "" {
			t.Errorf("%d: %+v, %v; want no tree, no author, no error", status, got, err)
		}
	}
}

// TestTimelineAndReactors: the timeline's actors (a review's user), a
// label's name and a cross-reference's source; who reacted.
func TestTimelineAndReactors(t *testing.T) {
	src := &github.Issue{Number: github.Int(9), User: user("alice"), PullRequestLinks: &github.PullRequestLinks{URL: github.String("x")}}
	c, _ := newTest(t, Options{},
		route(mock.GetReposIssuesTimelineByOwnerByRepoByIssueNumber, reply(200, []*github.Timeline{
			{Event: github.String("commented"), Actor: user("bob")},
			{Event: github.String("reviewed"), User: user("carol")},
			{Event: github.String("labeled"), Actor: user("alice"), Label: &github.Label{Name: github.String("bug")}},
			{Event: github.String("cross-referenced"), Actor: user("alice"), Source: &github.Source{Type: github.String("issue"), Issue: src}},
		})),
		route(mock.GetReposIssuesReactionsByOwnerByRepoByIssueNumber, reply(200, []*github.Reaction{{User: user("dave"), Content: github.String("+1")}})),
	)
	r := Repo{Owner: "o", Name: "r"}
	evs, err := c.Timeline(context.Background(), r, 3)
	if err != nil || len(evs) != 4 {
		t.Fatalf("Timeline: %+v, %v", evs, err)
	}
	if evs[0].Actor != "bob" || evs[1].Actor != "carol" || evs[2].Label != "bug" || evs[3].Source != 9 || !evs[3].SourcePR || evs[3].SourceAuthor != "alice" {
		t.Errorf("Timeline = %+v", evs)
	}
	who, err := c.Reactors(context.Background(), r, 3, 0)
	if err != nil || len(who) != 1 || who[0] != "dave" {
		t.Errorf("Reactors = %v, %v", who, err)
	}
}
