package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/store"
	"github.com/ghonce/ghonce/taskkey"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// oneObject decodes stdout as exactly one JSON object and nothing else.
func oneObject(t *testing.T, name, stdout string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		t.Fatalf("%s: stdout is not one JSON object: %v; stdout: %q", name, err, stdout)
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		t.Fatalf("%s: more than one JSON value on stdout: %q", name, stdout)
	}
	return obj
}

// holdKey makes key's entry attempting, held by a live process on another
// host, last written at at.
func holdKey(t *testing.T, path, key string, at time.Time) {
	t.Helper()
	ctx := context.Background()
	l, err := store.Open(ctx, path, store.Options{Create: store.CreateForAction, Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = l.Claim(ctx, ledger.ClaimParams{Key: key, Task: "HELD", Step: "s", Kind: "exec",
		Owner: ledger.Owner{ID: "other", Host: "another-host", PID: 4242}, Lease: time.Hour, Why: "test"})
	if err != nil {
		t.Fatal(err)
	}
}

// TestJSONOnEveryExit runs one case per exit code (and per error kind) with
// --json and checks the one object a program would read.
func TestJSONOnEveryExit(t *testing.T) {
	t.Parallel()
	// Keys depend only on the identity, not on the world: derive them once.
	keys := newCLIWorld(t)
	key := func(args ...string) string {
		o := keys.run("", nil, append([]string{"key"}, args...)...)
		if o.code != 0 {
			t.Fatalf("key %v: exit %d: %s", args, o.code, o.stderr)
		}
		return strings.TrimSpace(o.stdout)
	}
	issueKey := key("--task", "J0", "--step", "issue-create", "--kind", "issue", "--repo", testRepo)
	commentKey := key("--task", "J3", "--step", "issue-comment", "--kind", "comment", "--target", "1", "--repo", testRepo)
	heldKey := key("--task", "HELD", "--step", "s", "--kind", "exec")

	// What a row needs in place before it runs; each row runs in a world
	// of its own, so no row depends on another having run.
	held := func(t *testing.T, w *cliWorld) { holdKey(t, w.ledger, heldKey, time.Now()) }
	issueDone := func(t *testing.T, w *cliWorld) {
		if o := w.run("", nil, "issue", "create", "--task", "J0", "--title", "t", "--body", "b", "--repo", testRepo); o.code != 0 {
			t.Fatalf("issue J0: exit %d: %s", o.code, o.stderr)
		}
	}
	// Issue #1 exists, and the fake drops the answer to a comment on it
	// after storing it.
	dropsComment := func(t *testing.T, w *cliWorld) {
		if o := w.run("", nil, "issue", "create", "--task", "J1", "--title", "t", "--body", "b", "--repo", testRepo); o.code != 0 {
			t.Fatalf("issue #1: exit %d: %s", o.code, o.stderr)
		}
		w.fake.Inject(fixtures.Fault{Kind: fixtures.Status504AfterCommit, Match: func(r *http.Request) bool {
			return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/issues/1/comments")
		}})
	}
	notLedger := func(t *testing.T, w *cliWorld) {
		if err := os.MkdirAll(filepath.Dir(w.ledger), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(filepath.Dir(w.ledger), "not-a-ledger.db"), []byte("these are notes, not a ledger\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	for _, tc := range []struct {
		name  string
		given func(*testing.T, *cliWorld) // what must be in place first, or nil
		env   map[string]string
		args  []string
		code  int
		kind  string // error.kind; "" on success
		key   string // the key the object must carry; "" for none
		state string
		next  string // a substring of next
	}{
		{name: "0 created", args: []string{"issue", "create", "--task", "J0", "--title", "t", "--body", "b", "--repo", testRepo},
			key: issueKey, state: "done"},
		{name: "0 key", args: []string{"key", "--task", "J0", "--step", "issue-create", "--kind", "issue", "--repo", testRepo}, key: issueKey},
		{name: "1 refused", args: []string{"issue", "comment", "999", "--task", "J2", "--body", "b", "--repo", testRepo},
			code: failure.ExitError, kind: "refused", state: "failed", next: "nothing was created"},
		{name: "1 ledger", given: notLedger, args: []string{"status", "--ledger", "NOT-A-LEDGER"}, code: failure.ExitError, kind: "ledger", next: "ledger"},
		{name: "2 usage", args: []string{"key", "--no-such-flag"}, code: failure.ExitUsage, kind: "usage", next: "ghonce key --help"},
		{name: "2 usage, flag group", args: []string{"issue", "create", "--task", "J9", "--title", "t", "--body", "b", "-F", "x", "--repo", testRepo},
			code: failure.ExitUsage, kind: "usage", next: "ghonce issue create --help"},
		{name: "2 credentials, key known", env: map[string]string{"GH_TOKEN": ""},
			args: []string{"issue", "create", "--task", "J0", "--title", "t", "--body", "b", "--repo", testRepo},
			code: failure.ExitUsage, kind: "credentials", key: issueKey, next: "GH_TOKEN"},
		{name: "3 unconfirmed", given: dropsComment, args: []string{"issue", "comment", "1", "--task", "J3", "--body", "b", "--repo", testRepo, "--settle", "0"},
			code: failure.ExitUnconfirmed, kind: "unconfirmed", key: commentKey, state: "attempting", next: "ghonce resolve " + commentKey},
		{name: "4 in progress", given: held, args: []string{"exec", "--task", "HELD", "--step", "s", "--wait", "0", "--json", "--", "true"},
			code: failure.ExitInProgress, kind: "in_progress", key: heldKey, state: "attempting", next: "rerun"},
		{name: "0 init", args: []string{"init"}},
		{name: "0 branch name", args: []string{"branch", "name", "--task", "J0", "--repo", testRepo}},
		{name: "0 status KEY", given: issueDone, args: []string{"status", issueKey}, key: issueKey, state: "done"},
		{name: "1 no such entry", given: issueDone, args: []string{"status", strings.Replace(issueKey, issueKey[5:9], "zzzz", 1)}, code: failure.ExitError, kind: "ledger", next: "ghonce status"},
		{name: "2 resolve, both ways", given: held, args: []string{"resolve", heldKey, "--done", "--retry"}, code: failure.ExitUsage, kind: "usage", key: heldKey, next: "ghonce resolve --help"},
		{name: "3 reconcile leaves one unsettled", given: held, args: []string{"reconcile"}, code: failure.ExitUnconfirmed, kind: "unconfirmed", next: "ghonce reconcile"},
		{name: "4 resolve of a held key", given: held, args: []string{"resolve", heldKey, "--retry"}, code: failure.ExitInProgress, kind: "in_progress", key: heldKey, next: "rerun"},
		{name: "5 stale", given: held, args: []string{"status", "--stale", "1ms"}, code: failure.ExitStale, kind: "stale", next: "ghonce reconcile"},
		{name: "7 same or another", given: issueDone, args: []string{"issue", "create", "--task", "J0", "--title", "t2", "--body", "b", "--repo", testRepo},
			code: failure.ExitSameOrAnother, kind: "same_or_another", key: issueKey, state: "done", next: "--step issue-create-t2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newCLIWorld(t)
			if tc.given != nil {
				tc.given(t, w)
			}
			args := slices.Clone(tc.args)
			for i, a := range args {
				if a == "NOT-A-LEDGER" {
					args[i] = filepath.Join(filepath.Dir(w.ledger), "not-a-ledger.db")
				}
			}
			if !slices.Contains(args, "--") {
				args = append(args, "--json")
			}
			o := w.run("", tc.env, args...)
			if o.code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", o.code, tc.code, o.stderr)
			}
			obj := oneObject(t, tc.name, o.stdout)
			if obj["ok"] != (tc.code == 0) || obj["exit_code"] != float64(tc.code) {
				t.Errorf("ok %v, exit_code %v; want %v, %d", obj["ok"], obj["exit_code"], tc.code == 0, tc.code)
			}
			if tc.key != "" && obj["key"] != tc.key {
				t.Errorf("key %v, want %s", obj["key"], tc.key)
			}
			if tc.key != "" && tc.code != 0 && !strings.Contains(o.stderr, tc.key) {
				t.Errorf("stderr does not name the key %s: %s", tc.key, o.stderr)
			}
			if tc.state != "" && obj["state"] != tc.state {
				t.Errorf("state %v, want %s", obj["state"], tc.state)
			}
			if tc.code == 0 {
				if _, ok := obj["error"]; ok {
					t.Errorf("a success carries an error: %v", obj)
				}
				return
			}
			e, _ := obj["error"].(map[string]any)
			if e == nil || e["kind"] != tc.kind || e["message"] == "" {
				t.Errorf("error %v, want kind %s and a message", obj["error"], tc.kind)
			}
			if next, _ := obj["next"].(string); !strings.Contains(next, tc.next) {
				t.Errorf("next %q does not say %q", next, tc.next)
			}
			if tc.kind == "refused" && e["http_status"] == nil {
				t.Errorf("a refusal without GitHub's status: %v", e)
			}
		})
	}
}

// TestUsageErrorsPointAtTheVerb checks the plain wording of flag errors and
// the hint that names the verb's own help.
func TestUsageErrorsPointAtTheVerb(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	for _, tc := range []struct {
		args   []string
		stderr []string
	}{
		{[]string{"issue", "create", "--body", "b", "-F", "x"}, []string{"give only one of --body or --body-file", "Run 'ghonce issue create --help' for usage."}},
		{[]string{"status", "--since", "1s"}, []string{"unknown flag: --since", "Run 'ghonce status --help' for usage."}},
		{[]string{"nope"}, []string{"unknown command", "Run 'ghonce --help' for usage."}},
		{[]string{"resolve"}, []string{"accepts 1 arg(s), received 0", "Run 'ghonce resolve --help' for usage."}},
		{[]string{"key", "extra"}, []string{"unknown command \"extra\"", "Run 'ghonce key --help' for usage."}},
		{[]string{"pr", "create", "--wait", "soon"}, []string{"invalid argument \"soon\"", "Run 'ghonce pr create --help' for usage."}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			o := w.run("", nil, tc.args...)
			if o.code != failure.ExitUsage || o.stdout != "" {
				t.Errorf("%v: exit %d, stdout %q; want 2 and nothing on stdout", tc.args, o.code, o.stdout)
			}
			for _, s := range tc.stderr {
				if !strings.Contains(o.stderr, s) {
					t.Errorf("%v: stderr %q does not say %q", tc.args, o.stderr, s)
				}
			}
			if strings.Contains(o.stderr, "if any flags in the group") {
				t.Errorf("%v: cobra's wording leaked: %s", tc.args, o.stderr)
			}
		})
	}
}

// TestHelpShowsOnlyTheVerbsFlags checks that a verb's help lists the shared
// flags it reads and none it ignores.
func TestHelpShowsOnlyTheVerbsFlags(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	for _, tc := range []struct {
		verb       []string
		has, lacks []string
	}{
		{[]string{"key"}, []string{"--task", "--step", "--repo", "--json"}, []string{"--wait", "--settle", "--ledger", "--trust-author"}},
		{[]string{"status"}, []string{"--ledger", "--stale", "--json"}, []string{"--settle", "--wait", "--step"}},
		{[]string{"pr", "create"}, []string{"--wait", "--settle", "--trust-author", "--app-id"}, nil},
		{[]string{"init"}, []string{"--ledger", "--repo"}, []string{"--task", "--wait"}}, // --repo: where the ledger "github" lives
	} {
		t.Run(strings.Join(tc.verb, " "), func(t *testing.T) {
			o := w.run("", nil, append(tc.verb, "--help")...)
			if o.code != 0 {
				t.Fatalf("%v --help: exit %d", tc.verb, o.code)
			}
			for _, f := range tc.has {
				if !strings.Contains(o.stdout, f) {
					t.Errorf("%v --help lacks %s", tc.verb, f)
				}
			}
			for _, f := range tc.lacks {
				if strings.Contains(o.stdout, f+" ") {
					t.Errorf("%v --help lists %s, which it does not use", tc.verb, f)
				}
			}
		})
	}
}

func TestVersionAndCompletion(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	for _, args := range [][]string{{"--version"}, {"version"}} {
		if o := w.run("", nil, args...); o.code != 0 || !strings.HasPrefix(o.stdout, "ghonce ") {
			t.Errorf("%v: exit %d, stdout %q", args, o.code, o.stdout)
		}
	}
	obj := oneObject(t, "version --json", w.run("", nil, "version", "--json").stdout)
	if obj["ok"] != true || obj["version"] == "" || obj["go"] == "" {
		t.Errorf("version --json: %v", obj)
	}
	for _, sh := range []string{"bash", "zsh", "fish", "powershell"} {
		if o := w.run("", nil, "completion", sh); o.code != 0 || !strings.Contains(o.stdout, "ghonce") {
			t.Errorf("completion %s: exit %d, %d bytes", sh, o.code, len(o.stdout))
		}
	}
}

// statusWorld is a ledger with one entry of each status, written at known
// times, and the clock status reads them at.
func statusWorld(t *testing.T) (path string, now time.Time, keys []string) {
	t.Helper()
	ctx := context.Background()
	path = filepath.Join(t.TempDir(), "ledger.db")
	t0 := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	clock := t0
	l, err := store.Open(ctx, path, store.Options{Create: store.CreateForAction, Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	owner := ledger.Owner{ID: "run-1", Host: "another-host", PID: 4242}
	claim := func(key, task, step, kind, repo string) int64 {
		c, err := l.Claim(ctx, ledger.ClaimParams{Key: key, Task: task, Step: step, Kind: kind, Repo: repo, Owner: owner, Lease: time.Minute, Why: "first attempt"})
		if err != nil {
			t.Fatal(err)
		}
		return c.Entry.Fence
	}
	finish := func(p ledger.FinishParams) {
		if _, err := l.Finish(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	keys = []string{taskkey.Prefix + strings.Repeat("a", 32), taskkey.Prefix + strings.Repeat("b", 32), taskkey.Prefix + strings.Repeat("c", 32)}
	fence := claim(keys[0], "ISSUE-42", "pr-create", "pr", testRepo)
	finish(ledger.FinishParams{Key: keys[0], Fence: fence, Status: ledger.Done, Outcome: "created",
		Ref: ledger.Ref{Number: 7, URL: "https://github.com/octo-org/hello-world/pull/7"}, Why: "created"})
	clock = t0.Add(90 * time.Minute)
	fence = claim(keys[1], "a very long task name that\nspans two lines and more", "issue-comment", "comment", testRepo)
	finish(ledger.FinishParams{Key: keys[1], Fence: fence, Status: ledger.Failed,
		Error: "create comment: POST https://api.example/repos/octo-org/hello-world/issues/9/comments: 404 Not Found\n(nothing was created)", Why: "refused"})
	clock = t0.Add(3 * time.Hour)
	fence = claim(keys[2], "nightly", "notify", "exec", "")
	finish(ledger.FinishParams{Key: keys[2], Fence: fence, Status: ledger.Attempting, Error: "command killed\tby SIGKILL", Why: "unconfirmed"})
	return path, t0.Add(3*time.Hour + 5*time.Minute), keys
}

func runAt(now time.Time, env map[string]string, args ...string) cliRun {
	var out, errb bytes.Buffer
	sys := IO{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] },
		Now: func() time.Time { return now }, Executable: os.Executable}
	code := Main(context.Background(), args, sys)
	return cliRun{code: code, stdout: out.String(), stderr: errb.String()}
}

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (rerun with -update to write it): %v", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s--- want\n%s", name, got, want)
	}
}

