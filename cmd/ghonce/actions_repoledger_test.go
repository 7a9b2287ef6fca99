package main_test

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/tests/harness"
)

// claimRefs counts the repository ledger's claims in the test repository.
func (w *world) claimRefs() int { return w.claimRefsIn(name) }

// Through the action's own step with `ledger: github`: two runs of one job
// on separate runners (their own RUNNER_TEMP and HOME, no ledger file in
// common), the second started while the first's create is in flight at
// GitHub, make one issue; both steps succeed and name it.
func TestActionRepositoryLedgerOverlappingRunsCreateOneIssue(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	n := w.fake.SeedIssue(owner, name, stranger, fixtures.SeedIssue{Title: "It crashes", Body: "On start."})
	payload := fmt.Sprintf(`{"issue":{"number":%d}}`, n)
	first, second := newJob(w, payload), newJob(w, payload)
	second.attempt = 1 // runner-2: a re-run beside a late original
	a := readAction(t)
	inputs := map[string]string{"command": "issue-create", "title": "Follow-up: crash on start", "body": "Tracked here.", "token": actionsToken, "ledger": "github"}

	// The first run's create is held at GitHub until the second run has
	// read the claim; then GitHub takes it.
	reached, looked, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var holdOnce, lookOnce sync.Once
	var holding atomic.Bool
	w.fake.BeforeWrite(func(pw *fixtures.PendingWrite) bool {
		if pw.Method == http.MethodPost && strings.EqualFold(pw.Path, "/repos/"+repo+"/issues") {
			held := false
			holdOnce.Do(func() { held = true })
			if held {
				holding.Store(true)
				close(reached)
				<-release
			}
		}
		return true
	})
	w.fake.Inject(fixtures.Fault{Kind: fixtures.Status500, Match: func(r *http.Request) bool {
		if holding.Load() && strings.Contains(r.URL.Path, "ghonce/claims/") {
			lookOnce.Do(func() { close(looked) })
		}
		return false
	}})

	outs := make([]harness.Outcome, 2)
	var wg sync.WaitGroup
	run := func(i int, j *job) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			outs[i] = j.actionStep(a, inputs, nil)
		}()
	}
	run(0, first)
	deadline := time.After(2 * time.Minute) // against a hang, never a measure
	select {
	case <-reached:
	case <-deadline:
		t.Fatal("the first run's create never reached GitHub")
	}
	run(1, second)
	select {
	case <-looked:
	case <-deadline:
		close(release)
		t.Fatal("the second run never read the claim")
	}
	close(release)
	wg.Wait()

	for i, o := range outs {
		wantExit(t, o, 0, fmt.Sprintf("run %d", i+1))
	}
	issues := 0
	for _, is := range w.fake.Issues(owner, name) {
		if is.Author == actionsBot {
			issues++
		}
	}
	if issues != 1 {
		t.Fatalf("%d issues by the job, want 1", issues)
	}
	o1, o2 := first.outputs(), second.outputs()
	if o1["outcome"] != "created" || o2["outcome"] == "created" || o1["number"] == "" || o1["number"] != o2["number"] {
		t.Fatalf("outputs %q and %q: want the first created and the second naming the same issue", o1, o2)
	}
	t.Logf("first run: %s; second run: %s", o1["outcome"], o2["outcome"])
	if w.claimRefs() != 1 {
		t.Errorf("%d claims, want 1", w.claimRefs())
	}
}

// Through the action's own step with `ledger: github` and a job token
// without contents: write: the step fails with an error that says which
// permission to grant, and nothing is created.
func TestActionRepositoryLedgerWithoutContentsWrite(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	n := w.fake.SeedIssue(owner, name, stranger, fixtures.SeedIssue{Title: "It crashes", Body: "On start."})
	j := newJob(w, fmt.Sprintf(`{"issue":{"number":%d}}`, n))
	w.fake.SetReadOnly(actionsBot)
	o := j.actionStep(readAction(t), map[string]string{"command": "issue-create", "title": "Follow-up", "body": "Tracked here.", "token": actionsToken, "ledger": "github"}, nil)
	if o.Exit == 0 {
		t.Fatalf("exit 0 with a token that cannot write refs\nstdout: %s\nstderr: %s", o.Stdout, o.Stderr)
	}
	// The job's log shows it as an error annotation (a workflow command).
	want := regexp.MustCompile(`(?m)^::error title=ghonce \(exit [1-9]\)::.*the token cannot write refs: grant contents: write`)
	if !want.MatchString(o.Stderr) {
		t.Fatalf("no ::error:: saying %q\nstdout: %s\nstderr: %s", want, o.Stdout, o.Stderr)
	}
	t.Logf("exit %d; %s", o.Exit, strings.TrimSpace(o.Stderr))
	if len(w.fake.Issues(owner, name)) != 1 || w.claimRefs() != 0 {
		t.Errorf("%d issues (the seeded one only, want 1) and %d claims (want 0)", len(w.fake.Issues(owner, name)), w.claimRefs())
	}
}
