package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/fakegithub"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/store"
	"github.com/ghonce/ghonce/outcome"
)

// The verbs that look at or settle the ledger never create one: a missing
// ledger is exit 1 with the path and how to make one, and nothing appears
// on disk (a monitor with a typo in GHONCE_LEDGER must alarm).
func TestLedgerVerbsNeverCreateALedger(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	dir := filepath.Join(t.TempDir(), "state")
	missing := filepath.Join(dir, "typo.db")
	env := map[string]string{"GHONCE_LEDGER": missing}
	key := w.run("", env, "key", "--task", "T", "--step", "s", "--kind", "exec")
	if key.code != 0 {
		t.Fatalf("key: exit %d: %s", key.code, key.stderr)
	}
	for _, args := range [][]string{
		{"status"}, {"status", "--stale", "1h"}, {"status", "--json"}, {"reconcile"},
		{"resolve", strings.TrimSpace(key.stdout), "--retry"},
	} {
		o := w.run("", env, args...)
		want := "no ledger at " + missing + "; `ghonce init` creates one"
		if o.code != failure.ExitError || !strings.Contains(o.stderr, want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", args, o.code, o.stderr, failure.ExitError, want)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the ledger verbs created %s (stat: %v)", dir, err)
	}
}

// After a lost ledger, a status (say, from a cron monitor) used to create
// a fresh ledger that the next run then trusted, so `exec` without --check
// ran the command again. Now status creates nothing, and the run that does
// create the ledger cannot vouch for the past: exit 3, the command not run.
func TestStatusAfterALostLedgerKeepsTheProtection(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	if o := w.run("", nil, "status"); o.code != failure.ExitError {
		t.Fatalf("status on a lost ledger: exit %d, want %d", o.code, failure.ExitError)
	}
	o := w.run("", nil, "exec", "--task", "T", "--step", "notify", "--", "echo", "RAN")
	if o.code != failure.ExitUnconfirmed || strings.Contains(o.stdout, "RAN") {
		t.Fatalf("exec on a ledger this run created: exit %d, stdout %q; want exit %d and the command not run", o.code, o.stdout, failure.ExitUnconfirmed)
	}

	// init on it now says how it was made, and changes nothing.
	if o := w.run("", nil, "init"); o.code != 0 || !strings.Contains(o.stderr, "made by a first action") {
		t.Fatalf("init on an action ledger: exit %d, stderr %q", o.code, o.stderr)
	}

	// A ledger made ahead by init is known to be new: the command runs.
	w2 := newCLIWorld(t)
	if o := w2.run("", nil, "init"); o.code != 0 {
		t.Fatalf("init: exit %d: %s", o.code, o.stderr)
	}
	o = w2.run("", nil, "exec", "--task", "T", "--step", "notify", "--", "echo", "RAN")
	if o.code != 0 || !strings.Contains(o.stdout, "RAN") {
		t.Fatalf("exec on an init ledger: exit %d, stdout %q, stderr %q", o.code, o.stdout, o.stderr)
	}
}

