package fakegithub

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/tests/fgtest"
)

func TestURLHasPrefixAndTrailingSlash(t *testing.T) {
	s := NewServer(Options{})
	defer s.Close()
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") || !strings.HasSuffix(s.URL(), "/api/v3/") {
		t.Fatalf("URL() = %q, want http://127.0.0.1:PORT/api/v3/", s.URL())
	}
	s2 := NewServer(Options{Prefix: "gh"})
	defer s2.Close()
	if !strings.HasSuffix(s2.URL(), "/gh/") {
		t.Fatalf("URL() with Prefix gh = %q", s2.URL())
	}
}

func TestGetUserAndRepo(t *testing.T) {
	s, gh := newTest(t, Options{})
	s.AddUser("agent[bot]", "tok-bot")
	u, _, err := gh.Users.Get(t.Context(), "")
	if err != nil || u.GetLogin() != owner || u.GetType() != "User" {
		t.Fatalf("GET /user = %v %v", u, err)
	}
	bot, _, err := fgtest.Client(t, s, "tok-bot").Users.Get(t.Context(), "")
	if err != nil || bot.GetLogin() != "agent[bot]" || bot.GetType() != "Bot" {
		t.Fatalf("GET /user as bot = %v %v", bot, err)
	}
	r, _, err := gh.Repositories.Get(t.Context(), "OCTO", "Hello")
	if err != nil || r.GetFullName() != "octo/hello" || r.GetDefaultBranch() != "main" || r.GetID() == 0 {
		t.Fatalf("GET /repos/OCTO/Hello = %v %v", r, err)
	}
	_, _, err = gh.Repositories.Get(t.Context(), owner, "nope")
	er := fgtest.ErrorResponse(t, err, 404)
	if er.Message != "Not Found" {
		t.Fatalf("message = %q", er.Message)
	}
}

func TestBadCredentials(t *testing.T) {
	s, _ := newTest(t, Options{})
	for _, tok := range []string{"", "wrong"} {
		r := fgtest.Do(t, s, tok, "GET", "/user", "")
		if r.Status != 401 || r.JSON(t)["message"] != "Bad credentials" {
			t.Fatalf("token %q: %d %s", tok, r.Status, r.Body)
		}
	}
	_, _, err := fgtest.Client(t, s, "wrong").Users.Get(t.Context(), "")
	fgtest.ErrorResponse(t, err, 401)
	for _, r := range s.Requests() {
		if strings.Contains(r.Path+r.RawQuery, "tok") || strings.Contains(r.Login, "wrong") {
			t.Fatalf("request log leaks a token: %+v", r)
		}
	}
}

func TestUnknownRoutesAndPathsOutsidePrefix(t *testing.T) {
	s, _ := newTest(t, Options{})
	for _, c := range []struct{ method, path string }{
		{"GET", "/nope"},
		{"DELETE", "/repos/octo/hello/pulls"},
		{"GET", "/repos/octo/hello/pulls/abc"},
		{"GET", "/repos/octo/hello/pulls/-1"},
		{"GET", "/repos/octo/hello/issues/99999999999999999999999"},
		{"GET", "/repos/octo/hello/issues/comments/x"},
		{"GET", "/repositories/notanumber/issues"},
		{"GET", "/repositories/424242/issues"},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			r := fgtest.Do(t, s, token, c.method, c.path, "")
			if r.Status != 404 || r.JSON(t)["message"] != "Not Found" {
				t.Errorf("%s %s = %d %s, want 404 Not Found", c.method, c.path, r.Status, r.Body)
			}
		})
	}
	// A client that ignores the base path (absolute "/repos/...") fails.
	base := strings.TrimSuffix(s.URL(), "/api/v3/")
	r := fgtest.Do(t, s, token, "GET", base+"/repos/octo/hello", "")
	if r.Status != 404 {
		t.Fatalf("path outside the prefix = %d, want 404", r.Status)
	}
}

