package reconcile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
	"github.com/ghonce/ghonce/tests/testworld"
)

// The request budget: each target of issue 10 is a test that fails when
// it is exceeded. Requests are counted on the fake.

// budgetEngine is an engine whose client caches its login in the ledger,
// as the CLI's does; it returns the ledger too.
func (w *world) budgetEngine(mod ...func(*reconcile.Config, *ghcheck.Options)) (*reconcile.Engine, ledger.Ledger) {
	w.t.Helper()
	l := w.OpenLedger()
	opts := ghcheck.Options{
		BaseURL: w.GitHub.URL(), Token: token, HTTPClient: &http.Client{Timeout: 10 * time.Second},
		Sleep: func(context.Context, time.Duration) error { return nil }, LoginCache: reconcile.LoginCache(l),
	}
	cfg := reconcile.Config{Ledger: l, LedgerNew: l.Created, Wait: 5 * time.Second, Settle: -1}
	for _, m := range mod {
		m(&cfg, &opts)
	}
	c, err := ghcheck.New(opts)
	if err != nil {
		w.t.Fatal(err)
	}
	cfg.GitHub = c
	return reconcile.New(cfg), l
}

// spent runs fn and returns the requests the fake received meanwhile.
func (w *world) spent(fn func()) []string {
	w.t.Helper()
	w.GitHub.WaitIdle()
	before := len(w.GitHub.Requests())
	fn()
	w.GitHub.WaitIdle()
	var out []string
	for _, r := range w.GitHub.Requests()[before:] {
		q := ""
		if r.RawQuery != "" {
			q = "?" + r.RawQuery
		}
		out = append(out, fmt.Sprintf("%s %s%s → %d", r.Method, r.Path, q, r.Status))
	}
	return out
}

func atMost(t *testing.T, what string, reqs []string, limit int) {
	t.Helper()
	t.Logf("%s: %d requests\n\t%s", what, len(reqs), strings.Join(reqs, "\n\t"))
	if len(reqs) > limit {
		t.Errorf("%s: %d GitHub requests, want at most %d", what, len(reqs), limit)
	}
}

// establish makes the ledger established: an earlier run used it (and
// cached the login).
func (w *world) establish() {
	w.t.Helper()
	e, l := w.budgetEngine()
	if _, err := do(w.ctx, e, reconcile.Action{Task: "SETUP", Step: "c", Repo: repo, Spec: reconcile.Comment{Number: w.issue(), Body: "hello"}}); err != nil {
		w.t.Fatal(err)
	}
	l.Close()
}

func (w *world) issue() int {
	if is := w.GitHub.Issues(owner, name); len(is) > 0 {
		return is[0].Number
	}
	return w.GitHub.SeedIssue(owner, name, other, fixtures.SeedIssue{Title: "bug"})
}

func TestRequestsFirstPRCreateAndReplay(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.establish()
	w.Push("fix-42")
	e, _ := w.budgetEngine()
	a := reconcile.Action{Task: "ISSUE-42", Step: "pr", Repo: repo, Spec: reconcile.PR{Base: "main", Head: "fix-42", Title: "Fix", Body: "b"}}
	reqs := w.spent(func() {
		r, err := do(w.ctx, e, a)
		if err != nil || r.Outcome != outcome.Created {
			t.Fatalf("first pr create: %+v, %v", r, err)
		}
	})
	// cached login (0) + head list + key-label list + create + label add.
	atMost(t, "first pr create on an established ledger", reqs, 4)
	reqs = w.spent(func() {
		e2, _ := w.budgetEngine()
		if r, err := do(w.ctx, e2, a); err != nil || r.Outcome != outcome.Skipped {
			t.Fatalf("replay: %+v, %v", r, err)
		}
	})
	atMost(t, "replay", reqs, 0)

	// Trusting the ledger (one ledger for every run of these tasks).
	w.Push("fix-43")
	e3, _ := w.budgetEngine(func(c *reconcile.Config, _ *ghcheck.Options) { c.TrustNeverAttempted = true })
	reqs = w.spent(func() {
		if _, err := do(w.ctx, e3, reconcile.Action{Task: "ISSUE-43", Step: "pr", Repo: repo, Spec: reconcile.PR{Base: "main", Head: "fix-43", Title: "Fix", Body: "b"}}); err != nil {
			t.Fatal(err)
		}
	})
	atMost(t, "first pr create, ledger trusted", reqs, 2)
}

