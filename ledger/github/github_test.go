package github_test

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger"
	ghledger "github.com/ghonce/ghonce/ledger/github"
	"github.com/ghonce/ghonce/ledger/ledgertest"
)

func claimParams(key, who string) ledger.ClaimParams {
	return ledger.ClaimParams{Key: key, Task: "t", Step: "s", Kind: "issue", Repo: "octo/repo",
		Payload: []byte(`{"title":"x"}`), PayloadHash: "h", Owner: ledger.Owner{ID: "run-" + who, Host: who, PID: 1},
		Lease: time.Minute, Why: "claim by " + who}
}

// documented are the REST endpoints the ledger may call, as GitHub's
// OpenAPI description names them.
var documented = []*regexp.Regexp{
	regexp.MustCompile(`^GET /repos/[^/]+/[^/]+/git/ref/.+$`),
	regexp.MustCompile(`^GET /repos/[^/]+/[^/]+/git/matching-refs/.+$`),
	regexp.MustCompile(`^POST /repos/[^/]+/[^/]+/git/refs$`),
	regexp.MustCompile(`^PATCH /repos/[^/]+/[^/]+/git/refs/.+$`),
	regexp.MustCompile(`^DELETE /repos/[^/]+/[^/]+/git/refs/.+$`),
	regexp.MustCompile(`^POST /repos/[^/]+/[^/]+/git/commits$`),
	regexp.MustCompile(`^GET /repos/[^/]+/[^/]+/git/commits/[0-9a-f]{40}$`),
	regexp.MustCompile(`^GET /repos/[^/]+/[^/]+$`),
}

func checkDocumented(t *testing.T, s *fixtures.Server) {
	t.Helper()
	for _, r := range s.Requests() {
		line := r.Method + " " + r.Path
		ok := false
		for _, re := range documented {
			ok = ok || re.MatchString(line)
		}
		if !ok {
			t.Errorf("request %s is not one of the documented endpoints the ledger uses", line)
		}
		if r.Method == http.MethodGet && strings.Contains(r.RawQuery, "per_page") && strings.Contains(r.Path, "matching-refs") {
			t.Errorf("matching-refs documents no per_page: %s?%s", line, r.RawQuery)
		}
	}
}

// TestGitHubsClockNotTheRunners: GitHub's clock is seven hours behind this
// machine's; leases, update times and the in-flight mark are on GitHub's.
func TestGitHubsClockNotTheRunners(t *testing.T) {
	gh := ledgertest.NewClock(time.Now().Add(-7 * time.Hour).Truncate(time.Second))
	s, c := world(t, gh.Now)
	l := open(t, c)
	ctx := t.Context()
	cl, err := l.Claim(ctx, claimParams("k", "a"))
	if err != nil || cl.State != ledger.ClaimCreated {
		t.Fatalf("Claim = %+v, %v", cl, err)
	}
	if !cl.Now.Equal(gh.Now()) || !cl.Entry.LeaseUntil.Equal(gh.Now().Add(time.Minute)) || !cl.Entry.CreatedAt.Equal(gh.Now()) {
		t.Fatalf("claim on GitHub's clock %v: Now %v, lease until %v, created %v", gh.Now(), cl.Now, cl.Entry.LeaseUntil, cl.Entry.CreatedAt)
	}
	if now, err := l.Now(ctx); err != nil || !now.Equal(gh.Now()) {
		t.Errorf("Now = %v, %v; want GitHub's %v", now, err, gh.Now())
	}
	gh.Advance(5 * time.Second)
	if err := l.MarkSending(ctx, ledger.SendingParams{Key: "k", Fence: 1, Lease: time.Minute}); err != nil {
		t.Fatal(err)
	}
	if e, _ := l.Get(ctx, "k"); !e.Sending.At.Equal(gh.Now()) {
		t.Errorf("sending mark at %v, want GitHub's %v", e.Sending.At, gh.Now())
	}
	// By this machine's clock the lease ended seven hours ago; by GitHub's
	// it is live: a second runner is busy.
	if c2, err := open(t, c).Claim(ctx, claimParams("k", "b")); err != nil || c2.State != ledger.ClaimBusy {
		t.Fatalf("second runner = %+v, %v; want busy", c2, err)
	}
	gh.Advance(time.Minute)
	if c3, err := open(t, c).Claim(ctx, claimParams("k", "b")); err != nil || c3.State != ledger.ClaimAcquired || !c3.Entry.Sending.At.Equal(gh.Now().Add(-time.Minute)) {
		t.Fatalf("after the lease on GitHub's clock = %+v, %v; want acquired, the mark kept", c3, err)
	}
	checkDocumented(t, s)
}

