package reconcile_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/ledgertest"
	"github.com/ghonce/ghonce/ledger/sqlite"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
)

var postPulls = fixtures.MatchMethodPath("POST", "/repos/"+repo+"/pulls")

// Seed scenario A: without a ledger, a retry after a crash that happened
// after the create opens a second PR.
func TestSeedA_NoLedgerOpensDuplicates(t *testing.T) {
	w := newWorld(t)
	w.GitHub.Inject(fixtures.Fault{Match: postPulls, Kind: fixtures.DropAfterCommit})
	gh := github.NewClient(nil).WithAuthToken(token)
	gh.BaseURL, _ = gh.BaseURL.Parse(w.GitHub.URL())
	var err error
	for attempt := 1; attempt <= 2; attempt++ {
		head := "agent/try-" + string(rune('0'+attempt))
		w.Push(head)
		_, _, err = gh.PullRequests.Create(w.ctx, owner, name, &github.NewPullRequest{Title: github.String("Fix"), Head: &head, Base: github.String("main")})
	}
	if err != nil {
		t.Fatalf("second attempt: %v", err)
	}
	if n := len(w.prs()); n != 2 {
		t.Fatalf("naive agent: %d PRs, want the duplicate (2) that ghonce exists to prevent", n)
	}
}

// Seed scenario B: a rerun after success returns the stored result and
// sends no request at all to GitHub.
func TestSeedB_DoneIsSkippedWithoutAskingGitHub(t *testing.T) {
	w := newWorld(t)
	w.Push("fix-42")
	first := mustDo(t, w.engine(), prAction("ISSUE-42", "fix-42", "Fix", "body"))
	if first.Outcome != outcome.Created || first.Number == 0 || first.URL == "" {
		t.Fatalf("first run: %+v, want created with number and url", first)
	}
	before := len(w.GitHub.Requests())
	again := mustDo(t, w.engine(), prAction("ISSUE-42", "fix-42", "Fix", "body"))
	if again.Outcome != outcome.Skipped || again.Number != first.Number || again.PayloadChanged {
		t.Fatalf("rerun: %+v, want skipped with the same number and payload_changed false", again)
	}
	if n := len(w.GitHub.Requests()) - before; n != 0 {
		t.Fatalf("rerun of a done action sent %d requests to GitHub, want 0", n)
	}
	if n := len(w.prs()); n != 1 {
		t.Fatalf("%d PRs, want 1", n)
	}
}

// Seed scenario C, the seed article's honest failure, now closed: GitHub
// created the PR and the answer was lost; the rerun finds it.
func TestSeedC_CreatedButAnswerLostIsFound(t *testing.T) {
	for _, lose := range []string{"keep ledger", "delete ledger"} {
		t.Run(lose, func(t *testing.T) {
			w := newWorld(t)
			w.Push("fix-42")
			w.GitHub.Inject(fixtures.Fault{Match: postPulls, Kind: fixtures.DropAfterCommit})
			_, err := do(w.ctx, w.engine(), prAction("ISSUE-42", "fix-42", "Fix", "body"))
			var uc *outcome.UnconfirmedError
			if !errors.As(err, &uc) {
				t.Fatalf("lost answer: err = %v, want *UnconfirmedError (a maybe is never a no)", err)
			}
			if lose == "delete ledger" {
				if err := os.RemoveAll(w.Ledger); err != nil {
					t.Fatal(err)
				}
			}
			r := mustDo(t, w.engine(), prAction("ISSUE-42", "fix-42", "Fix", "body"))
			if r.Outcome != outcome.Found {
				t.Fatalf("rerun outcome %s, want found", r.Outcome)
			}
			if prs := w.prs(); len(prs) != 1 || prs[0].Number != r.Number {
				t.Fatalf("PRs %+v, want exactly the one found (#%d)", prs, r.Number)
			}
		})
	}
}

