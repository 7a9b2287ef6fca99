package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger"
	ghledger "github.com/ghonce/ghonce/ledger/github"
	"github.com/ghonce/ghonce/ledger/ledgertest"
	"github.com/ghonce/ghonce/taskkey"
	"github.com/ghonce/ghonce/tests/testworld"
)

// repoLedgerWorld is a CLI world whose ledger is the repository itself:
// every run is a fresh runner (its own home, no ledger file anywhere).
func repoLedgerWorld(t *testing.T) *cliWorld { return repoLedgerWorldAt(t, nil) }

// repoLedgerWorldAt is repoLedgerWorld with GitHub's clock now.
func repoLedgerWorldAt(t *testing.T, now func() time.Time) *cliWorld {
	tw := testworld.New(t, testworld.Fake(fixtures.Options{Now: now}))
	return &cliWorld{t: t, fake: tw.GitHub, ledger: tw.Ledger, env: map[string]string{
		"GH_TOKEN": testToken, "GITHUB_API_URL": tw.GitHub.URL(), "GHONCE_LEDGER": "github", "GITHUB_REPOSITORY": testRepo,
	}}
}

func freshRunner(t *testing.T) map[string]string {
	home := t.TempDir()
	return map[string]string{"HOME": home, "XDG_STATE_HOME": filepath.Join(home, "state")}
}

func (w *cliWorld) claimRefs() int {
	n := 0
	for _, r := range w.fake.Refs(testworld.Owner, testworld.Name) {
		if strings.HasPrefix(r, "refs/ghonce/claims/") {
			n++
		}
	}
	return n
}

// TestRepositoryLedgerOnFreshRunners: with GHONCE_LEDGER=github, runs that
// share nothing but the repository create an issue and run a guarded
// command once.
func TestRepositoryLedgerOnFreshRunners(t *testing.T) {
	t.Parallel()
	w := repoLedgerWorld(t)
	args := []string{"issue", "create", "--task", "T1", "--title", "t", "--body", "b", "--json"}
	for i, want := range []string{"created", "skipped"} {
		o := w.run("", freshRunner(t), args...)
		if o.code != 0 || !strings.Contains(o.stdout, `"outcome":"`+want+`"`) {
			t.Fatalf("run %d: exit %d, stdout %s, stderr %s; want %s", i, o.code, o.stdout, o.stderr, want)
		}
	}
	if n := len(w.fake.Issues(testworld.Owner, testworld.Name)); n != 1 {
		t.Errorf("%d issues, want 1", n)
	}
	if w.claimRefs() != 1 {
		t.Errorf("%d claim refs, want 1", w.claimRefs())
	}
	if _, ok := w.fake.Branch(testworld.Owner, testworld.Name, "ghonce"); ok {
		t.Error("a branch appeared")
	}

	out := filepath.Join(t.TempDir(), "deploys")
	cmd := []string{"exec", "--task", "T1", "--step", "deploy", "--", "sh", "-c", "echo deployed >> " + out}
	for i := range 2 {
		if o := w.run("", freshRunner(t), cmd...); o.code != 0 {
			t.Fatalf("exec run %d: exit %d, stderr %s", i, o.code, o.stderr)
		}
	}
	if b, _ := os.ReadFile(out); string(b) != "deployed\n" {
		t.Errorf("the guarded command ran %d times, want once", strings.Count(string(b), "deployed"))
	}
	// status and resolve read the same ledger.
	o := w.run("", freshRunner(t), "status", "--json")
	if o.code != 0 || strings.Count(o.stdout, `"key"`) != 2 {
		t.Errorf("status: exit %d, %s %s", o.code, o.stdout, o.stderr)
	}
}