// TestAnswersLost: an answer lost after GitHub stored the write (a
// dropped connection, a 504) is settled by reading the ref back.
func TestAnswersLost(t *testing.T) {
	clock := ledgertest.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	s, c := world(t, clock.Now)
	l := open(t, c)
	ctx := t.Context()
	isRef := func(method string) func(r *http.Request) bool {
		return func(r *http.Request) bool { return r.Method == method && strings.Contains(r.URL.Path, "/git/refs") }
	}
	for _, kind := range []fixtures.FaultKind{fixtures.DropAfterCommit, fixtures.Status504AfterCommit, fixtures.Status502BeforeCommit, fixtures.DropBeforeCommit} {
		key := "k-" + kind.String()
		s.Inject(fixtures.Fault{Match: isRef(http.MethodPost), Kind: kind})
		cl, err := l.Claim(ctx, claimParams(key, "a"))
		if err != nil || cl.State != ledger.ClaimCreated {
			t.Fatalf("%s on the claim's ref create: %+v, %v; want created", kind, cl, err)
		}
		s.Inject(fixtures.Fault{Match: isRef(http.MethodPatch), Kind: kind})
		e, err := l.Finish(ctx, ledger.FinishParams{Key: key, Fence: 1, Status: ledger.Done, Outcome: "created", Ref: ledger.Ref{Number: 7}, Why: "ok"})
		if err != nil || e.Status != ledger.Done {
			t.Fatalf("%s on the finish's ref update: %+v, %v; want done", kind, e, err)
		}
		if h, _ := l.History(ctx, key); len(h) != 2 {
			t.Errorf("%s: history %+v, want claim and finish once each", kind, h)
		}
		// A fresh process agrees.
		if cl, err := open(t, c).Claim(ctx, claimParams(key, "b")); err != nil || cl.State != ledger.ClaimDone || cl.Entry.Ref.Number != 7 {
			t.Errorf("%s: replay = %+v, %v; want done with #7", kind, cl, err)
		}
	}
	s.ClearFaults()
	checkDocumented(t, s)
}

// TestShareNothingRacers: 16 runners with nothing in common but the
// repository (each its own client and ledger) claim one key at once.
func TestShareNothingRacers(t *testing.T) {
	s, _ := world(t, nil)
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		states = map[ledger.ClaimState]int{}
		start  = make(chan struct{})
	)
	for i := range 16 {
		c, err := ghcheck.New(ghcheck.Options{BaseURL: s.URL(), Token: "tok-octo"})
		if err != nil {
			t.Fatal(err)
		}
		l := open(t, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			cl, err := l.Claim(t.Context(), claimParams("k", fmt.Sprint("r", i)))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("racer %d: %v", i, err)
				return
			}
			states[cl.State]++
		}()
	}
	close(start)
	wg.Wait()
	if states[ledger.ClaimCreated] != 1 || states[ledger.ClaimBusy] != 15 {
		t.Fatalf("16 share-nothing racers: %v; want 1 created, 15 busy", states)
	}
}

// TestNamespaceRefused: a host that refuses refs outside refs/heads and
// refs/tags is an error that says so; nothing falls back.
func TestNamespaceRefused(t *testing.T) {
	s, c := world(t, nil)
	s.RefuseRefs("refs/ghonce/")
	_, err := open(t, c).Claim(t.Context(), claimParams("k", "a"))
	if err == nil || !strings.Contains(err.Error(), "does not take refs outside refs/heads and refs/tags") || errors.Is(err, ledger.ErrUnavailable) {
		t.Fatalf("Claim on a host that refuses the namespace: %v", err)
	}
	if _, err := open(t, c).Get(t.Context(), "k"); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("Get after the refusal: %v, want no entry", err)
	}
}