func TestStatusRendering(t *testing.T) {
	t.Parallel()
	path, now, keys := statusWorld(t)
	env := map[string]string{"GHONCE_LEDGER": path}

	summary := runAt(now, env, "status")
	if summary.code != 0 {
		t.Fatalf("status: exit %d: %s", summary.code, summary.stderr)
	}
	golden(t, "status_summary.golden", summary.stdout)
	lines := strings.Split(strings.TrimSuffix(summary.stdout, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "nightly: 1 step, 1 attempting; 1 stuck, the longest for 5m") || !strings.Contains(lines[1], "attempting, stuck 5m") {
		t.Errorf("status: the stuck task is not first, with how long it is stuck:\n%s", summary.stdout)
	}
	if !strings.Contains(summary.stdout, "https://github.com/octo-org/hello-world/pull/7") {
		t.Errorf("status: no link to the done step's artifact:\n%s", summary.stdout)
	}
	for i, line := range lines {
		if line != "" && !strings.HasPrefix(line, "  ") && !strings.Contains(line, " step") {
			t.Errorf("status: line %d is neither a task nor a step (a value broke the line): %q", i, line)
		}
	}
	if !strings.Contains(summary.stderr, "3 entries: 1 attempting, 1 done, 1 failed") {
		t.Errorf("status: no counts on stderr: %q", summary.stderr)
	}

	table := runAt(now, env, "status", "--table")
	if table.code != 0 {
		t.Fatalf("status: exit %d: %s", table.code, table.stderr)
	}
	golden(t, "status_table.golden", table.stdout)
	if !strings.Contains(table.stderr, "3 entries: 1 attempting, 1 done, 1 failed") {
		t.Errorf("status: no counts on stderr: %q", table.stderr)
	}
	for i, line := range strings.Split(strings.TrimSuffix(table.stdout, "\n"), "\n") {
		if i > 0 && !strings.HasPrefix(line, taskkey.Prefix) {
			t.Errorf("status: line %d is not an entry (a value broke the line): %q", i, line)
		}
	}

	record := runAt(now, env, "status", keys[1])
	if record.code != 0 {
		t.Fatalf("status KEY: exit %d: %s", record.code, record.stderr)
	}
	golden(t, "status_record.golden", record.stdout)
	if !strings.Contains(record.stdout, "(nothing was created)") {
		t.Errorf("status KEY does not show the full last error:\n%s", record.stdout)
	}

	stale := runAt(now, env, "status", "--stale", "2m", "--table")
	if stale.code != failure.ExitStale {
		t.Fatalf("status --stale: exit %d, want 5: %s", stale.code, stale.stderr)
	}
	golden(t, "status_stale.golden", stale.stdout)
	if strings.Contains(stale.stdout, keys[0]) || !strings.Contains(stale.stdout, keys[2]) {
		t.Errorf("status --stale lists more or less than the stale entry:\n%s", stale.stdout)
	}
	if o := runAt(now, env, "status", "--stale", "1h"); o.code != 0 || o.stdout != "" {
		t.Errorf("status --stale with nothing stale: exit %d, stdout %q", o.code, o.stdout)
	}

	obj := oneObject(t, "status --json", runAt(now, env, "status", "--json").stdout)
	counts, _ := obj["counts"].(map[string]any)
	if obj["ok"] != true || len(obj["entries"].([]any)) != 3 || counts["attempting"] != 1.0 || counts["done"] != 1.0 || counts["failed"] != 1.0 {
		t.Errorf("status --json: %v", obj)
	}
	obj = oneObject(t, "status KEY --json", runAt(now, env, "status", keys[2], "--json").stdout)
	if obj["key"] != keys[2] || obj["state"] != "attempting" {
		t.Errorf("status KEY --json: key %v state %v", obj["key"], obj["state"])
	}
}

// TestWaitIsAnnouncedOnceInRoundedTime holds a key in another (live)
// process and checks the wait is said once, with what it waits for, in a
// duration a person reads.
func TestWaitIsAnnouncedOnceInRoundedTime(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	o := w.run("", nil, "key", "--task", "HELD", "--step", "s", "--kind", "exec")
	key := strings.TrimSpace(o.stdout)
	holdKey(t, w.ledger, key, time.Now())
	o = w.run("", nil, "exec", "--task", "HELD", "--step", "s", "--wait", "300ms", "--", "true")
	if o.code != failure.ExitInProgress {
		t.Fatalf("exit %d, want 4: %s", o.code, o.stderr)
	}
	if n := strings.Count(o.stderr, "waiting up to 300ms for it to finish"); n != 1 {
		t.Errorf("the wait is announced %d times, want once:\n%s", n, o.stderr)
	}
	if !strings.Contains(o.stderr, "held by another attempt (other, process 4242 on another-host, another machine, lease until ") {
		t.Errorf("the wait does not say what it waits for:\n%s", o.stderr)
	}
	if !regexp.MustCompile(`waited \d+ms\)`).MatchString(o.stderr) || strings.Contains(o.stderr, "µs") {
		t.Errorf("the waited time is not rounded for a person:\n%s", o.stderr)
	}
}

// TestRateLimitWaitIsAnnounced: a secondary rate limit on the create is
// waited for, said once on stderr, and the create then succeeds.
func TestRateLimitWaitIsAnnounced(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	w.fake.Inject(fixtures.Fault{Kind: fixtures.SecondaryRateLimit, RetryAfter: time.Second,
		Match: fixtures.MatchMethodPath("POST", "/repos/"+testRepo+"/issues")})
	o := w.run("", nil, "issue", "create", "--task", "RL", "--title", "t", "--body", "b", "--repo", testRepo)
	if o.code != 0 {
		t.Fatalf("exit %d: %s", o.code, o.stderr)
	}
	if n := strings.Count(o.stderr, "GitHub rate limit: waiting 1s"); n != 1 {
		t.Errorf("the rate-limit wait is announced %d times, want once:\n%s", n, o.stderr)
	}
}

// A misspelt verb under a noun is a usage error, as a misspelt top-level
// command is: exit 2 and, with --json, one JSON object on stdout, never
// the noun's help and exit 0 (a runner trusting exit 0 would count it
// as done). So is a noun without its verb (issue 40: `ghonce pr --json`
// printed help and exit 0), and the root given flags but no command;
// `ghonce` alone and `--help` show the help.
func TestUnknownVerbIsAUsageError(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	for _, args := range [][]string{
		{"pr", "craete", "--json"}, {"issue", "creat"}, {"branch", "craete"},
		{"file", "pt"}, {"labels", "prnue", "--json"}, {"issue", "commnet", "--json"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			o := w.run("", nil, args...)
			if o.code != failure.ExitUsage {
				t.Fatalf("exit %d, want 2\nstdout %s\nstderr %s", o.code, o.stdout, o.stderr)
			}
			if !strings.Contains(o.stderr, fmt.Sprintf("unknown command %q for \"ghonce %s\"", args[1], args[0])) || !strings.Contains(o.stderr, "did you mean") {
				t.Errorf("stderr does not name the verb and its noun:\n%s", o.stderr)
			}
			if !slices.Contains(args, "--json") {
				if o.stdout != "" {
					t.Errorf("stdout %q, want nothing", o.stdout)
				}
				return
			}
			var f failure.Failure
			if err := json.Unmarshal([]byte(o.stdout), &f); err != nil || f.Error.Kind != failure.Usage || f.ExitCode != failure.ExitUsage {
				t.Errorf("stdout is not one usage failure (%v):\n%s", err, o.stdout)
			}
		})
	}
	for _, args := range [][]string{{"pr"}, {"pr", "--json"}, {"issue", "--json"}, {"branch"}, {"file", "--json"}, {"labels", "--json"}, {"--json"}, {"--repo", testRepo}} {
		t.Run("no verb "+strings.Join(args, " "), func(t *testing.T) {
			o := w.run("", nil, args...)
			if o.code != failure.ExitUsage || !strings.Contains(o.stderr, "needs a command: want one of: ") || strings.Contains(o.stderr, "no effect") {
				t.Fatalf("exit %d, want 2 naming the commands\nstdout %s\nstderr %s", o.code, o.stdout, o.stderr)
			}
			var f failure.Failure
			if !slices.Contains(args, "--json") {
				if o.stdout != "" {
					t.Errorf("stdout %q, want nothing", o.stdout)
				}
			} else if err := json.Unmarshal([]byte(o.stdout), &f); err != nil || f.Error.Kind != failure.Usage || f.ExitCode != failure.ExitUsage {
				t.Errorf("stdout is not one usage failure (%v):\n%s", err, o.stdout)
			}
		})
	}
	for _, args := range [][]string{{}, {"--help"}, {"pr", "--help"}} {
		if o := w.run("", nil, args...); o.code != failure.ExitOK || !strings.Contains(o.stdout, "Usage:") {
			t.Errorf("ghonce %v: exit %d, stdout %q; want the help and 0", args, o.code, o.stdout)
		}
	}
}

