package ghcheck

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"github.com/migueleliasweb/go-github-mock/src/mock"

	"github.com/ghonce/ghonce/taskkey"
)

func okIssue(w http.ResponseWriter, r *http.Request) {
	is := issue(1, me, "", false)
	is.Labels = []*github.Label{{Name: github.String(taskkey.Label(keyFor("issue")))}}
	reply(201, is)(w, r)
}

func TestSecondaryLimitHonoursRetryAfter(t *testing.T) {
	var posts counter
	c, s := newTest(t, Options{},
		route(mock.PostReposIssuesByOwnerByRepo, posts.seq(
			reply(403, fixture(t, "secondary-limit.403.json"), "Retry-After", "30"),
			okIssue,
		)),
	)
	a, err := c.CreateIssue(context.Background(), repo, keyFor("issue"), NewIssue{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Number != 1 || posts.count() != 2 {
		t.Errorf("artifact %+v after %d posts", a, posts.count())
	}
	if w := s.waits(); len(w) != 1 || w[0] != 30*time.Second {
		t.Errorf("waits = %v, want [30s]", w)
	}
}

func TestSecondaryLimitWithoutRetryAfterBacksOffFromAMinute(t *testing.T) {
	var posts counter
	c, s := newTest(t, Options{MaxWait: 3 * time.Minute},
		route(mock.PostReposIssuesByOwnerByRepo, posts.seq(reply(403, fixture(t, "secondary-limit.403.json")))),
	)
	_, err := c.CreateIssue(context.Background(), repo, keyFor("issue"), NewIssue{Title: "t"})
	if cl := classOf(t, err); cl != ClassRefused {
		t.Fatalf("class = %v (%v)", cl, err)
	}
	if w := s.waits(); len(w) != 2 || w[0] != time.Minute || w[1] != 2*time.Minute {
		t.Errorf("waits = %v, want [1m 2m]", w)
	}
	if !strings.Contains(err.Error(), "rerun after that") || posts.count() != 3 {
		t.Errorf("err = %v after %d posts", err, posts.count())
	}
}

func TestTooManyRequests(t *testing.T) {
	// A 429 is a plain *github.ErrorResponse in go-github v66.
	var gets, posts counter
	c, s := newTest(t, Options{},
		route(mock.GetReposIssuesByOwnerByRepo, gets.seq(
			reply(429, fixture(t, "too-many.429.json"), "Retry-After", "7"),
			reply(200, []*github.Issue{}),
		)),
		route(mock.PostReposIssuesByOwnerByRepo, posts.seq(
			reply(429, fixture(t, "too-many.429.json")),
			okIssue,
		)),
	)
	wantState(t, c.FindIssue(context.Background(), repo, IssueQuery{Key: keyFor("issue")}), Absent)
	if _, err := c.CreateIssue(context.Background(), repo, keyFor("issue"), NewIssue{Title: "t"}); err != nil {
		t.Fatal(err)
	}
	if w := s.waits(); len(w) != 2 || w[0] != 7*time.Second || w[1] != time.Minute {
		t.Errorf("waits = %v, want [7s 1m]", w)
	}
}

func TestPrimaryLimitWaitsForReset(t *testing.T) {
	reset := time.Now().Add(40 * time.Second)
	var gets counter
	c, s := newTest(t, Options{},
		route(mock.GetReposIssuesCommentsByOwnerByRepoByIssueNumber, gets.seq(
			reply(403, fixture(t, "primary-limit.403.json"),
				"X-RateLimit-Limit", "5000", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10)),
			reply(200, []*github.IssueComment{}),
		)),
	)
	wantState(t, c.FindComment(context.Background(), repo, 7, keyFor("c")), Absent)
	w := s.waits()
	if len(w) != 1 || w[0] < 38*time.Second || w[0] > 42*time.Second {
		t.Errorf("waits = %v, want about 41s", w)
	}
	if gets.count() != 2 {
		t.Errorf("gets = %d", gets.count())
	}
}

func TestPrimaryLimitBeyondMaxWaitThenLocalRefusal(t *testing.T) {
	// At second 30 of its minute, so the second ghcheck adds to the reset
	// never moves the expected "HH:MM" into the next minute.
	reset := time.Now().Add(time.Hour).Truncate(time.Minute).Add(30 * time.Second)
	var posts counter
	c, s := newTest(t, Options{},
		route(mock.GetReposIssuesByOwnerByRepo, reply(403, fixture(t, "primary-limit.403.json"),
			"X-RateLimit-Limit", "5000", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))),
		route(mock.PostReposIssuesByOwnerByRepo, posts.seq(okIssue)),
	)
	// The login first: FindIssue reads it beside the list, and an answer
	// without rate headers arriving after the 403 would reset go-github's
	// memory of the limit (GitHub then refuses the create itself).
	if _, err := c.Login(context.Background()); err != nil {
		t.Fatal(err)
	}
	res := c.FindIssue(context.Background(), repo, IssueQuery{Key: keyFor("issue")})
	wantState(t, res, Unknown)
	if msg := res.Err.Error(); !strings.Contains(msg, "resets at "+reset.UTC().Add(time.Second).Format("15:04")) || !strings.Contains(msg, "rerun after that") {
		t.Errorf("err = %v", res.Err)
	}
	// go-github now refuses locally until the reset: nothing is sent.
	_, err := c.CreateIssue(context.Background(), repo, keyFor("issue"), NewIssue{Title: "t"})
	if cl := classOf(t, err); cl != ClassNotSent {
		t.Fatalf("class = %v (%v), want not sent", cl, err)
	}
	if posts.count() != 0 || len(s.waits()) != 0 {
		t.Errorf("posts = %d, waits = %v", posts.count(), s.waits())
	}
}