// TestTokenWithoutContentsWrite: a token that may read but not write the
// repository (a workflow without `permissions: contents: write`) gets an
// error naming the permission.
func TestTokenWithoutContentsWrite(t *testing.T) {
	s, c := world(t, nil)
	s.SetReadOnly("octo")
	_, err := open(t, c).Claim(t.Context(), claimParams("k", "a"))
	if err == nil || !strings.Contains(err.Error(), "the token cannot write refs: grant contents: write") || strings.Contains(err.Error(), "tok-octo") {
		t.Fatalf("Claim with a read-only token: %v", err)
	}
}

// TestClaimsAreNotBranches: a claim is a ref under refs/ghonce/, not a
// branch or a tag.
func TestClaimsAreNotBranches(t *testing.T) {
	s, c := world(t, nil)
	l := open(t, c)
	if _, err := l.Claim(t.Context(), claimParams("k", "a")); err != nil {
		t.Fatal(err)
	}
	if b, ok := s.Branch("octo", "repo", strings.TrimPrefix(l.RefOf("k"), "refs/heads/")); ok {
		t.Errorf("the claim shows as branch at %s", b)
	}
	if !strings.HasPrefix(l.RefOf("k"), "refs/ghonce/claims/") {
		t.Errorf("RefOf = %s", l.RefOf("k"))
	}
}

