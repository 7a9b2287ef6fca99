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
	"github.com/ghonce/ghonce/tests/testworld"
)

const (
	owner  = testworld.Owner
	name   = testworld.Name
	repo   = testworld.Repo
	bLogin = testworld.Login
	bToken = testworld.Token
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

// budgetFake is the shared test world's fake GitHub (testworld); opts
// change the fake (a clock).
func budgetFake(t *testing.T, opts ...fixtures.Options) *fixtures.Server {
	t.Helper()
	var o []testworld.Option
	for _, f := range opts {
		o = append(o, testworld.Fake(f))
	}
	return testworld.New(t, o...).GitHub
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
	_ = rc.FindIssue(context.Background(), ghcheck.Repo{Owner: owner, Name: name}, ghcheck.IssueQuery{Key: taskkey.Key(taskkey.Identity{Task: "T", Step: "s", Kind: "issue", Repo: repo})})
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
	r := ghcheck.Repo{Owner: owner, Name: name}
	key := taskkey.Key(taskkey.Identity{Task: "T", Step: "s", Kind: "issue", Repo: repo})
	first := c.FindIssue(context.Background(), r, ghcheck.IssueQuery{Key: key})
	used := s.RateUsed(bLogin)
	second := c.FindIssue(context.Background(), r, ghcheck.IssueQuery{Key: key})
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
	if got := c.FindIssue(context.Background(), r, ghcheck.IssueQuery{Key: key}); got.State != ghcheck.Found {
		t.Errorf("after creating it: %v, want found", got.State)
	}
}

// The pacer, on a fake clock: 80 writes go at once, the 81st waits until
// the first is a (lengthened) minute old, and the 501st until the first is
// an hour old; reads are never paced.
func TestPacerKeepsWritesUnderTheLimits(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Unix(1_700_000_000, 0)
	var waits []time.Duration
	b := ghcheck.Budget{
		Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
		Sleep: func(_ context.Context, d time.Duration) error {
			mu.Lock()
			defer mu.Unlock()
			waits = append(waits, d)
			now = now.Add(d)
			return nil
		},
	}
	start := b.Now()
	sent := ghcheck.PaceForTest(b, 501)
	if got := sent[79].Sub(start); got != 0 {
		t.Errorf("80th write waited %s, want 0", got)
	}
	if got := sent[80].Sub(sent[0]); got < time.Minute {
		t.Errorf("81st write %s after the first, want at least a minute", got)
	}
	if got := sent[500].Sub(sent[0]); got < time.Hour {
		t.Errorf("501st write %s after the first, want at least an hour", got)
	}
	for i := 80; i < len(sent); i++ {
		if d := sent[i].Sub(sent[i-80]); d < time.Minute {
			t.Fatalf("writes %d and %d are %s apart: 81 in a minute", i-80, i, d)
		}
	}
}

// FindMany tells pull requests from issues, counts only our author and
// the right thread, and answers unknown, never absent, for the look-ups of
// a listing that failed.
func TestFindMany(t *testing.T) {
	t.Parallel()
	s := budgetFake(t)
	s.AddUser("mallory", "tok-mallory")
	ctx := context.Background()
	r := ghcheck.Repo{Owner: owner, Name: name}
	key := func(s string) string {
		return taskkey.Key(taskkey.Identity{Task: "T", Step: s, Kind: "x", Repo: repo})
	}
	since := time.Now().Add(-time.Hour)
	thread := s.SeedIssue(owner, name, "mallory", fixtures.SeedIssue{Title: "thread"})
	other := s.SeedIssue(owner, name, "mallory", fixtures.SeedIssue{Title: "other"})
	s.SeedIssue(owner, name, bLogin, fixtures.SeedIssue{Title: "ours", Body: taskkey.WithMarker(key("issue"), "b")})
	s.SeedPR(owner, name, bLogin, fixtures.SeedPR{Head: "main", Title: "pr", Body: taskkey.WithMarker(key("pr"), "b")})
	s.SeedIssue(owner, name, "mallory", fixtures.SeedIssue{Title: "look-alike", Body: taskkey.WithMarker(key("stranger"), "b")})
	s.SeedComment(owner, name, thread, bLogin, taskkey.WithMarker(key("comment"), "b"))
	s.SeedComment(owner, name, other, bLogin, taskkey.WithMarker(key("elsewhere"), "b"))
	ls := []ghcheck.Lookup{
		{Kind: ghcheck.LookupIssue, Key: key("issue")},
		{Kind: ghcheck.LookupPR, Key: key("pr")},
		{Kind: ghcheck.LookupIssue, Key: key("pr")}, // a PR is not an issue
		{Kind: ghcheck.LookupIssue, Key: key("stranger")},
		{Kind: ghcheck.LookupComment, Key: key("comment"), Number: thread},
		{Kind: ghcheck.LookupComment, Key: key("elsewhere"), Number: thread}, // on another thread
	}
	want := []ghcheck.State{ghcheck.Found, ghcheck.Found, ghcheck.Absent, ghcheck.Absent, ghcheck.Found, ghcheck.Absent}
	c, err := ghcheck.New(ghcheck.Options{BaseURL: s.URL(), Token: bToken, Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	before := len(s.Requests())
	for i, res := range c.FindMany(ctx, r, since, ls) {
		if res.State != want[i] {
			t.Errorf("look-up %d: %v, want %v (%v)", i, res.State, want[i], res.Err)
		}
	}
	if n := len(s.Requests()) - before; n != 3 {
		t.Errorf("%d requests, want 3 (login, issues, comments)", n)
	}
	// The issues listing fails: its look-ups are unknown; comments still decided.
	s.Inject(fixtures.Fault{Match: fixtures.MatchMethodPath("GET", "/repos/"+repo+"/issues"), Kind: fixtures.Status502BeforeCommit, Times: 100})
	got := c.FindMany(ctx, r, since, ls)
	for i, res := range got {
		w := ghcheck.Unknown
		if ls[i].Kind == ghcheck.LookupComment {
			w = want[i]
		}
		if res.State != w {
			t.Errorf("with issues failing, look-up %d: %v, want %v", i, res.State, w)
		}
	}
}

// After an earlier attempt FindPR reads the newest pull requests back to
// the attempt's start; when they run past a page it falls back to
// the head and label look-ups (read together) after one page instead of
// giving up.
func TestFindPRSinceFallsBackOnABusyRepository(t *testing.T) {
	t.Parallel()
	s := budgetFake(t)
	s.AddUser("mallory", "tok-mallory")
	key := taskkey.Key(taskkey.Identity{Task: "T", Step: "pr", Kind: "pr", Repo: repo})
	sha := s.AddCommit(owner, name, "main")
	s.SetRef(owner, name, "ours", sha)
	n := s.SeedPR(owner, name, bLogin, fixtures.SeedPR{Head: "ours", Base: "main", Title: "t", Body: taskkey.WithMarker(key, "b")})
	for i := range 350 {
		s.SeedPR(owner, name, "mallory", fixtures.SeedPR{Head: "main", Base: "main", Title: "noise " + string(rune('a'+i%26))})
	}
	c, err := ghcheck.New(ghcheck.Options{BaseURL: s.URL(), Token: bToken})
	if err != nil {
		t.Fatal(err)
	}
	r := ghcheck.Repo{Owner: owner, Name: name}
	if _, err := c.Login(context.Background()); err != nil {
		t.Fatal(err)
	}
	before := len(s.Requests())
	res := c.FindPR(context.Background(), r, ghcheck.PRQuery{Key: key, Base: "main", Heads: []string{"ours"}, Since: time.Now().Add(-time.Hour)})
	if res.State != ghcheck.Found || res.Artifact.Number != n {
		t.Fatalf("%v #%d, want found #%d (%v)", res.State, res.Artifact.Number, n, res.Err)
	}
	if got := len(s.Requests()) - before; got != 3 {
		t.Errorf("%d requests, want 3 (a page of the newest, then the head and label lists together)", got)
	}
}

// Pace waits for the pacer before a read that must come right before a
// write: the write sent with its context leaves without waiting again, so
// nothing waits between the read and the write; a later write waits as
// any write does.
func TestPaceBeforeTheRead(t *testing.T) {
	t.Parallel()
	s := budgetFake(t)
	var mu sync.Mutex
	now := time.Unix(1_700_000_000, 0)
	var log []string
	b := ghcheck.Budget{
		Creates: []ghcheck.Limit{{N: 1, Window: time.Minute}},
		Now:     func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
		Sleep: func(_ context.Context, d time.Duration) error {
			mu.Lock()
			defer mu.Unlock()
			log = append(log, "wait")
			now = now.Add(d)
			return nil
		},
	}
	c, err := ghcheck.New(ghcheck.Options{BaseURL: s.URL(), Token: bToken, Budget: b})
	if err != nil {
		t.Fatal(err)
	}
	r := ghcheck.Repo{Owner: owner, Name: name}
	n := s.SeedIssue(owner, name, bLogin, fixtures.SeedIssue{Title: "t", Body: "b"})
	del := func(ctx context.Context) {
		id := s.SeedComment(owner, name, n, bLogin, "x")
		if _, err := c.DeleteComment(ctx, r, id); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		log = append(log, "delete")
		mu.Unlock()
	}
	step := func(what string) {
		mu.Lock()
		log = append(log, what)
		mu.Unlock()
	}
	ctx := context.Background()
	del(ctx) // the window's one write
	paced, err := c.Pace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	step("read")
	del(paced)
	del(paced) // the pace is spent: this one waits
	if got, want := strings.Join(log, " "), "delete wait read delete wait delete"; got != want {
		t.Fatalf("order %q, want %q", got, want)
	}
}