// resolve keeps what it should: --done on a done entry keeps its number and
// URL; --retry on it is refused without --force; with --force it says what
// the next run will do, and that run finds the issue again, creating none.
func TestResolveKeepsTheArtifact(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	create := []string{"issue", "create", "--task", "R", "--title", "t", "--body", "b", "--repo", testRepo, "--json"}
	first := w.result(create...)
	if first.Outcome != outcome.Created || first.Number == 0 {
		t.Fatalf("first create: %+v", first)
	}
	if o := w.run("", nil, "resolve", first.Key, "--done", "--note", "checked"); o.code != 0 || !strings.Contains(o.stderr, fmt.Sprintf("issue #%d", first.Number)) {
		t.Fatalf("resolve --done: exit %d, stderr %q; want 0 and the issue named", o.code, o.stderr)
	}
	if r := w.result(create...); r.Outcome != outcome.Skipped || r.Number != first.Number || r.URL != first.URL {
		t.Fatalf("after resolve --done: %+v, want skipped with #%d %s", r, first.Number, first.URL)
	}

	o := w.run("", nil, "resolve", first.Key, "--retry")
	if o.code != failure.ExitUsage || !strings.Contains(o.stderr, "--force") || !strings.Contains(o.stderr, first.URL) {
		t.Fatalf("resolve --retry on a done entry: exit %d, stderr %q; want %d naming the issue and --force", o.code, o.stderr, failure.ExitUsage)
	}
	if r := w.result(create...); r.Outcome != outcome.Skipped || r.Number != first.Number {
		t.Fatalf("a refused --retry changed the entry: %+v", r)
	}

	o = w.run("", nil, "resolve", first.Key, "--retry", "--force", "--note", "deleted?")
	if o.code != 0 || !strings.Contains(o.stderr, "looks on GitHub first") {
		t.Fatalf("resolve --retry --force: exit %d, stderr %q", o.code, o.stderr)
	}
	if r := w.result(create...); r.Outcome != outcome.Found || r.Number != first.Number {
		t.Fatalf("after --retry --force: %+v, want found #%d", r, first.Number)
	}
	if n := len(w.fake.Issues(testOwner, testName)); n != 1 {
		t.Fatalf("%d issues on the fake, want 1", n)
	}
	for _, args := range [][]string{
		{"resolve", first.Key, "--retry", "--ref", "x"},
		{"resolve", first.Key, "--done", "--force"},
	} {
		if o := w.run("", nil, args...); o.code != failure.ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, o.code, failure.ExitUsage)
		}
	}
}

// result runs an acting verb with --json and decodes its result.
func (w *cliWorld) result(args ...string) outcome.Result {
	w.t.Helper()
	o := w.run("", nil, args...)
	var r outcome.Result
	if err := json.Unmarshal([]byte(o.stdout), &r); err != nil {
		w.t.Fatalf("%v: exit %d: %v: stdout %q stderr %q", args, o.code, err, o.stdout, o.stderr)
	}
	return r
}

// A request that never left (a refused connection, a TLS handshake with an
// untrusted certificate; a host that does not resolve is tested in ghcheck,
// without asking a DNS server) created nothing:
// the entry is failed (exit 1), not attempting (exit 3), so a wrong API host
// leaves no stale attempting entries behind, and the message says so.
func TestNotSentIsFailedNotMaybe(t *testing.T) {
	t.Parallel()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedURL := "http://" + closed.Addr().String()
	closed.Close()
	untrusted := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the untrusted server was sent %s %s", r.Method, r.URL)
	}))
	untrusted.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes are expected
	untrusted.StartTLS()
	t.Cleanup(untrusted.Close) // after the parallel subtests
	for _, tc := range []struct{ name, api, says string }{
		{"refused connection", closedURL, "connection refused"},
		{"untrusted certificate", untrusted.URL, "certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each waits out ghcheck's retries of a dial error (1s+2s+4s).
			t.Parallel()
			w := newCLIWorld(t)
			env := map[string]string{"GITHUB_API_URL": tc.api}
			o := w.run("", env, "issue", "create", "--task", "NS", "--title", "t", "--body", "b", "--repo", testRepo)
			if o.code != failure.ExitError || !strings.Contains(o.stderr, tc.says) || !strings.Contains(o.stderr, "nothing was sent") {
				t.Fatalf("exit %d, stderr %q; want exit %d saying %q and that nothing was sent", o.code, o.stderr, failure.ExitError, tc.says)
			}
			st := w.run("", nil, "status", "--json")
			var s statusJSON
			if err := json.Unmarshal([]byte(st.stdout), &s); err != nil || len(s.Entries) != 1 || s.Entries[0].Status != "failed" {
				t.Errorf("status %q (%v), want one failed entry", st.stdout, err)
			}
		})
	}
}