// TestRepositoryLedgerDoneIsNotProof: a done claim someone else who can
// push wrote is looked up, never believed.
func TestRepositoryLedgerDoneIsNotProof(t *testing.T) {
	t.Parallel()
	w := repoLedgerWorld(t)
	args := []string{"issue", "create", "--task", "T1", "--title", "t", "--body", "b", "--json"}
	o := w.run("", freshRunner(t), args...)
	var first struct {
		Key    string `json:"key"`
		Number int    `json:"number"`
	}
	if err := json.Unmarshal([]byte(o.stdout), &first); o.code != 0 || err != nil || first.Number == 0 {
		t.Fatalf("first run: exit %d, %s %s", o.code, o.stdout, o.stderr)
	}
	// mallory, who can push, points the claim at another issue.
	c, err := ghcheck.New(ghcheck.Options{BaseURL: w.fake.URL(), Token: testworld.StrangerToken})
	if err != nil {
		t.Fatal(err)
	}
	l, err := ghledger.Open(ghledger.Options{Client: c, Repo: ghcheck.Repo{Owner: testworld.Owner, Name: testworld.Name}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Resolve(t.Context(), ledger.ResolveParams{Key: first.Key, Status: ledger.Done, Ref: ledger.Ref{Number: 4242, URL: "https://example.com/elsewhere"}, Who: "mallory", Note: "trust me"}); err != nil {
		t.Fatal(err)
	}
	o = w.run("", freshRunner(t), args...)
	if o.code != 0 || !strings.Contains(o.stdout, `"outcome":"skipped"`) || strings.Contains(o.stdout, "4242") || strings.Contains(o.stdout, "elsewhere") {
		t.Fatalf("replay after a forged pointer: exit %d, %s %s; want skipped naming the issue it found", o.code, o.stdout, o.stderr)
	}
	// A done claim for a key that never ran: nothing of ours carries the
	// key, so the run stops and creates nothing.
	o2 := w.run("", freshRunner(t), "key", "--task", "T2", "--step", "issue-create", "--kind", "issue", "--repo", testRepo)
	key := strings.TrimSpace(o2.stdout)
	cl, err := l.Claim(t.Context(), ledger.ClaimParams{Key: key, Kind: "issue", Repo: testRepo, Owner: ledger.Owner{ID: "mallory"}, Lease: 60e9, Why: "forged"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Finish(t.Context(), ledger.FinishParams{Key: key, Fence: cl.Entry.Fence, Status: ledger.Done, Outcome: "created", Ref: ledger.Ref{Number: 1}, Why: "forged"}); err != nil {
		t.Fatal(err)
	}
	o = w.run("", freshRunner(t), "issue", "create", "--task", "T2", "--title", "t", "--body", "b")
	if o.code == 0 || !strings.Contains(o.stderr, "no artifact of ours that carries the key") || !strings.Contains(o.stderr, "ghonce resolve "+key+" --retry --force") {
		t.Fatalf("forged done: exit %d, stderr %s; want a conflict", o.code, o.stderr)
	}
	if n := len(w.fake.Issues(testworld.Owner, testworld.Name)); n != 1 {
		t.Errorf("%d issues, want 1", n)
	}
}

// TestRepositoryLedgerComparesTheTextItFound: the repository ledger keeps
// only a description's hash, so a runner on another machine compares its
// text with the artifact's own. A reworded run after an answered "maybe"
// (exit 3) gets the facts (exit 7) there as on a local ledger, and the
// first text is the same act.
func TestRepositoryLedgerComparesTheTextItFound(t *testing.T) {
	t.Parallel()
	w := repoLedgerWorld(t)
	w.fake.Inject(fixtures.Fault{Kind: fixtures.Status504AfterCommit, Match: func(r *http.Request) bool {
		return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/issues")
	}})
	create := func(title string) []string {
		return []string{"issue", "create", "--task", "T1", "--title", title, "--body", "b", "--settle", "200ms"}
	}
	if o := w.run("", freshRunner(t), create("Fix the flaky test")...); o.code != ExitUnconfirmed {
		t.Fatalf("first run, answered with a 504 after GitHub stored it: exit %d, %s; want %d", o.code, o.stderr, ExitUnconfirmed)
	}
	o := w.run("", freshRunner(t), create("Fix the flaky login test")...)
	if o.code != ExitSameOrAnother || !strings.Contains(o.stderr, `"Fix the flaky test"`) {
		t.Fatalf("reworded run on another machine: exit %d, %s; want the facts (exit %d) naming the first title", o.code, o.stderr, ExitSameOrAnother)
	}
	if o := w.run("", freshRunner(t), create("Fix the flaky test")...); o.code != 0 {
		t.Fatalf("the first text again: exit %d, %s; want 0", o.code, o.stderr)
	}
	if n := len(w.fake.Issues(testworld.Owner, testworld.Name)); n != 1 {
		t.Errorf("%d issues, want 1", n)
	}
}

// TestRepositoryLedgerNeedsARepository: "github" with no repository to
// live in is a usage error that says what to pass.
func TestRepositoryLedgerNeedsARepository(t *testing.T) {
	t.Parallel()
	w := repoLedgerWorld(t)
	o := w.run("", map[string]string{"GITHUB_REPOSITORY": ""}, "exec", "--task", "T", "--step", "s", "--", "true")
	if o.code != ExitUsage || !strings.Contains(o.stderr, "github://OWNER/REPO") {
		t.Fatalf("exit %d, stderr %s", o.code, o.stderr)
	}
}

// TestRepositoryLedgerReadOnlyToken: a token without contents: write gets
// an error that names the permission, and nothing is created.
func TestRepositoryLedgerReadOnlyToken(t *testing.T) {
	t.Parallel()
	w := repoLedgerWorld(t)
	w.fake.SetReadOnly(testworld.Login)
	o := w.run("", freshRunner(t), "issue", "create", "--task", "T1", "--title", "t", "--body", "b")
	if o.code == 0 || !strings.Contains(o.stderr, "permissions: contents: write") {
		t.Fatalf("exit %d, stderr %s", o.code, o.stderr)
	}
	if n := len(w.fake.Issues(testworld.Owner, testworld.Name)); n != 0 {
		t.Errorf("%d issues, want 0", n)
	}
}

// TestPruneClaims: `ghonce prune` deletes old done claims of GitHub kinds
// and keeps a guarded command's; the ghonce:KEY labels of the pull
// requests and issues it prunes go with them (issue 40: they were left on
// the artifacts for good, since no ledger knew them any more); a pruned
// pull request is found again by its head branch.
func TestPruneClaims(t *testing.T) {
	t.Parallel()
	clock := ledgertest.NewClock(time.Now().Truncate(time.Second))
	w := repoLedgerWorldAt(t, clock.Now)
	w.fake.SetRef(testworld.Owner, testworld.Name, "fix-1", w.fake.AddCommit(testworld.Owner, testworld.Name, "main"))
	issue := []string{"issue", "create", "--task", "T1", "--title", "t", "--body", "b", "--json"}
	pr := []string{"pr", "create", "--task", "T1", "--base", "main", "--head", "fix-1", "--title", "t", "--body", "b", "--json"}
	for _, args := range [][]string{issue, pr, {"exec", "--task", "T1", "--step", "deploy", "--", "true"}} {
		if o := w.run("", freshRunner(t), args...); o.code != 0 {
			t.Fatalf("%v: %d %s", args, o.code, o.stderr)
		}
	}
	keyLabels := func() (n int) {
		for _, l := range w.fake.Labels(testworld.Owner, testworld.Name) {
			if strings.HasPrefix(l.Name, taskkey.Label("")) {
				n++
			}
		}
		return n
	}
	if keyLabels() != 2 {
		t.Fatalf("%d key labels after an issue and a pull request, want 2", keyLabels())
	}
	ex := w.run("", freshRunner(t), "exec", "--task", "T1", "--step", "deploy", "--json", "--", "true")
	var exec struct {
		Key string `json:"key"`
	}
	if ex.code != 0 || json.Unmarshal([]byte(ex.stdout), &exec) != nil {
		t.Fatalf("exec: %d %s", ex.code, ex.stderr)
	}
	if o := w.run("", freshRunner(t), "prune", "--older-than", "30s"); o.code != ExitUsage || !strings.Contains(o.stderr, "younger than 1m0s") {
		t.Fatalf("prune --older-than 30s: exit %d, stderr %s; want a usage error", o.code, o.stderr)
	}
	o := w.run("", freshRunner(t), "prune", "--older-than", "1h")
	if o.code != 0 || o.stdout != "" {
		t.Fatalf("prune of nothing old: %d %q %s", o.code, o.stdout, o.stderr)
	}
	clock.Advance(2 * time.Hour) // on GitHub's clock
	o = w.run("", freshRunner(t), "prune", "--older-than", "1h", "--dry-run", "--json")
	if o.code != 0 || strings.Count(o.stdout, `"label":"ghonce:`) != 2 || w.claimRefs() != 3 || keyLabels() != 2 {
		t.Fatalf("prune --dry-run: %d %s %s; want both labels listed, nothing deleted", o.code, o.stdout, o.stderr)
	}
	o = w.run("", freshRunner(t), "prune", "--older-than", "1h", "--json")
	if o.code != 0 || strings.Count(o.stdout, `"key"`) != 2 || !strings.Contains(o.stdout, `"kind":"issue"`) || !strings.Contains(o.stdout, `"kind":"pr"`) {
		t.Fatalf("prune: %d %s %s", o.code, o.stdout, o.stderr)
	}
	if w.claimRefs() != 1 {
		t.Errorf("%d claims left, want the exec's", w.claimRefs())
	}
	if n := keyLabels(); n != 0 {
		t.Errorf("%d key labels left after prune, want 0: no ledger knows them any more", n)
	}
	for _, is := range w.fake.Issues(testworld.Owner, testworld.Name) {
		if len(is.Labels) != 0 {
			t.Errorf("issue #%d still carries %v", is.Number, is.Labels)
		}
	}
	o = w.run("", freshRunner(t), pr...)
	if o.code != 0 || !strings.Contains(o.stdout, `"outcome":"found"`) || len(w.fake.PullRequests(testworld.Owner, testworld.Name)) != 1 {
		t.Fatalf("pull request rerun after prune: %d %s %s; want found by its head branch", o.code, o.stdout, o.stderr)
	}
	// A person names the exec's claim: it goes, and prune says what that
	// gives up.
	claims := w.claimRefs() // the exec's, and the pull request's rerun's
	o = w.run("", freshRunner(t), "prune", exec.Key, "--dry-run")
	if o.code != 0 || o.stdout != exec.Key+"\n" || w.claimRefs() != claims {
		t.Fatalf("prune KEY --dry-run: %d %q %s", o.code, o.stdout, o.stderr)
	}
	o = w.run("", freshRunner(t), "prune", exec.Key, "--json")
	if o.code != 0 || w.claimRefs() != claims-1 || !strings.Contains(o.stderr, "the only record that the command ran") || !strings.Contains(o.stdout, `"gives_up":"it was the only record`) {
		t.Fatalf("prune KEY of an exec claim: %d %s %s", o.code, o.stdout, o.stderr)
	}
	if o := w.run("", freshRunner(t), "prune", exec.Key); o.code != ExitError || !strings.Contains(o.stderr, "holds no claim of it") {
		t.Fatalf("prune KEY of a key with no claim: %d %s", o.code, o.stderr)
	}
	if o := w.run("", freshRunner(t), "prune", exec.Key, "--older-than", "1h"); o.code != ExitUsage {
		t.Fatalf("prune KEY --older-than: %d %s; want a usage error", o.code, o.stderr)
	}
	if o := w.run("", map[string]string{"GHONCE_LEDGER": filepath.Join(t.TempDir(), "l.db")}, "prune", "--older-than", "1d"); o.code == 0 {
		t.Errorf("prune on a SQLite ledger succeeded")
	}
}

// A label GitHub refuses to delete keeps its claim: the next prune tries
// again, and nothing is stranded.
func TestPruneKeepsTheClaimOfALabelItCouldNotDelete(t *testing.T) {
	t.Parallel()
	clock := ledgertest.NewClock(time.Now().Truncate(time.Second))
	w := repoLedgerWorldAt(t, clock.Now)
	if o := w.run("", freshRunner(t), "issue", "create", "--task", "T1", "--title", "t", "--body", "b"); o.code != 0 {
		t.Fatalf("issue: %d %s", o.code, o.stderr)
	}
	clock.Advance(2 * time.Hour)
	w.fake.Inject(fixtures.Fault{Match: func(r *http.Request) bool {
		return r.Method == http.MethodDelete && strings.Contains(r.URL.Path, "/labels/")
	}, Kind: fixtures.Status502BeforeCommit, Times: 1000})
	o := w.run("", freshRunner(t), "prune", "--older-than", "1h")
	if o.code != ExitError || w.claimRefs() != 1 || !strings.Contains(o.stderr, "is kept") {
		t.Fatalf("prune with the label's delete refused: exit %d, %d claims, %s; want exit 1 and the claim kept", o.code, w.claimRefs(), o.stderr)
	}
	w.fake.ClearFaults()
	if o := w.run("", freshRunner(t), "prune", "--older-than", "1h"); o.code != 0 || w.claimRefs() != 0 {
		t.Fatalf("prune again: exit %d, %d claims, %s", o.code, w.claimRefs(), o.stderr)
	}
}

// TestRepositoryLedgerCost: what a first issue and its replay cost on the
// wire with the claims in the repository, each run a fresh runner: the
// requests, the content-creating ones (every method but GET, what
// GitHub's 80-a-minute limit counts) and the round trips one after
// another (fixtures.RoundTrips, at a latency well above this machine's
// scheduling delays). The claim is one write (a commit object, then the
// ref) that is the in-flight mark too, the look-up (and the token's login)
// run beside the claim's read, and the outcome is a second write; a replay
// reads the claim and is confirmed by that look-up, writing nothing. make bench
// prints the same counts for every kind (docs/performance.md).
func TestRepositoryLedgerCost(t *testing.T) {
	t.Parallel()
	w := repoLedgerWorld(t)
	w.fake.SetLatency(50 * time.Millisecond)
	type cost struct{ requests, writes, trips int }
	issue := []string{"issue", "create", "--task", "COST", "--title", "t", "--body", "b", "--json"}
	run := func(want string, args ...string) cost {
		t.Helper()
		w.fake.WaitIdle()
		before := len(w.fake.Requests())
		o := w.run("", freshRunner(t), args...)
		if o.code != 0 || !strings.Contains(o.stdout, `"outcome":"`+want+`"`) {
			t.Fatalf("exit %d, stdout %s, stderr %s; want %s", o.code, o.stdout, o.stderr, want)
		}
		w.fake.WaitIdle()
		reqs := w.fake.Requests()[before:]
		c := cost{requests: len(reqs), trips: fixtures.RoundTrips(reqs)}
		var log []string
		for _, r := range reqs {
			if r.Method != http.MethodGet {
				c.writes++
			}
			log = append(log, r.Method+" "+r.Path)
		}
		t.Logf("%s: %d requests, %d content-creating, %d round trips:\n  %s", want, c.requests, c.writes, c.trips, strings.Join(log, "\n  "))
		return c
	}
	// First: the claim's ref (absent) beside the look-up and GET /user;
	// the claim's commit; its ref; the issue; the outcome's commit; its
	// ref.
	first := cost{requests: 8, writes: 5, trips: 6}
	if got := run("created", issue...); got != first {
		t.Errorf("first issue: %+v, want %+v", got, first)
	}
	// Replay: the claim's ref beside the look-up and GET /user; its
	// commit.
	replay := cost{requests: 4, writes: 0, trips: 2}
	if got := run("skipped", issue...); got != replay {
		t.Errorf("replay: %+v, want %+v", got, replay)
	}
	// A comment costs the same: no read for a key derived the way
	// earlier versions did (a comment's former default step), which no
	// version wrote to this ledger.
	thread := w.fake.SeedIssue(testworld.Owner, testworld.Name, testworld.Stranger, fixtures.SeedIssue{Title: "x", Body: "y"})
	comment := []string{"issue", "comment", fmt.Sprint(thread), "--task", "COST", "--body", "b", "--json"}
	if got := run("created", comment...); got != first {
		t.Errorf("first comment: %+v, want %+v", got, first)
	}
	if got := run("skipped", comment...); got != replay {
		t.Errorf("comment's replay: %+v, want %+v", got, replay)
	}
	// A guarded command marks its own start, with the identity of what it
	// runs, and renews no lease it took moments ago: the claim, the mark
	// and the outcome, two requests each, after the claim's read. Its
	// replay reads the claim alone: GitHub cannot be asked about it.
	deploy := []string{"exec", "--task", "COST", "--step", "deploy", "--json", "--", "true"}
	execFirst := cost{requests: 7, writes: 6, trips: 7}
	if got := run("created", deploy...); got != execFirst {
		t.Errorf("first exec: %+v, want %+v", got, execFirst)
	}
	if got, want := run("skipped", deploy...), (cost{requests: 2, writes: 0, trips: 2}); got != want {
		t.Errorf("exec's replay: %+v, want %+v", got, want)
	}
	// The guide says so.
	b, err := os.ReadFile("../../docs/guide/repository-ledger.md")
	if err != nil {
		t.Fatal(err)
	}
	guide := strings.Join(strings.Fields(string(b)), " ")
	for _, want := range []string{
		fmt.Sprintf("A first issue is %d requests: %d of them content-creating", first.requests, first.writes),
		fmt.Sprintf("in %d round trips one after another; a replay is %d reads in %d round trips", first.trips, replay.requests, replay.trips),
		fmt.Sprintf("A guarded command (`exec`) writes three times, %d content-creating requests of %d in %d round trips", execFirst.writes, execFirst.requests, execFirst.trips),
	} {
		if !strings.Contains(guide, want) {
			t.Errorf("docs/guide/repository-ledger.md does not say %q", want)
		}
	}
}

// TestRepositoryLedgerUnsentReleaseLeavesNoWait: a first claim is its own
// in-flight mark; when its look-up cannot answer, the run releases the
// claim saying that nothing was sent, and the next run looks at once
// instead of waiting out GitHub's window from the claim.
func TestRepositoryLedgerUnsentReleaseLeavesNoWait(t *testing.T) {
	t.Parallel()
	w := repoLedgerWorld(t)
	w.fake.Inject(fixtures.Fault{Kind: fixtures.Status502BeforeCommit, Times: 1000, Match: func(r *http.Request) bool {
		return r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/issues")
	}})
	args := []string{"issue", "create", "--task", "UNSENT", "--title", "t", "--body", "b", "--json"}
	if o := w.run("", freshRunner(t), args...); o.code != ExitUnconfirmed {
		t.Fatalf("look-up down: exit %d, stderr %s; want %d", o.code, o.stderr, ExitUnconfirmed)
	}
	w.fake.ClearFaults()
	o := w.run("", freshRunner(t), args...)
	if o.code != 0 || !strings.Contains(o.stdout, `"outcome":"created"`) || strings.Contains(o.stderr, "waiting") {
		t.Fatalf("rerun: exit %d, stdout %s, stderr %s; want created at once, no wait", o.code, o.stdout, o.stderr)
	}
	if n := len(w.fake.Issues(testworld.Owner, testworld.Name)); n != 1 {
		t.Errorf("%d issues, want 1", n)
	}
}

// TestRepositoryLedgerDeletedArtifactIsNotMadeAgain: a comment deleted
// after its run recorded it done is not posted again by a later run on a
// fresh runner; the done claim, which GitHub no longer confirms, stops
// the run and says what to do. (A ledger that kept no outcome for the
// kinds GitHub can be asked about could not tell this deletion from a run
// killed before its create, and would post the comment again.)
func TestRepositoryLedgerDeletedArtifactIsNotMadeAgain(t *testing.T) {
	t.Parallel()
	w := repoLedgerWorld(t)
	thread := w.fake.SeedIssue(testworld.Owner, testworld.Name, testworld.Stranger, fixtures.SeedIssue{Title: "x", Body: "y"})
	args := []string{"issue", "comment", fmt.Sprint(thread), "--task", "DEL", "--body", "b", "--json"}
	o := w.run("", freshRunner(t), args...)
	var first struct {
		Key string `json:"key"`
		ID  int64  `json:"id"`
	}
	if err := json.Unmarshal([]byte(o.stdout), &first); o.code != 0 || err != nil || first.ID == 0 {
		t.Fatalf("first run: exit %d, %s %s", o.code, o.stdout, o.stderr)
	}
	req, err := http.NewRequest(http.MethodDelete, fmt.Sprintf("%s/repos/%s/%s/issues/comments/%d", strings.TrimSuffix(w.fake.URL(), "/"), testworld.Owner, testworld.Name, first.ID), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("deleting the comment: %s %s", resp.Status, body)
	}
	o = w.run("", freshRunner(t), args...)
	if o.code != 1 || !strings.Contains(o.stderr, "no artifact of ours that carries the key") || !strings.Contains(o.stderr, "ghonce resolve "+first.Key+" --retry --force") {
		t.Fatalf("rerun after the comment was deleted: exit %d, %s %s; want exit 1, a conflict that names resolve", o.code, o.stdout, o.stderr)
	}
	// The next step a caller reads is that resolve, not "the name is taken".
	var got struct {
		Next string `json:"next"`
	}
	if err := json.Unmarshal([]byte(o.stdout), &got); err != nil || !strings.Contains(got.Next, "ghonce resolve "+first.Key+" --retry --force") {
		t.Errorf("next: %q (%v), want the resolve that lets the next run act", got.Next, err)
	}
	if n := len(w.fake.Comments(testworld.Owner, testworld.Name, thread)); n != 0 {
		t.Errorf("%d comments on the thread after the rerun, want 0 (the deleted one is not posted again)", n)
	}
}

// With GHONCE_LEDGER=github and no repository in the environment, every
// verb that reads the ledger finds it by --repo, as the error without one
// tells the user, and shows what is in it: a guarded command's stuck
// claim (which records no repository) included. Issue 40: status --repo
// and reconcile --repo reported an empty ledger, resolve and labels prune
// ignored --repo.
func TestRepositoryLedgerVerbsHonourRepo(t *testing.T) {
	t.Parallel()
	var later atomic.Int64 // GitHub's clock runs this far ahead
	w := repoLedgerWorldAt(t, func() time.Time { return time.Now().Add(time.Duration(later.Load())) })
	env := freshRunner(t)
	env["GITHUB_REPOSITORY"] = ""
	if o := w.run("", env, "init", "--repo", testRepo); o.code != 0 || strings.Contains(o.stderr, "no effect") {
		t.Fatalf("init --repo: exit %d, %s", o.code, o.stderr)
	}
	o := w.run("", env, "exec", "--repo", testRepo, "--task", "T1", "--step", "deploy", "--json", "--", "sh", "-c", "kill -9 $$")
	var left struct{ Key string }
	if err := json.Unmarshal([]byte(o.stdout), &left); o.code != ExitUnconfirmed || err != nil {
		t.Fatalf("exec killed: exit %d, %s %s; want %d", o.code, o.stdout, o.stderr, ExitUnconfirmed)
	}
	if o := w.run("", env, "status"); o.code != ExitUsage || !strings.Contains(o.stderr, "pass --repo OWNER/REPO") {
		t.Fatalf("status with no repository anywhere: exit %d, %s; want a usage error naming --repo", o.code, o.stderr)
	}
	if o := w.run("", env, "status", "--repo", testRepo, "--json"); o.code != 0 || !strings.Contains(o.stdout, left.Key) {
		t.Errorf("status --repo: exit %d, %s %s; want the stuck claim %s", o.code, o.stdout, o.stderr, left.Key)
	}
	later.Store(int64(time.Hour))
	if o := w.run("", env, "status", "--repo", testRepo, "--stale", "30m"); o.code != ExitStale {
		t.Errorf("status --repo --stale 0s: exit %d, %s; want %d", o.code, o.stderr, ExitStale)
	}
	if o := w.run("", env, "reconcile", "--repo", testRepo, "--json"); o.code != ExitUnconfirmed || !strings.Contains(o.stdout, `"unsettled":1`) {
		t.Errorf("reconcile --repo: exit %d, %s %s; want the claim unsettled (no --check), exit %d", o.code, o.stdout, o.stderr, ExitUnconfirmed)
	}
	if o := w.run("", env, "status", "--repo", testRepo, "--stale", "30m"); o.code != ExitStale {
		t.Errorf("status --repo --stale 30m after reconcile: exit %d, %s; want %d (it kept its age)", o.code, o.stderr, ExitStale)
	}
	if o := w.run("", env, "resolve", left.Key, "--retry", "--repo", testRepo); o.code != 0 || strings.Contains(o.stderr, "no effect") {
		t.Errorf("resolve --repo: exit %d, %s", o.code, o.stderr)
	}
	if o := w.run("", env, "status", "--repo", testRepo, "--json", "--state", "failed"); !strings.Contains(o.stdout, left.Key) {
		t.Errorf("after resolve --retry, status --repo does not show the claim failed: %s %s", o.stdout, o.stderr)
	}
	if o := w.run("", env, "labels", "prune", "--repo", testRepo, "--older-than", "1d", "--dry-run"); o.code != 0 || strings.Contains(o.stderr, "no effect") {
		t.Errorf("labels prune --repo: exit %d, %s", o.code, o.stderr)
	}
}