// A rerun after an attempt whose create landed but whose answer was lost
// (the connection dropped after GitHub committed: the same ledger state a
// kill leaves) costs at most 3 requests for every kind (its example), on
// a repository whose issue #1 has a thread of 3,000 comments; so does one
// after a create refused before GitHub stored it (a kill before sending),
// which the rerun makes once.
func TestRequestsRerunAfterCrash(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		task  string
		fault fixtures.FaultKind
		want  outcome.Outcome
		what  string
		sent  int // the creates GitHub receives, the faulted one included
	}{
		{"CRASH", fixtures.DropAfterCommit, outcome.Found, "a crash after GitHub stored the create", 1},
		{"CRASH-BEFORE", fixtures.Status502BeforeCommit, outcome.Created, "a crash before GitHub stored it", 2},
	} {
		t.Run(tc.task, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			clock := time.Now().Add(-72 * time.Hour)
			now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
			w := newWorld(t, testworld.Fake(fixtures.Options{Now: now}))
			w.SeedExamples()
			for i := range 3000 {
				w.GitHub.SeedComment(owner, name, 1, other, fmt.Sprintf("comment %d", i))
			}
			mu.Lock()
			clock = time.Now()
			mu.Unlock()
			w.establish()
			for kind, spec := range examples(t) {
				t.Run(kind, func(t *testing.T) {
					method, path := testworld.WriteOf(spec, owner, name)
					creates := func() (n int) {
						for _, q := range w.GitHub.Requests() {
							if q.Method == method && strings.EqualFold(q.Path, path) {
								n++
							}
						}
						return n
					}
					before := creates()
					a := reconcile.Action{Task: tc.task, Repo: repo, Spec: spec}
					w.GitHub.Inject(fixtures.Fault{Match: fixtures.MatchMethodPath(method, path), Kind: tc.fault})
					e, l := w.budgetEngine()
					if _, err := do(w.ctx, e, a); err == nil {
						t.Fatalf("the faulted create did not leave the entry unconfirmed")
					}
					l.Close()
					var r *outcome.Result
					reqs := w.spent(func() {
						e2, l2 := w.budgetEngine()
						var err error
						if r, err = do(w.ctx, e2, a); err != nil {
							t.Fatalf("rerun: %v", err)
						}
						l2.Close()
					})
					if r.Outcome != tc.want {
						t.Errorf("rerun: outcome %s, want %s", r.Outcome, tc.want)
					}
					atMost(t, kind+" rerun after "+tc.what, reqs, 3)
					if n := creates() - before; n != tc.sent {
						t.Errorf("GitHub received %d creates (%s %s), want %d", n, method, path, tc.sent)
					}
				})
			}
		})
	}
}

// seedAttempting records n attempting entries in the ledger, spread over
// pull requests, issues and comments, and makes the artifact of every
// second one on the fake (as a crash after GitHub's commit leaves it).
// It returns the keys that exist.
func seedAttempting(t *testing.T, w *world, l ledger.Ledger, n int) map[string]bool {
	t.Helper()
	thread := w.issue()
	exists := map[string]bool{}
	for i := range n {
		var spec reconcile.Spec
		switch i % 3 {
		case 0:
			spec = &reconcile.PR{Base: "main", Head: fmt.Sprintf("h%d", i), Title: "t", Body: "b"}
		case 1:
			spec = &reconcile.Issue{Title: "t", Body: "b"}
		default:
			spec = &reconcile.Comment{Number: thread, Body: "b"}
		}
		a := reconcile.Action{Task: fmt.Sprintf("T-%d", i), Step: "s", Repo: repo, Spec: spec}
		key := keyOf(t, a)
		payload, _ := json.Marshal(spec)
		_, err := l.Claim(w.ctx, ledger.ClaimParams{Key: key, Task: a.Task, Step: "s", Kind: spec.Kind(), Repo: repo, Target: spec.Target(),
			Payload: payload, PayloadHash: "h", Owner: ledger.Owner{ID: "gone", Host: "elsewhere", PID: 1}, Lease: time.Nanosecond, Why: "seed"})
		if err != nil {
			t.Fatal(err)
		}
		if i%2 == 1 {
			continue
		}
		exists[key] = true
		body := taskkey.WithMarker(key, "b")
		switch i % 3 {
		case 0:
			w.Push(fmt.Sprintf("h%d", i))
			w.GitHub.SeedPR(owner, name, login, fixtures.SeedPR{Head: fmt.Sprintf("h%d", i), Base: "main", Title: "t", Body: body})
		case 1:
			w.GitHub.SeedIssue(owner, name, login, fixtures.SeedIssue{Title: "t", Body: body})
		default:
			w.GitHub.SeedComment(owner, name, thread, login, body)
		}
	}
	return exists
}

