package ghcheck_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
)

func listingClient(t *testing.T, s *fixtures.Server) *ghcheck.Client {
	t.Helper()
	c, err := ghcheck.New(ghcheck.Options{BaseURL: s.URL(), Token: bToken, HTTPClient: &http.Client{Timeout: 10 * time.Second},
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The audit's listings read a repository 100 items a page, every page,
// in one listing each: the comments of 250 threads cost 3 requests to
// the repository-wide endpoint and none to any thread's.
func TestListingsArePagedRepositoryWide(t *testing.T) {
	clock := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	s := budgetFake(t, fixtures.Options{Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
	for range 250 {
		s.SeedComment(owner, name, s.SeedIssue(owner, name, bLogin, fixtures.SeedIssue{Title: "t", Body: "b"}), bLogin, "c")
	}
	c := listingClient(t, s)
	r := ghcheck.Repo{Owner: owner, Name: name}
	ctx := context.Background()
	pages := 0
	cs, err := c.Lists(r, time.Time{}, func(string, int) { pages++ }).Get(ctx, "comments")
	if err != nil || len(cs) != 250 || pages != 3 {
		t.Fatalf("comments: %d (%v) in %d pages, want 250 in 3", len(cs), err, pages)
	}
	if cs[0].Number != 1 || cs[249].Number != 250 || cs[0].Author != bLogin {
		t.Fatalf("comment threads %d..%d, author %q", cs[0].Number, cs[249].Number, cs[0].Author)
	}
	for _, q := range s.Requests() {
		if strings.HasSuffix(q.Path, "/comments") && q.Path != "/repos/"+repo+"/issues/comments" {
			t.Fatalf("a thread's own listing was read: %s", q.Path)
		}
	}
	// since filters: the newest 10 issues were updated last.
	is, err := c.Lists(r, s.Issues(owner, name)[240].CreatedAt, nil).Get(ctx, "issues and pull requests")
	if err != nil || len(is) != 10 {
		t.Fatalf("issues since: %d (%v), want 10", len(is), err)
	}
}

// The prs listing reads the newest updates first and stops at the first
// page that reaches back before since.
func TestListPullsSinceStopsAtSince(t *testing.T) {
	clock := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	s := budgetFake(t, fixtures.Options{Now: func() time.Time { clock = clock.Add(time.Second); return clock }})
	for range 250 {
		s.SeedPR(owner, name, bLogin, fixtures.SeedPR{Title: "p", Head: "main"})
	}
	c := listingClient(t, s)
	r := ghcheck.Repo{Owner: owner, Name: name}
	// A pull request's reactions come from the issues listing, read first.
	ls := c.Lists(r, s.PullRequests(owner, name)[200].CreatedAt, nil)
	if _, err := ls.Get(context.Background(), "issues and pull requests"); err != nil {
		t.Fatal(err)
	}
	before := len(s.Requests())
	prs, err := ls.Get(context.Background(), "prs")
	if err != nil || len(prs) != 50 {
		t.Fatalf("%d PRs (%v), want the 50 newest", len(prs), err)
	}
	if n := len(s.Requests()) - before; n > 2 { // at most GET /user and one page
		t.Fatalf("%d requests, want 2: the listing went on past since", n)
	}
	all, err := c.Lists(r, time.Time{}, nil).Get(context.Background(), "prs")
	if err != nil || len(all) != 250 {
		t.Fatalf("all PRs: %d (%v)", len(all), err)
	}
}

// RunAttempt reads when an attempt of an Actions run ran; one GitHub will
// not describe (a token without actions: read, an unknown run) is an
// error that names the permission.
func TestRunAttempt(t *testing.T) {
	s := budgetFake(t, fixtures.Options{})
	from := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
	s.SeedRunAttempt(owner, name, 7, 1, from, from.Add(time.Minute))
	c := listingClient(t, s)
	r := ghcheck.Repo{Owner: owner, Name: name}
	if at, err := c.RunAttempt(context.Background(), r, 7, 1); err != nil || !at.Started.Equal(from) || !at.Ended.Equal(from.Add(time.Minute)) {
		t.Fatalf("attempt 1: %+v, %v", at, err)
	}
	if _, err := c.RunAttempt(context.Background(), r, 7, 2); err == nil || !strings.Contains(err.Error(), "actions: read") {
		t.Fatalf("an attempt GitHub does not describe: %v, want an error naming actions: read", err)
	}
}
