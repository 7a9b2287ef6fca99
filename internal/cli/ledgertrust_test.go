package cli

// A shared ledger is a lock and a record, never a source of what to do or
// what to believe (issue 36). Each test reproduces an attack with ghonce's
// own commands: the stranger, who can push refs, writes the claim on the
// repository ledger; on a SQLite ledger, whoever can write the file writes
// the entry through the ledger's own API. What is asserted is what a user
// sees: no command run, nothing written elsewhere, the artifact found, the
// other keys still served, the person able to clear it.

import (
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/procid"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/store"
	"github.com/ghonce/ghonce/tests/testworld"
)

// ledgers are the ledgers each attack is tried on: the repository's (its
// claims written by anyone who can push), and a SQLite file and a Postgres
// database (written by anyone who can write them).
var ledgers = []string{"repository", "sqlite", "postgres"}

// trustWorld is a CLI world on the ledger called name (one of ledgers; a
// SQLite or Postgres one made ahead with init), and the environment of
// each run: a fresh runner on the repository ledger.
func trustWorld(t *testing.T, name string) (*cliWorld, func() map[string]string) {
	t.Helper()
	if name == "repository" {
		return repoLedgerWorld(t), func() map[string]string { return freshRunner(t) }
	}
	var opts []testworld.Option
	if name == "postgres" {
		opts = append(opts, testworld.Postgres())
	}
	tw := testworld.New(t, opts...)
	w := &cliWorld{t: t, fake: tw.GitHub, ledger: tw.Ledger, env: map[string]string{
		"GH_TOKEN": testToken, "GITHUB_API_URL": tw.GitHub.URL(), "GHONCE_LEDGER": tw.Ledger, "GITHUB_REPOSITORY": testRepo,
	}}
	if o := w.run("", nil, "init"); o.code != 0 {
		t.Fatalf("init: %d %s", o.code, o.stderr)
	}
	return w, func() map[string]string { return nil }
}

// keyOf is `ghonce key` of args.
func (w *cliWorld) keyOf(args ...string) string {
	w.t.Helper()
	o := w.run("", nil, append([]string{"key"}, args...)...)
	if o.code != 0 {
		w.t.Fatalf("key %v: %d %s", args, o.code, o.stderr)
	}
	return strings.TrimSpace(o.stdout)
}

// forged is an entry someone else writes for key: its status, kind and
// stored fields (their JSON names in a claim), held (when attempting) by a
// lease that ended or a process that is gone and, with marked, its start
// marked.
type forged struct {
	status ledger.Status
	kind   string
	marked bool
	// fields are the claim's fields besides those (format 1: task, repo,
	// payload, ...; format 2: created_at, lease_until, ...).
	fields map[string]any
	format int // of the claim; 0 is 1, what ghonce wrote before format 2
}