func TestReconcileBatched(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.establish()
	const n = 250
	e, l := w.budgetEngine()
	exists := seedAttempting(t, w, l, n)
	// A stranger's look-alike of an absent entry's comment does not count.
	var absentComment string
	for _, ent := range mustList(t, l) {
		if ent.Kind == "comment" && !exists[ent.Key] {
			absentComment = ent.Key
			break
		}
	}
	w.GitHub.SeedComment(owner, name, w.issue(), other, taskkey.WithMarker(absentComment, "look-alike"))
	var out []outcome.Settlement
	reqs := w.spent(func() {
		var err error
		if out, err = e.Reconcile(w.ctx, reconcile.Filter{}); err != nil {
			t.Fatal(err)
		}
	})
	atMost(t, fmt.Sprintf("reconcile of %d entries", n), reqs, (n+99)/100+3)
	if len(out) != n {
		t.Fatalf("settled %d entries, want %d", len(out), n)
	}
	for _, s := range out {
		want := ledger.Failed
		if exists[s.Key] {
			want = ledger.Done
		}
		if s.To != want {
			t.Errorf("%s (%s): %s, want %s (%s)", s.Key, s.Kind, s.To, want, s.Why)
		}
	}
}

func mustList(t *testing.T, l ledger.Ledger) []*ledger.Entry {
	t.Helper()
	ents, err := l.List(context.Background(), ledger.ListParams{Status: ledger.Attempting})
	if err != nil {
		t.Fatal(err)
	}
	return ents
}

// A burst of 200 comments through one Engine is paced under the fake's
// content limits (scaled down from 80/min and 500/h so the test runs in
// seconds) and never meets a secondary rate limit; each exists once. The
// client is configured at 60% of the fake's limits, the headroom a user
// keeps for jitter at such short windows (the 5% margin suffices at
// GitHub's minute and hour; -race on 2 busy cores delays requests by tens
// of milliseconds).
func TestBurstIsPacedUnderSecondaryLimits(t *testing.T) {
	t.Parallel()
	limits := []fixtures.ContentLimit{{N: 10, Window: 100 * time.Millisecond}, {N: 30, Window: 500 * time.Millisecond}}
	w := newWorld(t, testworld.Fake(fixtures.Options{ContentLimits: limits}))
	s := w.GitHub
	thread := w.issue()
	e, _ := w.budgetEngine(func(_ *reconcile.Config, o *ghcheck.Options) {
		o.Budget.Creates = []ghcheck.Limit{{N: 6, Window: 100 * time.Millisecond}, {N: 18, Window: 500 * time.Millisecond}}
	})
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := do(w.ctx, e, reconcile.Action{Task: "BURST", Step: fmt.Sprint("c", i), Repo: repo, Spec: reconcile.Comment{Number: thread, Body: "hi"}})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if got := s.SecondaryLimited(); got != 0 {
		t.Errorf("the fake answered %d secondary rate limits", got)
	}
	if got := len(s.Comments(owner, name, thread)); got != 200 {
		t.Errorf("%d comments, want 200", got)
	}

	// Without pacing the fake refuses: the limit is real. The fake's clock
	// is frozen here, so the 15 writes fall in one window however slowly
	// a busy machine sends them.
	frozen := time.Now()
	s2 := testworld.New(t, testworld.Fake(fixtures.Options{ContentLimits: limits, Now: func() time.Time { return frozen }})).GitHub
	thread = s2.SeedIssue(owner, name, login, fixtures.SeedIssue{Title: "bug"})
	c, err := ghcheck.New(ghcheck.Options{BaseURL: s2.URL(), Token: token, Budget: ghcheck.Budget{NoPacing: true}, MaxWait: time.Nanosecond,
		Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 15 {
		_, _ = c.CreateComment(w.ctx, ghcheck.Repo{Owner: owner, Name: name}, thread, keyOf(t, reconcile.Action{Task: "X", Step: fmt.Sprint(i), Repo: repo, Spec: reconcile.Comment{Number: thread, Body: "x"}}), "x")
	}
	if s2.SecondaryLimited() == 0 {
		t.Error("15 unpaced comments in one window met no secondary limit: the fake does not enforce it")
	}
	if got := len(s2.Comments(owner, name, thread)); got != 10 {
		t.Errorf("%d of 15 unpaced comments were made, want 10 (the fake's limit)", got)
	}
}