// A lost answer (the create committed, its answer dropped: exit 3, "it may
// have happened") and then a run on another head, with the kind's default
// step: with the same title it finds the first PR; with a reworded one it
// is not told the first is its own (its caller was answered, and may have
// moved on to another act): it gets the facts, and the first PR is still
// the only one. With OnChangeWarn, or the step named, it is the first.
func TestRewordedRetryOnAnotherHeadFindsTheFirstPR(t *testing.T) {
	w := newWorld(t)
	w.Push("agent/attempt-1")
	w.Push("agent/attempt-2")
	w.GitHub.Inject(fixtures.Fault{Match: postPulls, Kind: fixtures.DropAfterCommit})
	pr := func(head, title, body string) reconcile.Action {
		a := prAction("ISSUE-42", head, title, body)
		a.Step = ""
		return a
	}
	_, err := do(w.ctx, w.engine(), pr("agent/attempt-1", "Fix the bug", "I fixed it."))
	if err == nil {
		t.Fatal("lost answer: want an error")
	}
	var so *reconcile.SameOrAnotherError
	reworded := pr("agent/attempt-2", "Fix bug #42", "This change fixes the bug.")
	if _, err := do(w.ctx, w.engine(), reworded); !errors.As(err, &so) || so.Existing != "Fix the bug" || so.Text != "Fix bug #42" || so.Made.IsZero() {
		t.Fatalf("reworded retry: %v, want a *SameOrAnotherError with both titles and when the first was made", err)
	}
	r := mustDo(t, w.engine(), pr("agent/attempt-2", "Fix the bug", "This change fixes the bug."))
	if r.Outcome != outcome.Skipped || !r.PayloadChanged || r.Number != so.Result.Number {
		t.Fatalf("the same title: %+v, want the first PR #%d skipped with payload_changed", r, so.Result.Number)
	}
	prs := w.prs()
	if len(prs) != 1 || prs[0].Head != "agent/attempt-1" {
		t.Fatalf("PRs %+v, want only the first attempt's", prs)
	}
	named := reworded
	named.Step = "pr-create"
	if r = mustDo(t, w.engine(), named); r.Outcome != outcome.Skipped || r.Number != so.Result.Number || !strings.Contains(r.Warning, `the step "pr-create" was named`) {
		t.Fatalf("reworded with the step named: %+v, want the first, skipped, with why", r)
	}
	reworded.OnChange = reconcile.OnChangeWarn
	r = mustDo(t, w.engine(), reworded)
	if r.Outcome != outcome.Skipped || !r.PayloadChanged {
		t.Fatalf("reworded with warn: %+v, want skipped with payload_changed", r)
	}
	if n := len(w.prs()); n != 1 {
		t.Fatalf("%d PRs, want 1", n)
	}
}

func TestStrangersLookAlikePRIsNotAdopted(t *testing.T) {
	w := newWorld(t)
	a := prAction("ISSUE-42", "fix-42", "Fix", "body")
	key := keyOf(t, a)
	// Another user's PR carries our marker and label; the bare-branch head
	// trap would return it for any head.
	stranger := w.GitHub.SeedPR(owner, name, other, fixtures.SeedPR{Title: "Fix", Body: taskkey.WithMarker(key, "mine now"), Head: "fix-42-copy", Labels: []string{taskkey.Label(key)}})
	w.Push("fix-42")
	r := mustDo(t, w.engine(), a)
	if r.Outcome != outcome.Created || r.Number == stranger {
		t.Fatalf("result %+v: adopted the stranger's PR #%d", r, stranger)
	}
	if n := len(w.prs()); n != 2 {
		t.Fatalf("%d PRs, want the stranger's and ours", n)
	}
}

func TestReadsThatFailLeaveTheEntryAttempting(t *testing.T) {
	w := newWorld(t)
	w.Push("fix-42")
	w.GitHub.Inject(fixtures.Fault{Match: fixtures.MatchMethod("GET"), Kind: fixtures.Status502BeforeCommit, Times: 1000})
	_, err := do(w.ctx, w.engine(), prAction("ISSUE-42", "fix-42", "Fix", "body"))
	var uc *outcome.UnconfirmedError
	if !errors.As(err, &uc) || !strings.Contains(err.Error(), "reconcile") {
		t.Fatalf("err = %v, want *UnconfirmedError that points to a rerun or ghonce reconcile", err)
	}
	if w.writes() != 0 {
		t.Fatalf("%d writes reached GitHub although it could not be asked first", w.writes())
	}
	w.GitHub.ClearFaults()
	if r := mustDo(t, w.engine(), prAction("ISSUE-42", "fix-42", "Fix", "body")); r.Outcome != outcome.Created {
		t.Fatalf("rerun: %s, want created", r.Outcome)
	}
}