// forge writes f for key, as the stranger on the repository ledger, as
// whoever can write a SQLite file or a Postgres database (through the
// ledger's API: status, kind, identity and payload).
func (w *cliWorld) forge(name, key string, f forged) {
	w.t.Helper()
	if name == "repository" {
		e := map[string]any{"key": key, "kind": f.kind, "status": string(f.status), "fence": 7, "attempts": 1, "created_at": "c-3600000", "updated_at": "c-3600000"}
		if f.status == ledger.Attempting {
			e["owner"], e["holder"], e["lease_until"] = map[string]any{"ID": "mallory"}, "h:mallory", "c-60000"
		}
		if f.marked {
			e["sending_at"] = "c-120000"
		}
		maps.Copy(e, f.fields)
		v := f.format
		if v == 0 {
			v = 1
		}
		testworld.Forge(w.t, w.fake, testRepo, key, "", testworld.ClaimMessage(v, e))
		return
	}
	ctx := w.t.Context()
	l, err := store.Open(ctx, w.ledger, store.Options{Create: store.CreateNever})
	if err != nil {
		w.t.Fatal(err)
	}
	defer l.Close()
	str := func(k string) string { s, _ := f.fields[k].(string); return s }
	payload, _ := f.fields["payload"].([]byte)
	// Its holder: a process of this machine that is gone, so a run takes
	// the entry over at once.
	me := procid.Self()
	gone := ledger.Owner{ID: "mallory", PID: 999999, Boot: me.Boot, PIDNS: me.PIDNS, Start: 1}
	p := ledger.ClaimParams{Key: key, Task: str("task"), Step: str("step"), Kind: f.kind, Repo: str("repo"), Target: str("target"),
		Payload: payload, PayloadHash: "forged", Owner: gone, Lease: time.Minute, Why: "forged"}
	if _, err := l.Resolve(ctx, ledger.ResolveParams{Key: key, Status: ledger.Failed, Who: "mallory", Force: true}); err != nil && !errors.Is(err, ledger.ErrNotFound) {
		w.t.Fatal(err)
	}
	c, err := l.Claim(ctx, p)
	if err != nil {
		w.t.Fatal(err)
	}
	if c.State == ledger.ClaimAcquired {
		if err := l.SetPayload(ctx, ledger.PayloadParams{Key: key, Fence: c.Entry.Fence, Payload: payload, PayloadHash: "forged", Why: "forged"}); err != nil {
			w.t.Fatal(err)
		}
	}
	if f.marked {
		if err := l.MarkSending(ctx, ledger.SendingParams{Key: key, Fence: c.Entry.Fence, Lease: time.Minute}); err != nil {
			w.t.Fatal(err)
		}
	}
	if f.status != ledger.Attempting {
		if _, err := l.Finish(ctx, ledger.FinishParams{Key: key, Fence: c.Entry.Fence, Status: f.status, Why: "forged"}); err != nil {
			w.t.Fatal(err)
		}
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func lines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// TestLedgerStoredCheckNeverRuns: a claim that is failed, or attempting
// with its start marked, stores a check that writes the runner's
// environment (GH_TOKEN, cloud secrets) to a file. Neither `ghonce exec`
// (with no --check, or its own) nor `ghonce reconcile` runs it; the
// command's own check decides.
func TestLedgerStoredCheckNeverRuns(t *testing.T) {
	for _, name := range ledgers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w, fresh := trustWorld(t, name)
			dir := t.TempDir()
			ran, pwned := filepath.Join(dir, "ran"), filepath.Join(dir, "pwned")
			cmd := []string{"exec", "--task", "T", "--step", "deploy", "--json", "--", "sh", "-c", "echo ran >> " + ran}
			// --settle 0: the forged mark, made moments ago on SQLite, names no
			// request that could still land.
			checked := append([]string{"exec", "--task", "T", "--step", "deploy", "--check", "grep -q ran " + ran, "--settle", "0", "--json", "--"}, cmd[7:]...)
			var r struct {
				Key     string `json:"key"`
				Outcome string `json:"outcome"`
			}
			o := w.run("", fresh(), cmd...)
			if o.code != 0 || json.Unmarshal([]byte(o.stdout), &r) != nil {
				t.Fatalf("first exec: %d %s %s", o.code, o.stdout, o.stderr)
			}
			stored := map[string]any{"task": "T", "step": "deploy", "payload": []byte(`{"argv":["true"],"check":"env > ` + pwned + `; exit 1"}`)}
			w.forge(name, r.Key, forged{status: ledger.Failed, kind: "exec", fields: stored})
			o = w.run("", fresh(), checked...)
			if o.code != 0 || exists(pwned) || lines(t, ran) != 1 || !strings.Contains(o.stdout, `"outcome":"found"`) {
				t.Fatalf("exec with its own check over a forged failed claim: exit %d, %s %s; stored check ran: %v, command ran %d times; want found by its own check, once",
					o.code, o.stdout, o.stderr, exists(pwned), lines(t, ran))
			}
			w.forge(name, r.Key, forged{status: ledger.Failed, kind: "exec", fields: stored})
			o = w.run("", fresh(), cmd...)
			if o.code != 0 || exists(pwned) || lines(t, ran) != 2 {
				t.Fatalf("exec with no check over a forged failed claim: exit %d, %s; stored check ran: %v, command ran %d times; want it run, the stored check not",
					o.code, o.stderr, exists(pwned), lines(t, ran))
			}
			w.forge(name, r.Key, forged{status: ledger.Attempting, kind: "exec", marked: true, fields: stored})
			if o = w.run("", fresh(), "reconcile", "--json"); exists(pwned) || o.code != ExitUnconfirmed || !strings.Contains(o.stdout, "rerun the same command") {
				t.Fatalf("reconcile of a forged attempting exec: exit %d, %s %s; stored check ran: %v; want it left for the rerun, nothing run", o.code, o.stdout, o.stderr, exists(pwned))
			}
			if o = w.run("", fresh(), checked...); o.code != 0 || exists(pwned) || lines(t, ran) != 2 {
				t.Fatalf("the rerun with its own check: exit %d, %s; want it found, nothing else run", o.code, o.stderr)
			}
		})
	}
}