// Every verb takes task and step ids by the one rule (taskkey.CheckID):
// " T-1" and "T-1\n" are T-1, in the key, the ledger and the filters,
// while an id with a newline inside is a usage error (exit 2).
func TestTaskAndStepIdsByOneRule(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	want := strings.TrimSpace(w.run("", nil, "key", "--task", "T-1", "--step", "s", "--kind", "exec").stdout)
	for _, task := range []string{" T-1", "T-1\n", "\tT-1 "} {
		o := w.run("", nil, "key", "--task", task, "--step", "s\n", "--kind", "exec")
		if got := strings.TrimSpace(o.stdout); o.code != 0 || got != want {
			t.Errorf("key --task %q: exit %d, key %q; want %q", task, o.code, got, want)
		}
	}
	if r := w.result("exec", "--task", " T-1", "--step", "s", "--check", "false", "--json", "--", "true"); r.Key != want || r.Task != "T-1" {
		t.Errorf("exec --task ' T-1': key %s task %q; want %s and T-1", r.Key, r.Task, want)
	}
	if r := w.result("exec", "--task", "T-1\n", "--step", "s", "--check", "false", "--json", "--", "true"); r.Outcome != outcome.Skipped {
		t.Errorf("exec --task 'T-1\\n' after ' T-1': outcome %q, want skipped (the same key)", r.Outcome)
	}
	o := w.run("", nil, "status", "--task", "T-1\n", "--json")
	var st statusJSON
	if err := json.Unmarshal([]byte(o.stdout), &st); err != nil || len(st.Entries) != 1 {
		t.Errorf("status --task 'T-1\\n': %q (%v), want the one entry", o.stdout, err)
	}
	for _, args := range [][]string{
		{"key", "--task", "T-1\nT-2", "--step", "s", "--kind", "exec"},
		{"key", "--task", "T-1", "--step", "a\nb", "--kind", "exec"},
		{"exec", "--task", "T-1\nT-2", "--step", "s", "--", "true"},
		{"issue", "create", "--task", "T-1\nT-2", "--title", "t", "--body", "b", "--repo", testRepo},
		{"pr", "create", "--task", "T-1", "--step", "x\ny", "--base", "main", "--head", "f", "--title", "t", "--body", "b", "--repo", testRepo},
		{"status", "--task", "T-1\nT-2"},
		{"reconcile", "--task", "T-1\nT-2"},
	} {
		if o := w.run("", nil, args...); o.code != failure.ExitUsage || !strings.Contains(o.stderr, "control character") && !strings.Contains(o.stderr, "newline") {
			t.Errorf("%q: exit %d, stderr %q; want %d naming the bad character", args, o.code, o.stderr, failure.ExitUsage)
		}
	}
	if n := len(w.fake.Issues(testOwner, testName)); n != 0 {
		t.Errorf("%d issues created from bad ids", n)
	}
}

// GitHub's 4xx answers in words a person can act on: which branch is not
// pushed, which base is missing, which repository or issue is not there,
// whose open pull request holds the head. Never go-github's structs, never
// "a rerun will try again" (it cannot help), exit 1, nothing created.
func TestGitHubRefusalsInWords(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	for _, b := range []string{"feat", "taken"} {
		w.fake.SetRef(testOwner, testName, b, w.fake.AddCommit(testOwner, testName, "main"))
	}
	w.fake.AddUser("alice", "tok-alice")
	alices := w.fake.SeedPR(testOwner, testName, "alice", fixtures.SeedPR{Title: "Alice's", Head: "taken", Base: "main"})
	pr := func(task string, extra ...string) []string {
		return append([]string{"pr", "create", "--task", task, "--title", "t", "--body", "b", "--repo", testRepo}, extra...)
	}
	for _, tc := range []struct {
		name string
		args []string
		says []string
	}{
		{"head not pushed", pr("A", "--base", "main", "--head", "not-pushed"), []string{"head branch not-pushed is not pushed to " + testRepo, "push it first"}},
		{"base missing", pr("B", "--base", "no-such-base", "--head", "feat"), []string{"base branch no-such-base does not exist in " + testRepo}},
		{"repository missing", []string{"pr", "create", "--task", "C", "--title", "t", "--body", "b", "--repo", testOwner + "/nope", "--base", "main", "--head", "feat"}, []string{"repository " + testOwner + "/nope does not exist, or this token cannot see it"}},
		{"issue missing", []string{"issue", "comment", "999", "--task", "D", "--body", "b", "--repo", testRepo}, []string{"issue or pull request #999 does not exist in " + testRepo}},
		{"another user's open PR on the head", pr("E", "--base", "main", "--head", "taken"), []string{fmt.Sprintf("open pull request #%d by alice", alices), "/pull/", "another head branch"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := w.run("", nil, tc.args...)
			if o.code != failure.ExitError {
				t.Errorf("%s: exit %d, want %d; stderr %s", tc.name, o.code, failure.ExitError, o.stderr)
			}
			for _, s := range tc.says {
				if !strings.Contains(o.stderr, s) {
					t.Errorf("%s: stderr %q does not say %q", tc.name, o.stderr, s)
				}
			}
			for _, bad := range []string{"{Resource:", "Field:", "rerun will try again"} {
				if strings.Contains(o.stderr, bad) {
					t.Errorf("%s: stderr %q shows %q", tc.name, o.stderr, bad)
				}
			}
		})
	}
	if n := len(w.fake.PullRequests(testOwner, testName)); n != 1 {
		t.Errorf("%d pull requests, want alice's 1", n)
	}
	// Both body flags: ghonce's words, not cobra's flag-group text.
	o := w.run("", nil, pr("F", "--base", "main", "--head", "feat", "--body-file", "-")...)
	if o.code != failure.ExitUsage || !strings.Contains(o.stderr, "only one of --body or --body-file") || strings.Contains(o.stderr, "group") {
		t.Errorf("--body and --body-file: exit %d, stderr %q", o.code, o.stderr)
	}
}

