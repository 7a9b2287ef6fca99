package ghcheck_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/taskkey"
)

const (
	bLogin = "agent-bot"
	bToken = "tok-agent-bot-SECRET-9f2c"
)

type memLogins struct {
	mu sync.Mutex
	m  map[string]string
}

func (c *memLogins) GetLogin(_ context.Context, fp string) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l, ok := c.m[fp]
	return l, ok && l != ""
}
func (c *memLogins) PutLogin(_ context.Context, fp, l string) {
	c.mu.Lock()
	c.m[fp] = l
	c.mu.Unlock()
}
func (c *memLogins) ForgetLogin(_ context.Context, fp string) {
	c.mu.Lock()
	delete(c.m, fp)
	c.mu.Unlock()
}

func budgetFake(t *testing.T) *fixtures.Server {
	s := fixtures.NewServer(fixtures.Options{})
	t.Cleanup(s.Close)
	s.AddUser(bLogin, bToken)
	s.AddRepo("octo", "hello", "main")
	return s
}

func userReads(s *fixtures.Server) int {
	n := 0
	for _, r := range s.Requests() {
		if r.Path == "/user" {
			n++
		}
	}
	return n
}

// The login is read once per cache, stored under a fingerprint that is
// neither the token nor shared across hosts, and forgotten after a 401.
func TestLoginCache(t *testing.T) {
	t.Parallel()
	s := budgetFake(t)
	cache := &memLogins{m: map[string]string{}}
	newClient := func(tok string) *ghcheck.Client {
		c, err := ghcheck.New(ghcheck.Options{BaseURL: s.URL(), Token: tok, LoginCache: cache,
			Sleep: func(context.Context, time.Duration) error { return nil }})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for range 3 {
		if l, err := newClient(bToken).Login(context.Background()); err != nil || l != bLogin {
			t.Fatalf("login %q, %v", l, err)
		}
	}
	if n := userReads(s); n != 1 {
		t.Errorf("GET /user read %d times by three clients sharing a cache, want 1", n)
	}
	for fp, l := range cache.m {
		if strings.Contains(fp, bToken) || strings.Contains(l, bToken) || len(fp) != 32 {
			t.Errorf("cache entry %q=%q shows the token or is not a 32-character fingerprint", fp, l)
		}
	}
	if ghcheck.TokenFingerprint(s.URL(), bToken) == ghcheck.TokenFingerprint("https://ghe.example/api/v3", bToken) {
		t.Error("one fingerprint for two API hosts")
	}
	// The token is revoked (a fake that knows no token): a 401 drops the
	// cached login.
	revoked := fixtures.NewServer(fixtures.Options{})
	t.Cleanup(revoked.Close)
	rc, _ := ghcheck.New(ghcheck.Options{BaseURL: revoked.URL(), Token: bToken, LoginCache: cache})
	cache.PutLogin(context.Background(), ghcheck.TokenFingerprint(revoked.URL(), bToken), bLogin)
	_ = rc.FindIssue(context.Background(), ghcheck.Repo{Owner: "octo", Name: "hello"}, taskkey.Key(taskkey.Identity{Task: "T", Step: "s", Kind: "issue", Repo: "octo/hello"}))
	if _, ok := cache.GetLogin(context.Background(), ghcheck.TokenFingerprint(revoked.URL(), bToken)); ok {
		t.Error("a 401 left the cached login in place")
	}
}

// A repeated read is conditional: GitHub answers 304, which does not
// count against the primary rate limit, and the answer is the same.
func TestRepeatedReadIsConditional(t *testing.T) {
	t.Parallel()
	s := budgetFake(t)
	c, err := ghcheck.New(ghcheck.Options{BaseURL: s.URL(), Token: bToken})
	if err != nil {
		t.Fatal(err)
	}
	r := ghcheck.Repo{Owner: "octo", Name: "hello"}
	key := taskkey.Key(taskkey.Identity{Task: "T", Step: "s", Kind: "issue", Repo: "octo/hello"})
	first := c.FindIssue(context.Background(), r, key)
	used := s.RateUsed(bLogin)
	second := c.FindIssue(context.Background(), r, key)
	if first.State != ghcheck.Absent || second.State != first.State {
		t.Fatalf("answers %v then %v", first.State, second.State)
	}
	if got := s.RateUsed(bLogin); got != used {
		t.Errorf("the repeated read spent %d of the primary limit, want 0", got-used)
	}
	if st := c.Stats(); st.NotModified != 1 {
		t.Errorf("%d answers 304, want 1", st.NotModified)
	}
	// After a change the listing is read anew, not served stale.
	if _, err := c.CreateIssue(context.Background(), r, key, ghcheck.NewIssue{Title: "t", Body: "b"}); err != nil {
		t.Fatal(err)
	}
	if got := c.FindIssue(context.Background(), r, key); got.State != ghcheck.Found {
		t.Errorf("after creating it: %v, want found", got.State)
	}
}