// TestLedgerRepositoryIsThisRunsOwn: a failed claim of the issue's key in
// octo-org/hello-world that names mallory/public, mallory's repository,
// with a payload of its own. The run creates the agent's private issue in
// its own repository; nothing is read from or written to mallory's, by the
// run or by `ghonce reconcile` of such a claim left attempting.
func TestLedgerRepositoryIsThisRunsOwn(t *testing.T) {
	for _, name := range ledgers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w, fresh := trustWorld(t, name)
			w.fake.AddRepo(testworld.Stranger, "public", "main")
			key := w.keyOf("--task", "T", "--step", "issue-create", "--kind", "issue", "--repo", testRepo)
			elsewhere := map[string]any{"task": "T", "step": "issue-create", "repo": testworld.Stranger + "/public", "payload": []byte(`{"title":"x","body":"y"}`)}
			w.forge(name, key, forged{status: ledger.Failed, kind: "issue", fields: elsewhere})
			o := w.run("", fresh(), "issue", "create", "--task", "T", "--title", "Rotate", "--body", "the old password was hunter2", "--json")
			if o.code != 0 || len(w.fake.Issues(testworld.Owner, testworld.Name)) != 1 || len(w.fake.Issues(testworld.Stranger, "public")) != 0 {
				t.Fatalf("issue create over a claim naming another repository: exit %d, %s; issues here %d, in mallory/public %d; want one here, none there",
					o.code, o.stderr, len(w.fake.Issues(testworld.Owner, testworld.Name)), len(w.fake.Issues(testworld.Stranger, "public")))
			}
			other := w.keyOf("--task", "T2", "--step", "issue-create", "--kind", "issue", "--repo", testRepo)
			elsewhere["task"] = "T2"
			w.forge(name, other, forged{status: ledger.Attempting, kind: "issue", marked: true, fields: elsewhere})
			if o = w.run("", fresh(), "reconcile", "--json"); o.code != ExitUnconfirmed || !strings.Contains(o.stdout, other) {
				t.Fatalf("reconcile of a claim naming another repository: exit %d, %s %s; want it reported, left as it is", o.code, o.stdout, o.stderr)
			}
			for _, r := range w.fake.Requests() {
				if strings.Contains(strings.ToLower(r.Path), "/repos/"+testworld.Stranger+"/public") {
					t.Errorf("a request went to mallory's repository: %s %s", r.Method, r.Path)
				}
			}
		})
	}
}

// TestLedgerBranchStartIsThisRunsOwn: an attempting claim whose payload
// says the branch starts at another identity's commit ("evil: add
// backdoor"). The branch starts where this run's --from says.
func TestLedgerBranchStartIsThisRunsOwn(t *testing.T) {
	for _, name := range ledgers {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w, fresh := trustWorld(t, name)
			evil := w.fake.AddOrphanCommit(testworld.Owner, testworld.Name)
			main, _ := w.fake.Branch(testworld.Owner, testworld.Name, "main")
			key := w.keyOf("--task", "T", "--step", "branch-create", "--kind", "branch", "--repo", testRepo, "--target", "feature")
			w.forge(name, key, forged{status: ledger.Attempting, kind: "branch", fields: map[string]any{"task": "T", "step": "branch-create",
				"repo": testRepo, "target": "feature", "payload": []byte(`{"name":"feature","sha":"` + evil + `","from":"main"}`)}})
			o := w.run("", fresh(), "branch", "create", "feature", "--task", "T", "--from", "main", "--json")
			at, ok := w.fake.Branch(testworld.Owner, testworld.Name, "feature")
			if o.code != 0 || !ok || at != main {
				t.Fatalf("branch create over a claim naming another start: exit %d, %s; branch at %s (exists %v); want it at main's head %s, not %s", o.code, o.stderr, at, ok, main, evil)
			}
		})
	}
}

