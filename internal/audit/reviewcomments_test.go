package audit_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/audit"
	"github.com/ghonce/ghonce/tests/audittest"
)

// What claude-code-action #1405 left: every inline comment twice, 20 s
// apart. The pair is one group, the older kept; the same text by a
// person, or on another line, or another text on the same line, is not a
// duplicate of it. --apply leaves inline comments to a person.
func TestInlineCommentsPostedTwice(t *testing.T) {
	clock := audittest.NewClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	s := fixtures.NewServer(fixtures.Options{Now: clock.Now})
	t.Cleanup(s.Close)
	s.AddUser(audittest.Agent, audittest.AgentToken)
	s.AddUser(audittest.Human, audittest.HumanToken)
	s.AddRepo("octo", "inline", "main")
	head := s.AddCommitBy("octo", "inline", "main", audittest.Agent)
	s.SetRef("octo", "inline", "feat", head)
	n := s.SeedPR("octo", "inline", audittest.Human, fixtures.SeedPR{Head: "feat", Title: "feat"})
	file := "change-" + audittest.Agent + ".txt"
	post := func(tok, body, side string) int64 {
		t.Helper()
		gh := github.NewClient(nil).WithAuthToken(tok)
		gh, _ = gh.WithEnterpriseURLs(s.URL(), s.URL())
		c, _, err := gh.PullRequests.CreateComment(context.Background(), "octo", "inline", n, &github.PullRequestComment{
			Body: github.String(body), CommitID: github.String(head), Path: github.String(file), Line: github.Int(1), Side: github.String(side)})
		if err != nil {
			t.Fatal(err)
		}
		clock.Add(20 * time.Second)
		return c.GetID()
	}
	first := post(audittest.AgentToken, "Off by one here.", "RIGHT")
	again := post(audittest.AgentToken, "Off by one here.\n", "RIGHT")
	post(audittest.HumanToken, "Off by one here.", "RIGHT")
	post(audittest.AgentToken, "Another finding.", "RIGHT")

	gh, err := ghcheck.New(ghcheck.Options{BaseURL: s.URL(), Token: audittest.AgentToken, HTTPClient: &http.Client{Timeout: 10 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := audit.Find(context.Background(), gh, audit.Options{Repo: ghcheck.Repo{Owner: "octo", Name: "inline"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Listed["review_comments"] != 4 || len(rep.Groups) != 1 {
		t.Fatalf("listed %+v, groups %+v: want 4 inline comments and one group", rep.Listed, rep.Groups)
	}
	g := rep.Groups[0]
	if g.Kind != "review-comment" || g.Keep.ID != first || len(g.Duplicates) != 1 || g.Duplicates[0].ID != again ||
		g.Duplicates[0].Differs != "" || *g.Duplicates[0].AfterSeconds < 20 || g.Keep.Thread != n {
		t.Fatalf("group %+v, want %d kept and %d, 20 s or more later, its duplicate", g, first, again)
	}
}