func TestReadsRetryServerErrors(t *testing.T) {
	var gets counter
	c, s := newTest(t, Options{},
		route(mock.GetReposIssuesByOwnerByRepo, gets.seq(reply(502, fixture(t, "server.502.json")))),
	)
	wantState(t, c.FindIssue(context.Background(), repo, IssueQuery{Key: keyFor("issue")}), Unknown)
	if gets.count() != 1+maxRetries {
		t.Errorf("gets = %d", gets.count())
	}
	if w := s.waits(); len(w) != 3 || w[0] != time.Second || w[1] != 2*time.Second || w[2] != 4*time.Second {
		t.Errorf("waits = %v", w)
	}
}

func TestDialErrorIsNotSent(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := &sleeper{}
	c, err := New(Options{BaseURL: "http://" + addr, Token: testToken, Sleep: s.sleep, TrustedAuthors: []string{me}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateComment(context.Background(), repo, 1, keyFor("c"), "x")
	if cl := classOf(t, err); cl != ClassNotSent {
		t.Fatalf("class = %v (%v), want not sent", cl, err)
	}
	// Nothing was sent, so a create may try again.
	if len(s.waits()) != maxRetries {
		t.Errorf("waits = %v", s.waits())
	}
	wantState(t, c.FindComment(context.Background(), repo, 1, keyFor("c")), Unknown)
}

func TestCancelledBeforeSendingIsNotSent(t *testing.T) {
	var posts counter
	c, _ := newTest(t, Options{}, route(mock.PostReposIssuesByOwnerByRepo, posts.seq(okIssue)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.CreateIssue(ctx, repo, keyFor("issue"), NewIssue{Title: "t"})
	if cl := classOf(t, err); cl != ClassNotSent || posts.count() != 0 {
		t.Fatalf("class = %v after %d posts", cl, posts.count())
	}
}

func TestCancelledWhileWaitingForAnswerIsMaybe(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, _ := newTest(t, Options{}, route(mock.PostReposIssuesByOwnerByRepo, func(w http.ResponseWriter, r *http.Request) {
		cancel()
		<-r.Context().Done()
	}))
	_, err := c.CreateIssue(ctx, repo, keyFor("issue"), NewIssue{Title: "t"})
	if cl := classOf(t, err); cl != ClassMaybe {
		t.Fatalf("class = %v (%v), want maybe", cl, err)
	}
}

func TestPaginationByCursorIsNotSkipped(t *testing.T) {
	c, _ := newTest(t, Options{},
		route(mock.GetReposIssuesCommentsByOwnerByRepoByIssueNumber, reply(200, []*github.IssueComment{},
			"Link", `<https://api.github.com/repositories/1/issues/7/comments?after=Y3Vyc29y>; rel="next"`)),
	)
	res := c.FindComment(context.Background(), repo, 7, keyFor("c"))
	wantState(t, res, Unknown)
	if !strings.Contains(res.Err.Error(), "pagination") {
		t.Errorf("err = %v", res.Err)
	}
}