// TestLedgerTimesAreGitHubs: the done claim of a comment, rewritten as
// failed with created_at in 2099. A fresh runner's look-up reads every
// comment, finds the one it made, and posts nothing.
func TestLedgerTimesAreGitHubs(t *testing.T) {
	for _, format := range []int{1, 2} {
		t.Run("format "+strconv.Itoa(format), func(t *testing.T) {
			t.Parallel()
			w := repoLedgerWorld(t)
			n := w.fake.SeedIssue(testworld.Owner, testworld.Name, testworld.Stranger, fixtures.SeedIssue{Title: "Bug"})
			args := []string{"issue", "comment", strconv.Itoa(n), "--task", "T", "--body", "On it.", "--json"}
			var r struct {
				Key string `json:"key"`
			}
			if o := w.run("", freshRunner(t), args...); o.code != 0 || json.Unmarshal([]byte(o.stdout), &r) != nil {
				t.Fatalf("first comment: %d %s", o.code, o.stderr)
			}
			w.forge("repository", r.Key, forged{status: ledger.Failed, kind: "comment", format: format,
				fields: map[string]any{"created_at": "2099-01-01T00:00:00Z", "updated_at": "2099-01-01T00:00:00Z"}})
			o := w.run("", freshRunner(t), args...)
			if o.code != 0 || !strings.Contains(o.stdout, `"outcome":"found"`) || len(w.fake.Comments(testworld.Owner, testworld.Name, n)) != 1 {
				t.Fatalf("rerun over a claim dated 2099: exit %d, %s %s; %d comments; want found, one", o.code, o.stdout, o.stderr, len(w.fake.Comments(testworld.Owner, testworld.Name, n)))
			}
		})
	}
}

// TestLedgerForgedLeaseIsCleared: an attempting claim with a lease until
// 2099 holds nothing (no ghonce leases further than ledger.MaxLease); one
// with a live lease within it answers exit 4, and `ghonce resolve KEY
// --retry --force` clears it.
func TestLedgerForgedLeaseIsCleared(t *testing.T) {
	t.Parallel()
	w := repoLedgerWorld(t)
	args := []string{"issue", "create", "--task", "T", "--title", "t", "--body", "b"}
	key := w.keyOf("--task", "T", "--step", "issue-create", "--kind", "issue", "--repo", testRepo)
	w.forge("repository", key, forged{status: ledger.Attempting, kind: "issue", format: 2, fields: map[string]any{"lease_until": "2099-01-01T00:00:00Z"}})
	if o := w.run("", freshRunner(t), args...); o.code != 0 || len(w.fake.Issues(testworld.Owner, testworld.Name)) != 1 {
		t.Fatalf("issue create over a lease until 2099: exit %d, %s; want it created", o.code, o.stderr)
	}
	w.forge("repository", key, forged{status: ledger.Attempting, kind: "issue", format: 2, fields: map[string]any{"lease_until": "2099-01-01T00:00:00Z"}})
	if o := w.run("", freshRunner(t), "resolve", key, "--retry", "--force"); o.code != 0 {
		t.Fatalf("resolve --retry --force of a lease until 2099: exit %d, %s", o.code, o.stderr)
	}
	key2 := w.keyOf("--task", "T2", "--step", "issue-create", "--kind", "issue", "--repo", testRepo)
	w.forge("repository", key2, forged{status: ledger.Attempting, kind: "issue", format: 2, fields: map[string]any{"lease_until": "c1800000", "updated_at": "c0"}})
	args2 := []string{"issue", "create", "--task", "T2", "--title", "t", "--body", "b", "--wait", "0s"}
	if o := w.run("", freshRunner(t), args2...); o.code != ExitInProgress {
		t.Fatalf("issue create under a live forged lease: exit %d, %s; want 4", o.code, o.stderr)
	}
	if o := w.run("", freshRunner(t), "resolve", key2, "--retry", "--force"); o.code != 0 {
		t.Fatalf("resolve --retry --force of a forged live lease: exit %d, %s", o.code, o.stderr)
	}
	if o := w.run("", freshRunner(t), args2...); o.code != 0 || len(w.fake.Issues(testworld.Owner, testworld.Name)) != 2 {
		t.Fatalf("issue create once cleared: exit %d, %s", o.code, o.stderr)
	}
}