// A second pull request in the same task with the default --step but
// another --head gets the first one back; --json says what changed, and
// --on-change decides: warn (default), fail (exit 1, nothing changed) or
// update (title and body edited; the head stays, with a warning).
func TestOnChange(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	for _, b := range []string{"one", "two"} {
		w.fake.SetRef(testOwner, testName, b, w.fake.AddCommit(testOwner, testName, "main"))
	}
	pr := func(head, title string, extra ...string) []string {
		return append([]string{"pr", "create", "--task", "OC", "--base", "main", "--head", head, "--title", title, "--body", "b " + title, "--repo", testRepo, "--json"}, extra...)
	}
	first := w.result(pr("one", "First")...)
	if first.Outcome != outcome.Created || first.PayloadChanged || len(first.Changed) != 0 {
		t.Fatalf("first: %+v", first)
	}
	r := w.result(pr("two", "First")...)
	if r.Outcome != outcome.Skipped || r.Number != first.Number || !r.PayloadChanged || strings.Join(r.Changed, ",") != "head" || !strings.Contains(r.Warning, "head differs") {
		t.Fatalf("another head, default warn: %+v; want skipped #%d, changed [head], a warning", r, first.Number)
	}

	o := w.run("", nil, pr("two", "Second", "--on-change", "fail")...)
	if o.code != failure.ExitError || !strings.Contains(o.stderr, "body, head and title differ") || !strings.Contains(o.stderr, "another --step") {
		t.Fatalf("--on-change fail: exit %d, stderr %q", o.code, o.stderr)
	}
	if got := w.fake.PullRequests(testOwner, testName); len(got) != 1 || got[0].Title != "First" {
		t.Fatalf("after fail: %+v, want the one PR, untouched", got)
	}

	r = w.result(pr("two", "Second", "--on-change", "update")...)
	if !r.Updated || r.Number != first.Number || !strings.Contains(r.Warning, "the head of an existing pr cannot be changed") {
		t.Fatalf("--on-change update: %+v", r)
	}
	got := w.fake.PullRequests(testOwner, testName)
	if len(got) != 1 || got[0].Title != "Second" || !strings.Contains(got[0].Body, "b Second") || !strings.Contains(got[0].Body, first.Key) {
		t.Fatalf("after update: %+v, want the PR retitled, its body replaced and still marked", got)
	}
	// The ledger now holds the new description: the same run skips quietly.
	writes := w.fake.Writes()
	if r := w.result(pr("two", "Second", "--on-change", "update")...); r.PayloadChanged || r.Updated || r.Warning != "" {
		t.Fatalf("the same run again: %+v, want a plain skip", r)
	}
	if w.fake.Writes() != writes {
		t.Fatalf("the plain skip wrote to GitHub")
	}
	// Only the head differs: nothing can be edited, nothing is written,
	// and the warning says so each time.
	writes = w.fake.Writes()
	if r := w.result(pr("one", "Second", "--on-change", "update")...); r.Updated || strings.Join(r.Changed, ",") != "head" || !strings.Contains(r.Warning, "cannot be changed") || w.fake.Writes() != writes {
		t.Fatalf("update with only the head changed: %+v, %d writes", r, w.fake.Writes()-writes)
	}
	if o := w.run("", nil, pr("two", "Second", "--on-change", "sometimes")...); o.code != failure.ExitUsage {
		t.Fatalf("--on-change sometimes: exit %d, want %d", o.code, failure.ExitUsage)
	}
}