// TestPrune: done claims older than the cut are removed, the others and
// the ones Keep spares stay; a pruned key can be claimed anew.
func TestPrune(t *testing.T) {
	clock := ledgertest.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	s, c := world(t, clock.Now)
	l := open(t, c)
	ctx := t.Context()
	done := func(key, kind string) {
		p := claimParams(key, "a")
		p.Kind = kind
		cl, err := l.Claim(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Finish(ctx, ledger.FinishParams{Key: key, Fence: cl.Entry.Fence, Status: ledger.Done, Outcome: "created", Why: "ok"}); err != nil {
			t.Fatal(err)
		}
	}
	done("old", "issue")
	done("old-exec", "exec")
	if _, err := l.Claim(ctx, claimParams("running", "a")); err != nil {
		t.Fatal(err)
	}
	clock.Advance(48 * time.Hour)
	done("new", "issue")
	keepExec := func(e *ledger.Entry) bool { return e.Kind == "exec" }
	dry, err := l.Prune(ctx, ghledger.PruneParams{Before: clock.Now().Add(-24 * time.Hour), Keep: keepExec, DryRun: true})
	if err != nil || len(dry) != 1 || dry[0].Key != "old" {
		t.Fatalf("dry run = %v, %v; want old alone", dry, err)
	}
	if es, _ := l.List(ctx, ledger.ListParams{}); len(es) != 4 {
		t.Fatalf("dry run removed something: %d entries", len(es))
	}
	gone, err := l.Prune(ctx, ghledger.PruneParams{Before: clock.Now().Add(-24 * time.Hour), Keep: keepExec})
	if err != nil || len(gone) != 1 || gone[0].Key != "old" {
		t.Fatalf("Prune = %v, %v", gone, err)
	}
	if _, err := l.Get(ctx, "old"); !errors.Is(err, ledger.ErrNotFound) {
		t.Errorf("Get(old) after prune: %v", err)
	}
	if cl, err := open(t, c).Claim(ctx, claimParams("old", "b")); err != nil || cl.State != ledger.ClaimCreated {
		t.Errorf("claim of a pruned key = %+v, %v; want created", cl, err)
	}
	checkDocumented(t, s)
}

// TestClaimIsTheSendingMark: asked to (ClaimParams.Sending), the claim that
// creates a key's ref carries the in-flight mark, dated by GitHub's clock
// like the claim, in the same commit: a read, a commit and a ref, nothing
// more. A claim that takes the key over keeps the earlier attempt's mark.
func TestClaimIsTheSendingMark(t *testing.T) {
	clock := ledgertest.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	s, c := world(t, clock.Now)
	l := open(t, c)
	p := claimParams("k", "a")
	p.Sending = true
	cl, err := l.Claim(t.Context(), p)
	if err != nil || cl.State != ledger.ClaimCreated {
		t.Fatalf("Claim = %+v, %v", cl, err)
	}
	if cl.Entry.Sending != (ledger.Sending{At: clock.Now()}) {
		t.Errorf("claim's mark = %+v, want at GitHub's %v", cl.Entry.Sending, clock.Now())
	}
	if e, err := open(t, c).Get(t.Context(), "k"); err != nil || e.Sending != cl.Entry.Sending {
		t.Errorf("a fresh runner reads the mark %+v, %v; want %+v", e.Sending, err, cl.Entry.Sending)
	}
	var writes int
	for _, r := range s.Requests() {
		if r.Method != http.MethodGet {
			writes++
		}
	}
	if writes != 2 {
		t.Errorf("the claim with its mark took %d writes, want 2 (a commit, a ref)", writes)
	}
	if _, err := l.Finish(t.Context(), ledger.FinishParams{Key: "k", Fence: 1, Status: ledger.Attempting, Why: "release"}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	p2 := claimParams("k", "b")
	p2.Sending = true
	if c2, err := open(t, c).Claim(t.Context(), p2); err != nil || c2.State != ledger.ClaimAcquired || c2.Entry.Sending != cl.Entry.Sending {
		t.Fatalf("takeover = %+v, %v; want acquired with the first attempt's mark %+v", c2, err, cl.Entry.Sending)
	}
	checkDocumented(t, s)
}

// TestRefThatKeepsFailing: a ref GitHub keeps refusing with 502 (nothing
// stored) gets the same write once more, then the operation ends
// unavailable, saying so, instead of writing again and again (each write
// paced) against a GitHub that fails them.
func TestRefThatKeepsFailing(t *testing.T) {
	s, c := world(t, nil)
	l := open(t, c)
	ctx := t.Context()
	if _, err := l.Claim(ctx, claimParams("k", "a")); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	moves := 0
	s.Inject(fixtures.Fault{Kind: fixtures.Status502BeforeCommit, Times: 1 << 20, Match: func(r *http.Request) bool {
		if r.Method != http.MethodPatch || !strings.Contains(r.URL.Path, "/git/refs/ghonce/") {
			return false
		}
		mu.Lock()
		moves++
		mu.Unlock()
		return true
	}})
	_, err := l.Finish(ctx, ledger.FinishParams{Key: "k", Fence: 1, Status: ledger.Done, Outcome: "created", Ref: ledger.Ref{Number: 7}, Why: "ok"})
	if !errors.Is(err, ledger.ErrUnavailable) || !strings.Contains(err.Error(), "has not taken the write") {
		t.Fatalf("Finish against a ref that keeps answering 502: %v; want unavailable, saying GitHub has not taken it", err)
	}
	if moves != 2 {
		t.Errorf("the ref's move was sent %d times, want 2 (once more after the first 502)", moves)
	}
	s.ClearFaults()
	if e, err := l.Get(ctx, "k"); err != nil || e.Status != ledger.Attempting {
		t.Errorf("after it: %+v, %v; want the claim still attempting", e, err)
	}
}

// TestRateLimitIsNotAPermission: a 403 of the primary rate limit is not
// taken for a token without contents: write.
func TestRateLimitIsNotAPermission(t *testing.T) {
	s, c := world(t, nil)
	s.Inject(fixtures.Fault{Kind: fixtures.PrimaryRateLimit, Times: 1 << 20})
	_, err := open(t, c).Claim(t.Context(), claimParams("k", "a"))
	if err == nil || strings.Contains(err.Error(), "contents: write") || !errors.Is(err, ledger.ErrUnavailable) {
		t.Fatalf("Claim under a spent rate limit: %v; want unavailable, not a permission", err)
	}
}