func TestRefusedCreateIsFailedAndRetried(t *testing.T) {
	w := newWorld(t)
	// The head branch was never pushed: GitHub answers 422 and creates nothing.
	_, err := do(w.ctx, w.engine(), prAction("ISSUE-42", "fix-42", "Fix", "body"))
	var uc *outcome.UnconfirmedError
	if err == nil || errors.As(err, &uc) || !strings.Contains(err.Error(), "nothing was created") {
		t.Fatalf("err = %v, want a plain error saying nothing was created", err)
	}
	w.Push("fix-42")
	r := mustDo(t, w.engine(), prAction("ISSUE-42", "fix-42", "Fix", "body"))
	if r.Outcome != outcome.Created || r.Attempts != 2 {
		t.Fatalf("retry: %+v, want created on attempt 2", r)
	}
}

func TestAlreadyExistsButNotTaggedIsAConflict(t *testing.T) {
	w := newWorld(t)
	w.Push("fix-42")
	// Our own identity opened a PR for the same head by hand, without a marker.
	w.GitHub.SeedPR(owner, name, login, fixtures.SeedPR{Title: "by hand", Head: "fix-42"})
	_, err := do(w.ctx, w.engine(), prAction("ISSUE-42", "fix-42", "Fix", "body"))
	var ce *outcome.ConflictError
	if !errors.As(err, &ce) {
		t.Fatalf("err = %v, want *ConflictError", err)
	}
	if n := len(w.prs()); n != 1 {
		t.Fatalf("%d PRs, want 1", n)
	}
}

// Many workers on one ledger and one key: exactly one acts; the others wait
// for its outcome and report it.
func TestConcurrentRunnersOnOneLedgerCreateOnce(t *testing.T) {
	w := newWorld(t)
	w.Push("fix-42")
	const n = 8
	engines := make([]*reconcile.Engine, n)
	for i := range engines {
		engines[i] = w.engine(func(c *reconcile.Config) { c.Owner = reconcile.NewOwner(); c.Wait = time.Minute })
	}
	var wg sync.WaitGroup
	results := make([]*outcome.Result, n)
	errs := make([]error, n)
	for i := range engines {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			results[i], errs[i] = do(w.ctx, engines[i], prAction("ISSUE-42", "fix-42", "Fix", "body"))
		}(i)
	}
	wg.Wait()
	created := 0
	for i := range results {
		if errs[i] != nil {
			t.Fatalf("worker %d: %v", i, errs[i])
		}
		if results[i].Outcome == outcome.Created {
			created++
		}
	}
	if created != 1 || len(w.prs()) != 1 {
		t.Fatalf("%d created, %d PRs; want 1 and 1", created, len(w.prs()))
	}
}