// The key label has one neutral look and, after `labels describe`, a
// description; `labels prune`
// deletes the labels of pull requests and issues done longer ago than the
// age, and nothing else: not newer ones, not other kinds, not labels this
// ledger does not know, and --dry-run deletes nothing.
func TestKeyLabelsLookAndPrune(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	w.fake.SetRef(testOwner, testName, "feat", w.fake.AddCommit(testOwner, testName, "main"))
	pr := w.result("pr", "create", "--task", "L", "--base", "main", "--head", "feat", "--title", "t", "--body", "b", "--repo", testRepo, "--json")
	is := w.result("issue", "create", "--task", "L", "--title", "t", "--body", "b", "--repo", testRepo, "--json")
	w.fake.SeedIssue(testOwner, testName, "alice", fixtures.SeedIssue{Title: "x", Labels: []string{"ghonce:gk1_" + strings.Repeat("a", 32)}})
	labels := func() map[string]fakegithub.Label {
		m := map[string]fakegithub.Label{}
		for _, l := range w.fake.Labels(testOwner, testName) {
			m[l.Name] = l
		}
		return m
	}
	// GitHub made the key labels as the creates applied them: the key
	// label's colour, no description until `labels describe` (off the hot
	// path) gives them one, and a second run changes nothing.
	for _, key := range []string{pr.Key, is.Key} {
		l, ok := labels()["ghonce:"+key]
		if !ok || l.Color != "ededed" || l.Description != "" {
			t.Fatalf("label of %s after the creates: %+v (present %v), want colour ededed, no description", key, l, ok)
		}
	}
	for i, want := range []int{3, 0} {
		o := w.run("", nil, "labels", "describe", "--repo", testRepo, "--json")
		var got struct{ Described int }
		if err := json.Unmarshal([]byte(o.stdout), &got); err != nil || o.code != 0 || got.Described != want {
			t.Fatalf("labels describe #%d: exit %d, stdout %q (%v), want %d described", i+1, o.code, o.stdout, err, want)
		}
	}
	for _, key := range []string{pr.Key, is.Key} {
		l := labels()["ghonce:"+key]
		if l.Color != "ededed" || !strings.Contains(l.Description, "ghonce key") {
			t.Fatalf("label of %s after describe: %+v, want colour ededed and a description", key, l)
		}
	}

	// Not old enough yet: nothing to prune.
	if o := w.run("", nil, "labels", "prune", "--older-than", "1h", "--repo", testRepo); o.code != 0 || o.stdout != "" {
		t.Fatalf("prune of fresh keys: exit %d, stdout %q, stderr %q", o.code, o.stdout, o.stderr)
	}
	later := func(args ...string) cliRun { return w.runAt(time.Now().Add(48*time.Hour), args...) }
	o := later("labels", "prune", "--older-than", "1d", "--dry-run", "--json")
	var dry pruneJSON
	if err := json.Unmarshal([]byte(o.stdout), &dry); err != nil || o.code != 0 || len(dry.Labels) != 2 || !dry.DryRun {
		t.Fatalf("dry run: exit %d, %q (%v)", o.code, o.stdout, err)
	}
	if len(labels()) < 3 {
		t.Fatal("--dry-run deleted labels")
	}
	o = later("labels", "prune", "--older-than", "1d")
	if o.code != 0 || strings.Count(o.stdout, "\n") != 2 || !strings.Contains(o.stdout, "ghonce:"+pr.Key) || !strings.Contains(o.stdout, "ghonce:"+is.Key) {
		t.Fatalf("prune: exit %d, stdout %q, stderr %q", o.code, o.stdout, o.stderr)
	}
	left := labels()
	if _, ok := left["ghonce:"+pr.Key]; ok {
		t.Error("the PR's key label is still there")
	}
	if _, ok := left["ghonce:gk1_"+strings.Repeat("a", 32)]; !ok {
		t.Error("prune deleted a label this ledger does not know")
	}
	// Pruned keys are remembered: the next prune asks GitHub nothing.
	n := len(w.fake.Requests())
	if o := later("labels", "prune", "--older-than", "1d"); o.code != 0 || o.stdout != "" || len(w.fake.Requests()) != n {
		t.Fatalf("second prune: exit %d, stdout %q, %d requests", o.code, o.stdout, len(w.fake.Requests())-n)
	}
	// With the ledger intact, a pruned key is still skipped.
	if r := w.result("issue", "create", "--task", "L", "--title", "t", "--body", "b", "--repo", testRepo, "--json"); r.Outcome != outcome.Skipped {
		t.Fatalf("after prune: %+v, want skipped", r)
	}
	for _, age := range []string{"", "soon", "-1d", "0"} {
		if o := w.run("", nil, "labels", "prune", "--older-than", age); o.code != failure.ExitUsage {
			t.Errorf("--older-than %q: exit %d, want %d", age, o.code, failure.ExitUsage)
		}
	}
}