// With nowhere to put the ledger, the ledger package says so in its own
// words and the CLI adds the flag that fixes it, once.
func TestNoLedgerLocationNamesTheFlag(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	o := w.run("", map[string]string{"GHONCE_LEDGER": "", "HOME": "", "XDG_STATE_HOME": ""}, "status")
	if o.code != failure.ExitUsage || !strings.Contains(o.stderr, "locate ledger: ") || strings.Count(o.stderr, "--ledger") != 1 {
		t.Errorf("exit %d, stderr %q; want 2, the ledger's words and --ledger once", o.code, o.stderr)
	}
}

// A policy the engine refuses is named by the flag that gave it (the
// engine names the field), and nothing runs.
func TestBadPolicyNamesItsFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"exec", "--task", "T", "--step", "s", "--on-unconfirmed", "maybe", "--", "true"}, `--on-unconfirmed "maybe" is not a policy: want fail or retry`},
		{[]string{"issue", "create", "--task", "T", "--repo", testRepo, "--title", "t", "--body", "b", "--on-change", "maybe"}, `--on-change "maybe" is not a policy: want auto, warn, fail or update`},
	} {
		o := runAt(time.Now(), map[string]string{}, c.args...)
		if o.code != failure.ExitUsage || !strings.Contains(o.stderr, c.want) {
			t.Errorf("ghonce %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), o.code, o.stderr, failure.ExitUsage, c.want)
		}
	}
}