// TestLedgerForeignRefServesTheOthers: a ref under the claims prefix that
// points at an ordinary commit is skipped and reported; status lists every
// other key, status --stale still exits 5 for a stale one, reconcile
// settles it, and prune removes the foreign ref when named by its key.
func TestLedgerForeignRefServesTheOthers(t *testing.T) {
	t.Parallel()
	w := repoLedgerWorld(t)
	stale := w.keyOf("--task", "T", "--step", "deploy", "--kind", "exec", "--repo", testRepo)
	w.forge("repository", stale, forged{status: ledger.Attempting, kind: "exec", format: 2})
	foreign := w.keyOf("--task", "T9", "--kind", "issue", "--repo", testRepo)
	ref := testworld.Forge(t, w.fake, testRepo, foreign, "", "Add README\n\nan ordinary commit")
	o := w.run("", freshRunner(t), "status", "--json")
	if o.code != 0 || !strings.Contains(o.stdout, stale) || !strings.Contains(o.stderr, "skipped "+ref) {
		t.Fatalf("status with a foreign ref: exit %d, %s %s; want the other key listed and the ref reported", o.code, o.stdout, o.stderr)
	}
	if o := w.run("", freshRunner(t), "status", "--stale", "1m"); o.code != ExitStale {
		t.Fatalf("status --stale with a foreign ref and a stale entry: exit %d, %s; want 5", o.code, o.stderr)
	}
	if o := w.run("", freshRunner(t), "reconcile", "--json"); o.code != 0 || !strings.Contains(o.stdout, `"to":"failed"`) {
		t.Fatalf("reconcile with a foreign ref: exit %d, %s %s; want the exec that never started failed", o.code, o.stdout, o.stderr)
	}
	if o := w.run("", freshRunner(t), "prune", foreign); o.code != 0 || !strings.Contains(o.stderr, "held no claim of its key") {
		t.Fatalf("prune of the foreign ref: exit %d, %s", o.code, o.stderr)
	}
	if slices.Contains(w.fake.Refs(testworld.Owner, testworld.Name), ref) {
		t.Error("the foreign ref is still there")
	}
}

// TestLedgerPublishesNoSecret: a bearer token in a guarded command's argv
// and in its --check is nowhere in any object the repository holds, read
// back by another account through the git database endpoints: each claim
// ref, each commit it reaches, and every other commit object too.
func TestLedgerPublishesNoSecret(t *testing.T) {
	t.Parallel()
	const secret = "Bearer eyJhbGciOiJIUzI1NiJ9.c2VjcmV0.dG9rZW4"
	w := repoLedgerWorld(t)
	out := filepath.Join(t.TempDir(), "out")
	for i, args := range [][]string{
		{"exec", "--task", "T", "--step", "call", "--", "sh", "-c", "echo ok >> " + out, "curl", "-H", "Authorization: " + secret},
		{"exec", "--task", "T", "--step", "checked", "--check", "test -e /nonexistent-" + secret + " || exit 1", "--", "sh", "-c", "echo ok >> " + out, "curl", "-H", "Authorization: " + secret},
		{"exec", "--task", "T", "--step", "fails", "--", "sh", "-c", "echo " + secret + " >&2; exit 3", "curl", "-H", "Authorization: " + secret},
	} {
		if o := w.run("", freshRunner(t), args...); (o.code != 0) != (i == 2) {
			t.Fatalf("exec %d: exit %d, %s", i, o.code, o.stderr)
		}
	}
	c, err := ghcheck.New(ghcheck.Options{BaseURL: w.fake.URL(), Token: testworld.StrangerToken})
	if err != nil {
		t.Fatal(err)
	}
	r := ghcheck.Repo{Owner: testworld.Owner, Name: testworld.Name}
	refs, err := c.MatchingRefs(t.Context(), r, "refs/")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var walk func(sha string)
	walk = func(sha string) {
		if seen[sha] {
			return
		}
		seen[sha] = true
		cm, err := c.GetGitCommit(t.Context(), r, sha)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(cm.Message, "eyJhbGciOiJIUzI1NiJ9") || strings.Contains(cm.Message, "Authorization") {
			t.Errorf("commit %s holds the secret:\n%s", sha, cm.Message)
		}
		for _, p := range cm.Parents {
			walk(p)
		}
	}
	claims := 0
	for _, ref := range refs {
		if strings.HasPrefix(ref.Ref, "refs/ghonce/claims/") {
			claims++
		}
		walk(ref.SHA)
	}
	for _, sha := range w.fake.CommitSHAs(testworld.Owner, testworld.Name) {
		walk(sha)
	}
	if claims != 3 || len(seen) < 9 {
		t.Fatalf("read %d claim refs and %d commits; want 3 claims, each with its writes", claims, len(seen))
	}
}