func TestMalformedJSONIs400(t *testing.T) {
	s, _ := newTest(t, Options{})
	for _, p := range []string{"/repos/octo/hello/issues", "/repos/octo/hello/pulls", "/repos/octo/hello/git/refs", "/repos/octo/hello/issues/1/labels"} {
		r := fgtest.Do(t, s, token, "POST", p, `{"title": "x",`)
		if r.Status != 400 || r.JSON(t)["message"] != "Problems parsing JSON" {
			t.Errorf("POST %s with bad JSON = %d %s", p, r.Status, r.Body)
		}
	}
	r := fgtest.Do(t, s, token, "POST", "/repos/octo/hello/issues", `{"title": 5}`)
	if r.Status != 422 || !strings.Contains(r.JSON(t)["message"].(string), "is not a string") {
		t.Errorf("title of the wrong type = %d %s", r.Status, r.Body)
	}
	if got := len(s.Issues(owner, name)); got != 0 {
		t.Fatalf("%d issues stored after bad requests", got)
	}
}

func TestRateLimitHeadersOnEveryResponse(t *testing.T) {
	clock := fgtest.NewClock()
	s, gh := newTest(t, Options{Now: clock.Now})
	_, resp, err := gh.Users.Get(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	if resp.Rate.Limit != 5000 || resp.Rate.Remaining != 4999 {
		t.Fatalf("rate = %+v", resp.Rate)
	}
	if want := clock.Now().Add(time.Hour).Unix(); resp.Rate.Reset.Unix() != want {
		t.Fatalf("reset = %v, want epoch seconds %d", resp.Rate.Reset, want)
	}
	r := fgtest.Do(t, s, token, "GET", "/repos/octo/hello/nope", "")
	if r.Header.Get("X-RateLimit-Used") != "2" || r.Header.Get("X-RateLimit-Resource") != "core" || r.Header.Get("X-RateLimit-Remaining") != "4998" {
		t.Fatalf("404 rate headers = %v", r.Header)
	}
	if reset := r.Header.Get("X-RateLimit-Reset"); len(reset) != 10 {
		t.Fatalf("x-ratelimit-reset = %q, want epoch seconds", reset)
	}
	r = fgtest.Do(t, s, "bad", "GET", "/user", "")
	if r.Header.Get("X-RateLimit-Limit") != "60" {
		t.Fatalf("401 rate headers = %v", r.Header)
	}
	rl, _, err := gh.RateLimit.Get(t.Context())
	if err != nil || rl.Core.Remaining != 4998 {
		t.Fatalf("GET /rate_limit = %+v %v", rl, err)
	}
}

func TestPrimaryRateLimitEnforced(t *testing.T) {
	clock := fgtest.NewClock()
	s, gh := newTest(t, Options{Now: clock.Now, CoreLimit: 3})
	for i := 0; i < 3; i++ {
		if _, _, err := gh.Repositories.Get(t.Context(), owner, name); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	r := fgtest.Do(t, s, token, "GET", "/repos/octo/hello", "")
	if r.Status != 403 || r.Header.Get("X-RateLimit-Remaining") != "0" || !strings.HasPrefix(r.JSON(t)["message"].(string), "API rate limit exceeded") {
		t.Fatalf("4th request = %d %v %s", r.Status, r.Header, r.Body)
	}
	reset, _ := strconv.ParseInt(r.Header.Get("X-RateLimit-Reset"), 10, 64)
	if reset != clock.Now().Add(time.Hour).Unix() {
		t.Fatalf("reset = %d", reset)
	}
	clock.Advance(time.Hour)
	if r := fgtest.Do(t, s, token, "GET", "/repos/octo/hello", ""); r.Status != 200 || r.Header.Get("X-RateLimit-Remaining") != "2" {
		t.Fatalf("after the reset = %d %v", r.Status, r.Header)
	}
}

func TestRepositoriesAliasServesIDPaths(t *testing.T) {
	s, gh := newTest(t, Options{})
	r, _, err := gh.Repositories.Get(t.Context(), owner, name)
	if err != nil {
		t.Fatal(err)
	}
	s.SeedIssue(owner, name, "someone", SeedIssue{Title: "t"})
	resp := fgtest.Do(t, s, token, "GET", "/repositories/"+strconv.FormatInt(r.GetID(), 10)+"/issues", "")
	if resp.Status != 200 || !strings.Contains(string(resp.Body), `"title":"t"`) {
		t.Fatalf("GET /repositories/{id}/issues = %d %s", resp.Status, resp.Body)
	}
}

func TestRequestsAndWrites(t *testing.T) {
	s, gh := newTest(t, Options{})
	if _, _, err := gh.Issues.Create(t.Context(), owner, name, &github.IssueRequest{Title: github.String("a")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := gh.Issues.Get(t.Context(), owner, name, 1); err != nil {
		t.Fatal(err)
	}
	_, _, _ = gh.Issues.Create(t.Context(), owner, name, &github.IssueRequest{})
	if s.Writes() != 2 {
		t.Fatalf("Writes() = %d, want 2 (a stored and a refused POST)", s.Writes())
	}
	reqs := s.Requests()
	want := []Request{
		{Method: "POST", Path: "/repos/octo/hello/issues", Login: owner, Status: 201},
		{Method: "GET", Path: "/repos/octo/hello/issues/1", Login: owner, Status: 200},
		{Method: "POST", Path: "/repos/octo/hello/issues", Login: owner, Status: 422},
	}
	if len(reqs) != len(want) {
		t.Fatalf("Requests() = %+v", reqs)
	}
	for i := range want {
		got := reqs[i]
		if got.Start.IsZero() || got.End.Before(got.Start) {
			t.Errorf("request %d: start %v, end %v: want the times it arrived and was answered", i, got.Start, got.End)
		}
		got.Start, got.End = time.Time{}, time.Time{}
		if got != want[i] {
			t.Errorf("request %d = %+v, want %+v", i, got, want[i])
		}
	}
	// One after another: three round trips.
	if n := RoundTrips(reqs); n != 3 {
		t.Errorf("RoundTrips = %d, want 3 (each request sent after the one before was answered)", n)
	}
}

func TestJSONIsNotHTMLEscaped(t *testing.T) {
	s, _ := newTest(t, Options{})
	r := fgtest.Do(t, s, token, "POST", "/repos/octo/hello/issues", `{"title":"t","body":"<!-- ghonce:key=gk1_x -->\nhi & bye"}`)
	if r.Status != 201 || !strings.Contains(string(r.Body), `"body":"<!-- ghonce:key=gk1_x -->\nhi & bye"`) {
		t.Fatalf("created issue = %d %s", r.Status, r.Body)
	}
	if r.Header.Get("Content-Type") != "application/json; charset=utf-8" || !strings.HasSuffix(r.Header.Get("Location"), "/api/v3/repos/octo/hello/issues/1") {
		t.Fatalf("headers = %v", r.Header)
	}
}

func TestConcurrentUseIsSafe(t *testing.T) {
	s, gh := newTest(t, Options{})
	done := make(chan error, 20)
	for i := 0; i < 20; i++ {
		go func() {
			_, _, err := gh.Issues.Create(t.Context(), owner, name, &github.IssueRequest{Title: github.String("same")})
			if err == nil {
				_ = s.Issues(owner, name)
				_, _, err = gh.Issues.ListByRepo(t.Context(), owner, name, nil)
			}
			done <- err
		}()
	}
	for i := 0; i < 20; i++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	// Issues have no uniqueness: twenty identical requests, twenty issues.
	if got := len(s.Issues(owner, name)); got != 20 {
		t.Fatalf("%d issues, want 20", got)
	}
	if s.Writes() != 20 || len(s.Requests()) != 40 {
		t.Fatalf("Writes %d Requests %d", s.Writes(), len(s.Requests()))
	}
}

// RoundTrips counts the longest chain of requests each sent after the one
// before was answered: requests open together count once.
func TestRoundTrips(t *testing.T) {
	at := func(start, end int) Request {
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		return Request{Start: t0.Add(time.Duration(start) * time.Millisecond), End: t0.Add(time.Duration(end) * time.Millisecond)}
	}
	for _, tc := range []struct {
		name string
		reqs []Request
		want int
	}{
		{"none", nil, 0},
		{"one", []Request{at(0, 100)}, 1},
		{"two together, then one", []Request{at(0, 100), at(2, 101), at(105, 205)}, 2},
		{"three in a row", []Request{at(0, 100), at(100, 200), at(201, 300)}, 3},
		{"a long one beside a chain of two", []Request{at(0, 250), at(1, 100), at(110, 200), at(260, 300)}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := RoundTrips(tc.reqs); got != tc.want {
				t.Errorf("%s: RoundTrips = %d, want %d", tc.name, got, tc.want)
			}
		})
	}
}