// runAt runs ghonce with the clock stopped at now.
func (w *cliWorld) runAt(now time.Time, args ...string) cliRun {
	return w.runClock(func() time.Time { return now }, args...)
}

// runLater runs ghonce with this machine's clock later (earlier, if
// negative) by skew.
func (w *cliWorld) runLater(skew time.Duration, args ...string) cliRun {
	return w.runClock(func() time.Time { return time.Now().Add(skew) }, args...)
}

// runClock runs ghonce args in process as w.run does, on the clock now.
func (w *cliWorld) runClock(now func() time.Time, args ...string) cliRun {
	var out, errb bytes.Buffer
	sys := IO{
		In: strings.NewReader(""), Out: &out, Err: &errb,
		Getenv: func(k string) string { return w.env[k] }, Now: now, Executable: os.Executable,
	}
	code := Main(context.Background(), args, sys)
	return cliRun{code: code, stdout: out.String(), stderr: errb.String()}
}

// An entry an earlier attempt left attempting stays so when GitHub cannot
// be reached: that attempt's outcome is still unknown (exit 3), and the
// message still says that this run sent nothing.
func TestNotSentKeepsAnEarlierAttempt(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	args := []string{"issue", "create", "--task", "NSA", "--title", "t", "--body", "b", "--repo", testRepo}
	key := strings.TrimSpace(w.run("", nil, "key", "--task", "NSA", "--kind", "issue", "--step", "issue-create", "--repo", testRepo).stdout)
	l, err := store.Open(context.Background(), w.ledger, store.Options{Create: store.CreateForAction})
	if err != nil {
		t.Fatal(err)
	}
	// A claim by a process on another host whose lease has run out: dead.
	_, err = l.Claim(context.Background(), ledger.ClaimParams{Key: key, Task: "NSA", Step: "issue-create", Kind: "issue", Repo: testRepo,
		Owner: ledger.Owner{ID: "elsewhere/1/x", Host: "elsewhere", PID: 1}, Lease: time.Millisecond, Why: "earlier attempt"})
	l.Close()
	if err != nil {
		t.Fatal(err)
	}
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	api := "http://" + closed.Addr().String()
	closed.Close()
	o := w.run("", map[string]string{"GITHUB_API_URL": api}, append(args, "--settle", "0")...)
	if o.code != failure.ExitUnconfirmed || !strings.Contains(o.stderr, "nothing was sent") || !strings.Contains(o.stderr, "stays \"attempting\"") {
		t.Fatalf("exit %d, stderr %q; want %d, nothing sent, the entry staying attempting", o.code, o.stderr, failure.ExitUnconfirmed)
	}
	var s statusJSON
	if err := json.Unmarshal([]byte(w.run("", nil, "status", "--json").stdout), &s); err != nil || len(s.Entries) != 1 || s.Entries[0].Status != "attempting" {
		t.Fatalf("status: %+v (%v), want the entry attempting", s, err)
	}
}