// TestLedgerUnmarkedExecRunsNext: the start mark of an exec was never
// written (GitHub answered 502 twice to its write): run 1 says nothing was
// sent, and the next run runs the command, once. Before, the entry stayed
// unconfirmed for good.
func TestLedgerUnmarkedExecRunsNext(t *testing.T) {
	t.Parallel()
	w := repoLedgerWorld(t)
	out := filepath.Join(t.TempDir(), "out")
	args := []string{"exec", "--task", "T", "--step", "deploy", "--", "sh", "-c", "echo ran >> " + out}
	w.fake.Inject(fixtures.Fault{Kind: fixtures.Status502BeforeCommit, Times: 2, Match: func(r *http.Request) bool {
		return r.Method == http.MethodPatch && strings.Contains(r.URL.Path, "/git/refs/ghonce/claims/")
	}})
	o := w.run("", freshRunner(t), args...)
	if o.code != ExitUnconfirmed || lines(t, out) != 0 || !strings.Contains(o.stderr, "nothing was sent") {
		t.Fatalf("exec whose mark GitHub refused twice: exit %d, %s; command ran %d times; want 3, nothing sent", o.code, o.stderr, lines(t, out))
	}
	w.fake.ClearFaults()
	if o := w.run("", freshRunner(t), args...); o.code != 0 || lines(t, out) != 1 {
		t.Fatalf("the next run: exit %d, %s; command ran %d times; want it run once", o.code, o.stderr, lines(t, out))
	}
	if o := w.run("", freshRunner(t), args...); o.code != 0 || lines(t, out) != 1 {
		t.Fatalf("a third run: exit %d, %s; command ran %d times; want skipped", o.code, o.stderr, lines(t, out))
	}
}

// TestLedgerDoneExecIsConfirmed: a done claim of a guarded command that
// never ran, pointing at an address of its writer's choosing. With this
// run's --check, the check is asked first: it says the effect does not
// exist, and the run stops (exit 1), nothing run, saying how to retry.
// Without a check nothing can confirm it: skipped, as a local ledger would,
// and what the claim points at is not reported.
func TestLedgerDoneExecIsConfirmed(t *testing.T) {
	t.Parallel()
	w := repoLedgerWorld(t)
	ran := filepath.Join(t.TempDir(), "ran")
	key := w.keyOf("--task", "T", "--step", "deploy", "--kind", "exec", "--repo", testRepo)
	w.forge("repository", key, forged{status: ledger.Done, kind: "exec", format: 2, fields: map[string]any{"outcome": "created", "ref": map[string]any{"url": "https://evil.example/x"}}})
	cmd := []string{"--json", "--", "sh", "-c", "echo ran >> " + ran}
	o := w.run("", freshRunner(t), append([]string{"exec", "--task", "T", "--step", "deploy", "--check", "grep -q ran " + ran + " 2>/dev/null || exit 1"}, cmd...)...)
	if o.code != ExitError || lines(t, ran) != 0 || !strings.Contains(o.stdout, "resolve "+key+" --retry --force") {
		t.Fatalf("exec with a check over a forged done claim: exit %d, %s %s; command ran %d times; want exit 1, nothing run", o.code, o.stdout, o.stderr, lines(t, ran))
	}
	o = w.run("", freshRunner(t), append([]string{"exec", "--task", "T", "--step", "deploy"}, cmd...)...)
	if o.code != 0 || !strings.Contains(o.stdout, `"outcome":"skipped"`) || strings.Contains(o.stdout, "evil") || lines(t, ran) != 0 {
		t.Fatalf("exec without a check over a forged done claim: exit %d, %s; want skipped, naming nothing of the claim's", o.code, o.stdout)
	}
}

// TestLedgerRepositoryClaimComparesWithTheArtifact: a repository ledger's
// claim keeps no description, only its hash. A fresh runner's replay with
// a reworded title still says what changed, field by field, from the
// artifact GitHub shows.
func TestLedgerRepositoryClaimComparesWithTheArtifact(t *testing.T) {
	t.Parallel()
	w := repoLedgerWorld(t)
	args := []string{"issue", "create", "--task", "T", "--body", "The nightly build failed on main.", "--json", "--title"}
	if o := w.run("", freshRunner(t), append(args, "Nightly build failed")...); o.code != 0 {
		t.Fatalf("first run: %d %s", o.code, o.stderr)
	}
	// Warn: the same-act rule alone would answer a reworded title with the
	// facts (exit 7), which compare it with the artifact's too.
	o := w.run("", freshRunner(t), append(args[:len(args)-1], "--on-change", "warn", "--title", "Nightly build failed on main")...)
	if o.code != 0 || !strings.Contains(o.stdout, `"outcome":"skipped"`) || !strings.Contains(o.stdout, `"changed":["title"]`) {
		t.Fatalf("replay with a reworded title: exit %d, %s %s; want skipped, the title named as changed", o.code, o.stdout, o.stderr)
	}
}