func TestHeldByALiveProcessElsewhereIsInProgress(t *testing.T) {
	w := newWorld(t)
	w.Push("fix-42")
	a := prAction("ISSUE-42", "fix-42", "Fix", "body")
	l, err := sqlite.Open(w.ctx, w.Ledger, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	holder := ledger.Owner{ID: "other-host/77/x", Host: "other-host", PID: 77}
	if _, err := l.Claim(w.ctx, ledger.ClaimParams{Key: keyOf(t, a), Task: a.Task, Step: a.Step, Kind: "pr", Repo: repo, Target: "main", Owner: holder, Lease: time.Hour}); err != nil {
		t.Fatal(err)
	}
	var slept time.Duration
	e := w.engine(func(c *reconcile.Config) {
		c.Wait = 3 * time.Second
		now := time.Now()
		c.Now = func() time.Time { return now.Add(slept) }
		c.Sleep = func(_ context.Context, d time.Duration) error { slept += d; return nil }
	})
	_, err = do(w.ctx, e, a)
	var ip *outcome.InProgressError
	if !errors.As(err, &ip) || ip.Holder.Host != "other-host" {
		t.Fatalf("err = %v, want *InProgressError naming other-host", err)
	}
	if slept < 3*time.Second {
		t.Fatalf("gave up after %s, want the whole --wait (3s)", slept)
	}
	if w.writes() != 0 || len(w.GitHub.Requests()) != 0 {
		t.Fatal("asked GitHub while another process held the key")
	}
}

func TestDeadHolderOnThisHostIsTakenOverAtOnce(t *testing.T) {
	w := newWorld(t)
	w.Push("fix-42")
	a := prAction("ISSUE-42", "fix-42", "Fix", "body")
	l, err := sqlite.Open(w.ctx, w.Ledger, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	me := reconcile.NewOwner()
	dead := ledger.Owner{ID: "crashed", Host: me.Host, PID: 999999}
	if _, err := l.Claim(w.ctx, ledger.ClaimParams{Key: keyOf(t, a), Task: a.Task, Step: a.Step, Kind: "pr", Repo: repo, Target: "main", Owner: dead, Lease: time.Hour}); err != nil {
		t.Fatal(err)
	}
	e := w.engine(func(c *reconcile.Config) {
		c.Gone = func(p ledger.Proc) bool { return p.PID == 999999 }
		c.Sleep = func(context.Context, time.Duration) error { t.Fatal("waited for a dead process"); return nil }
	})
	// (Settle is off in these tests; TestTakeOverWaitsForRequestsInFlight
	// shows the short wait for requests in flight, never the lease's hour.)
	if r := mustDo(t, e, a); r.Outcome != outcome.Created {
		t.Fatalf("outcome %s, want created", r.Outcome)
	}
	hist, err := l.History(w.ctx, keyOf(t, a))
	if err != nil {
		t.Fatal(err)
	}
	var took bool
	for _, h := range hist {
		took = took || strings.Contains(h.Why, "took over")
	}
	if !took {
		t.Fatalf("history %+v does not record the takeover", hist)
	}
}

// Reconcile after crashes in 40 tasks: every entry settles and nothing is
// written to GitHub.
func TestReconcileSettles40CrashedTasksWithoutWriting(t *testing.T) {
	w := newWorld(t)
	e := w.engine()
	for i := 0; i < 40; i++ {
		head := "fix-" + strings.Repeat("x", i%3) + string(rune('a'+i%26)) + "-" + string(rune('a'+i/26))
		w.Push(head)
		kind := fixtures.DropAfterCommit // created, answer lost
		if i%2 == 1 {
			kind = fixtures.Status502BeforeCommit // not created
		}
		w.GitHub.Inject(fixtures.Fault{Match: postPulls, Kind: kind})
		_, err := do(w.ctx, e, prAction("TASK-"+head, head, "Fix", "body"))
		var uc *outcome.UnconfirmedError
		if !errors.As(err, &uc) {
			t.Fatalf("task %d: err = %v, want unconfirmed", i, err)
		}
	}
	writes := w.writes()
	out, err := w.engine().Reconcile(w.ctx, reconcile.Filter{Repo: repo})
	if err != nil {
		t.Fatal(err)
	}
	done, failed := 0, 0
	for _, s := range out {
		switch s.To {
		case ledger.Done:
			done++
		case ledger.Failed:
			failed++
		default:
			t.Errorf("%s left %s: %s", s.Key, s.To, s.Why)
		}
	}
	if len(out) != 40 || done != 20 || failed != 20 {
		t.Fatalf("settled %d: %d done, %d failed; want 40: 20 and 20", len(out), done, failed)
	}
	if n := w.writes() - writes; n != 0 {
		t.Fatalf("reconcile sent %d write requests, want 0", n)
	}
	if again, _ := w.engine().Reconcile(w.ctx, reconcile.Filter{}); len(again) != 0 {
		t.Fatalf("second reconcile found %d attempting entries, want 0", len(again))
	}
}

// A token GitHub rejects is a configuration error (exit 1), not an unknown
// outcome: nothing was sent, and no attempting entry is left to alarm on.
func TestRejectedTokenFailsWithoutLeavingAnAttempt(t *testing.T) {
	w := newWorld(t)
	w.Push("fix-42")
	a := prAction("ISSUE-42", "fix-42", "Fix", "body")
	e := w.engine(func(c *reconcile.Config) { c.GitHub = w.client("tok-nobody-knows") })
	_, err := do(w.ctx, e, a)
	var uc *outcome.UnconfirmedError
	if !errors.Is(err, ghcheck.ErrCredentials) || errors.As(err, &uc) || !strings.Contains(err.Error(), "GH_TOKEN") {
		t.Fatalf("err = %v, want ErrCredentials with a hint, not unconfirmed", err)
	}
	l, err := sqlite.Open(w.ctx, w.Ledger, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if ent, err := l.Get(w.ctx, keyOf(t, a)); err != nil || ent.Status != ledger.Failed {
		t.Fatalf("entry %+v, %v; want failed", ent, err)
	}
	if w.writes() != 0 {
		t.Fatal("wrote to GitHub with a rejected token")
	}
	if r := mustDo(t, w.engine(), a); r.Outcome != outcome.Created {
		t.Fatalf("with a good token: %s, want created", r.Outcome)
	}
}

// A run that takes over an entry whose earlier attempt marked its create
// as leaving waits Settle from that mark before it looks, so a request the
// earlier attempt had in flight lands first; the mark's age is read on the
// ledger's clock, whatever this machine's says (here 3 hours behind or
// ahead); an attempt that sent nothing, and an old mark, cost no wait.
func TestTakeOverWaitsForRequestsInFlight(t *testing.T) {
	w := newWorld(t)
	clock := ledgertest.NewClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	l, err := sqlite.Open(w.ctx, w.Ledger, sqlite.Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, tc := range []struct {
		task   string
		sent   bool
		after  time.Duration // since the crashed attempt's mark, on the ledger's clock
		skew   time.Duration // of this machine's clock against the ledger's
		settle time.Duration // 0: the default
		want   time.Duration
	}{
		{"SENT-A-MOMENT-AGO", true, 500 * time.Millisecond, 0, 2 * time.Second, 1500 * time.Millisecond},
		{"SENT-A-MOMENT-AGO-CLIENT-BEHIND", true, 500 * time.Millisecond, -3 * time.Hour, 2 * time.Second, 1500 * time.Millisecond},
		{"SENT-A-MOMENT-AGO-CLIENT-AHEAD", true, 500 * time.Millisecond, 3 * time.Hour, 2 * time.Second, 1500 * time.Millisecond},
		// GitHub may commit a create until it ends the request, 10 s in.
		{"SENT-3S-AGO-DEFAULT-WINDOW", true, 3 * time.Second, 0, 0, reconcile.DefaultSettle - 3*time.Second},
		{"SENT-LONG-AGO", true, time.Hour, 0, 0, 0},
		{"NOTHING-SENT", false, 0, 0, 0, 0},
	} {
		t.Run(tc.task, func(t *testing.T) {
			w.Push(tc.task)
			a := prAction(tc.task, tc.task, "Fix", "body")
			c, err := l.Claim(w.ctx, ledger.ClaimParams{Key: keyOf(t, a), Task: a.Task, Step: a.Step, Kind: "pr", Repo: repo, Target: "main",
				Owner: ledger.Owner{ID: "crashed", Host: "h", PID: 999999}, Lease: time.Hour})
			if err != nil || c.State != ledger.ClaimCreated {
				t.Fatalf("claim as the crashed attempt: %v, %v", c, err)
			}
			if tc.sent {
				if err := l.MarkSending(w.ctx, ledger.SendingParams{Key: c.Entry.Key, Fence: 1, Lease: time.Hour}); err != nil {
					t.Fatal(err)
				}
			}
			clock.Advance(tc.after)
			var slept time.Duration
			e := w.engine(func(cfg *reconcile.Config) {
				cfg.Ledger = l
				cfg.Settle = tc.settle
				now := clock.Now().Add(tc.skew)
				cfg.Now = func() time.Time { return now }
				cfg.Gone = func(p ledger.Proc) bool { return p.PID == 999999 }
				cfg.Sleep = func(_ context.Context, d time.Duration) error { slept += d; return nil }
			})
			r, err := do(w.ctx, e, a)
			if err != nil {
				t.Fatal(err)
			}
			if r.Outcome != outcome.Created {
				t.Fatalf("outcome %s, want created", r.Outcome)
			}
			if slept != tc.want {
				t.Fatalf("waited %s before looking, want %s", slept, tc.want)
			}
		})
	}
}
