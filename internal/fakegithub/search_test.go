package fakegithub

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/tests/fgtest"
)

func searchNumbers(t *testing.T, gh *github.Client, q string) ([]int, *github.IssuesSearchResult) {
	t.Helper()
	res, _, err := gh.Search.Issues(t.Context(), q, nil)
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	var out []int
	for _, is := range res.Issues {
		out = append(out, is.GetNumber())
	}
	return out, res
}

func TestSearchIsEventuallyConsistent(t *testing.T) {
	clock := fgtest.NewClock()
	s, gh := newTest(t, Options{Now: clock.Now})
	s.SetSearchLag(90 * time.Second)
	if _, _, err := gh.Issues.Create(t.Context(), owner, name, &github.IssueRequest{Title: github.String("t"), Body: github.String("<!-- ghonce:key=gk1_lag -->")}); err != nil {
		t.Fatal(err)
	}
	// The consistent list endpoint sees it at once; search does not.
	if list, _, err := gh.Issues.ListByRepo(t.Context(), owner, name, nil); err != nil || len(list) != 1 {
		t.Fatalf("list = %d %v", len(list), err)
	}
	got, res := searchNumbers(t, gh, `repo:octo/hello "gk1_lag" in:body`)
	if len(got) != 0 || res.GetTotal() != 0 || res.GetIncompleteResults() {
		t.Fatalf("search right after the write = %v %+v", got, res)
	}
	clock.Advance(89 * time.Second)
	if got, _ := searchNumbers(t, gh, `repo:octo/hello gk1_lag`); len(got) != 0 {
		t.Fatalf("search before the lag passed = %v", got)
	}
	clock.Advance(time.Second)
	if got, res := searchNumbers(t, gh, `repo:octo/hello gk1_lag`); len(got) != 1 || res.GetTotal() != 1 {
		t.Fatalf("search after the lag = %v", got)
	}
}

func TestSearchQualifiers(t *testing.T) {
	s, gh := newTest(t, Options{})
	s.AddRepo(owner, "other", "main")
	s.SeedIssue(owner, name, "alice", SeedIssue{Title: "Open sesame", Body: "doors", Labels: []string{"help wanted"}}) // 1
	s.SeedPR(owner, name, "agent[bot]", SeedPR{Title: "fix", Body: "<!-- ghonce:key=gk1_z -->", Head: "agent/fix-1"})  // 2
	s.SeedIssue(owner, name, "bob", SeedIssue{Title: "closed one", Body: "sesame seeds", State: "closed"})             // 3
	s.SeedIssue(owner, "other", "alice", SeedIssue{Title: "sesame elsewhere"})                                         // other#1
	cases := []struct {
		q    string
		want string
	}{
		{"sesame repo:octo/hello", "[3 1]"},
		{"SESAME repo:octo/hello in:title", "[1]"},
		{"sesame repo:octo/hello in:body", "[3]"},
		{"repo:octo/hello is:pr", "[2]"},
		{"repo:octo/hello type:issue is:open", "[1]"},
		{"repo:octo/hello is:closed", "[3]"},
		{`repo:octo/hello "ghonce:key=gk1_z" in:body`, "[2]"},
		{"repo:octo/hello author:agent[bot]", "[2]"},
		{"repo:octo/hello head:agent/", "[2]"},
		{"repo:octo/hello head:agent/fix-2", "[]"},
		{"sesame user:octo", "[1 3 1]"},
		{`repo:octo/hello "open sesame"`, "[1]"},
		{`repo:octo/hello "repo:octo/hello"`, "[]"},
		{`repo:octo/hello label:"Help Wanted"`, "[1]"},
	}
	for _, c := range cases {
		t.Run(c.q, func(t *testing.T) {
			got, _ := searchNumbers(t, gh, c.q)
			if g := fmt.Sprint(got); g != c.want {
				t.Errorf("%q -> %s, want %s", c.q, g, c.want)
			}
		})
	}
	res, _, err := gh.Search.Issues(t.Context(), "repo:octo/hello is:pr", nil)
	if err != nil || !res.Issues[0].IsPullRequest() {
		t.Fatalf("PR search hit lacks pull_request: %v", err)
	}
}

func TestSearchRefusals(t *testing.T) {
	s, gh := newTest(t, Options{})
	_, _, err := gh.Search.Issues(t.Context(), strings.Repeat("a", 257), nil)
	if er := fgtest.ErrorResponse(t, err, 422); er.Errors[0].Message != "The search is longer than 256 characters." {
		t.Fatalf("long query = %+v", er)
	}
	_, _, err = gh.Search.Issues(t.Context(), "repo:octo/missing x", nil)
	fgtest.ErrorResponse(t, err, 422)
	r := fgtest.Do(t, s, token, "GET", "/search/issues?q=x&per_page=100&page=11", "")
	if r.Status != 422 {
		t.Fatalf("page past 1000 results = %d", r.Status)
	}
	r = fgtest.Do(t, s, token, "GET", "/search/issues", "")
	if r.Status != 422 {
		t.Fatalf("no q = %d", r.Status)
	}
}

func TestSearchPaginates(t *testing.T) {
	s, gh := newTest(t, Options{})
	for i := 0; i < 45; i++ {
		s.SeedIssue(owner, name, "a", SeedIssue{Title: "needle"})
	}
	res, resp, err := gh.Search.Issues(t.Context(), "needle repo:octo/hello", &github.SearchOptions{ListOptions: github.ListOptions{PerPage: 20}})
	if err != nil || res.GetTotal() != 45 || len(res.Issues) != 20 || resp.NextPage != 2 || resp.LastPage != 3 {
		t.Fatalf("page 1: total %d items %d next %d last %d %v", res.GetTotal(), len(res.Issues), resp.NextPage, resp.LastPage, err)
	}
	if l := resp.Header.Get("Link"); !strings.Contains(l, "/api/v3/search/issues?") || !strings.Contains(l, "q=needle") {
		t.Fatalf("Link = %q", l)
	}
}

func TestSearchHasItsOwnRateLimit(t *testing.T) {
	clock := fgtest.NewClock()
	s, _ := newTest(t, Options{Now: clock.Now, SearchLimit: 2})
	for i := 0; i < 2; i++ {
		if r := fgtest.Do(t, s, token, "GET", "/search/issues?q=x", ""); r.Status != 200 {
			t.Fatalf("search %d = %d", i, r.Status)
		}
	}
	r := fgtest.Do(t, s, token, "GET", "/search/issues?q=x", "")
	if r.Status != 403 || r.Header.Get("X-RateLimit-Resource") != "search" || r.Header.Get("X-RateLimit-Remaining") != "0" {
		t.Fatalf("3rd search = %d %v", r.Status, r.Header)
	}
	if r := fgtest.Do(t, s, token, "GET", "/user", ""); r.Status != 200 {
		t.Fatalf("core after search exhausted = %d", r.Status)
	}
	clock.Advance(time.Minute)
	if r := fgtest.Do(t, s, token, "GET", "/search/issues?q=x", ""); r.Status != 200 {
		t.Fatalf("search after a minute = %d", r.Status)
	}
}
