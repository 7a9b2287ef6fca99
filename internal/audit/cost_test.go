package audit_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/audit"
	"github.com/ghonce/ghonce/tests/audittest"
)

var costIssues = flag.Int("audit.issues", 300, "issues in TestAuditCost's repository (its comments are 5 per issue); the benchmark uses 10,000")

// bigRepo is a repository with n issues by the agent, each with five
// comments (four by the agent, one by a person), and one pull request,
// all distinct: nothing to group, everything to read.
func bigRepo(tb testing.TB, n int) (*fixtures.Server, *ghcheck.Client, ghcheck.Repo) {
	s, gh, r, _ := bigRepoTimed(tb, n)
	return s, gh, r
}

// timedTransport adds up the time spent in requests (the fake's share).
type timedTransport struct {
	mu    sync.Mutex
	spent time.Duration
}

func (t *timedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		// The body is read by the caller: time it too.
		resp.Body = &timedBody{ReadCloser: resp.Body, t: t, start: start}
		return resp, nil
	}
	t.add(time.Since(start))
	return resp, err
}

func (t *timedTransport) add(d time.Duration) {
	t.mu.Lock()
	t.spent += d
	t.mu.Unlock()
}

func (t *timedTransport) total() time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.spent
}

type timedBody struct {
	io.ReadCloser
	t     *timedTransport
	start time.Time
	done  bool
}

func (b *timedBody) Close() error {
	if !b.done {
		b.done = true
		b.t.add(time.Since(b.start))
	}
	return b.ReadCloser.Close()
}

func bigRepoTimed(tb testing.TB, n int) (*fixtures.Server, *ghcheck.Client, ghcheck.Repo, *timedTransport) {
	tb.Helper()
	clock := audittest.NewClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	s := fixtures.NewServer(fixtures.Options{Now: clock.Now, CoreLimit: 1 << 30})
	tb.Cleanup(s.Close)
	s.AddUser(audittest.Agent, audittest.AgentToken)
	s.AddRepo("octo", "big", "main")
	for i := range n {
		num := s.SeedIssue("octo", "big", audittest.Agent, fixtures.SeedIssue{Title: fmt.Sprintf("Issue %d", i), Body: fmt.Sprintf("Body of issue %d.", i)})
		for j := range 4 {
			s.SeedComment("octo", "big", num, audittest.Agent, fmt.Sprintf("Comment %d on issue %d.", j, i))
		}
		s.SeedComment("octo", "big", num, audittest.Human, fmt.Sprintf("A person on issue %d.", i))
	}
	s.SetRef("octo", "big", "feature", s.AddCommitBy("octo", "big", "main", audittest.Agent))
	s.SeedPR("octo", "big", audittest.Agent, fixtures.SeedPR{Title: "The feature", Body: "Adds it.", Head: "feature"})
	tt := &timedTransport{}
	gh, err := ghcheck.New(ghcheck.Options{BaseURL: s.URL(), Token: audittest.AgentToken, HTTPClient: &http.Client{Timeout: time.Minute, Transport: tt},
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		tb.Fatal(err)
	}
	return s, gh, ghcheck.Repo{Owner: "octo", Name: "big"}, tt
}

// floor is what any audit reading every item 100 a page spends: GET /user,
// and each listing the default kinds' Audits name (audit.DefaultKinds) read
// whole: ⌈items/100⌉ pages of issues (the repository's pull request with
// them) and of comments, and one page of each other (the pull requests,
// each pull request's reviews, ...), for bigRepo holds one item or none
// of each. A kind with a listing of its own adds its page here unnamed.
func floor(issues, comments int) int64 {
	n := int64(1 + (issues+1+99)/100 + (comments+99)/100)
	seen := map[string]bool{"issues": true, "comments": true}
	for _, k := range audit.DefaultKinds {
		if l := audit.Rule(k).Listing; l != "" && !seen[l] {
			seen[l] = true
			n++
		}
	}
	return n
}

// TestAuditCost: reading a repository costs its pages and nothing per
// issue: the requests equal the floor. It prints the figures.
func TestAuditCost(t *testing.T) {
	n := *costIssues
	_, gh, r := bigRepo(t, n)
	start := time.Now()
	rep, err := audit.Find(context.Background(), gh, audit.Options{Repo: r})
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	req, want := gh.Stats().Requests, floor(n, 5*n)
	t.Logf("audit of %d issues and %d comments: %d requests (⌈items/100⌉ floor %d), %s, %d groups", n, 5*n, req, want, took.Round(time.Millisecond), len(rep.Groups))
	if rep.Listed["issues"] != n || rep.Listed["comments"] != 5*n || len(rep.Groups) != 0 {
		t.Fatalf("listed %+v, %d groups", rep.Listed, len(rep.Groups))
	}
	if req != want {
		t.Fatalf("%d requests, want the floor %d: some item cost a request of its own", req, want)
	}
}

// BenchmarkAuditFind: the issue's repository, 10,000 issues and 50,000
// comments. Run: go test -run '^$' -bench AuditFind -benchtime 1x ./internal/audit
func BenchmarkAuditFind(b *testing.B) {
	const n = 10_000
	_, gh, r, tt := bigRepoTimed(b, n)
	b.ResetTimer()
	var req int64
	var inRequests, total time.Duration
	for range b.N {
		before, spent, start := gh.Stats().Requests, tt.total(), time.Now()
		if _, err := audit.Find(context.Background(), gh, audit.Options{Repo: r}); err != nil {
			b.Fatal(err)
		}
		total, inRequests = time.Since(start), tt.total()-spent
		req = gh.Stats().Requests - before
	}
	b.ReportMetric(float64(req), "requests/op")
	b.ReportMetric(float64(floor(n, 5*n)), "floor-requests")
	b.Logf("10,000 issues and 50,000 comments: %d requests per audit beside a floor of ⌈items/100⌉ = %d; %s per audit, %s of it waiting on the fake GitHub's answers",
		req, floor(n, 5*n), total.Round(time.Millisecond), inRequests.Round(time.Millisecond))
}
