package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
)

// Where each setting comes from when several sources give one: a flag
// beats the environment, which beats a default, as docs/reference/
// configuration.md says. Each row runs ghonce in process and reads the
// answer where a user would: the repository, task and author of the issue
// it files, the ledger `init` names.
func TestFlagAndEnvironmentPrecedence(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	dir := t.TempDir()
	for _, r := range []string{"one", "two", "three"} {
		w.fake.AddRepo(testOwner, r, "main")
	}
	const second, secondToken = "second-bot", "tok-cli-test-second"
	w.fake.AddUser(second, secondToken)

	// Two Apps with one key pair, installed on the repository; the pair
	// is made at run time (no private key is committed).
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
	keyFile, badKeyFile := filepath.Join(dir, "app.pem"), filepath.Join(dir, "bad.pem")
	for path, data := range map[string]string{keyFile: keyPEM, badKeyFile: keyPEM[:len(keyPEM)/2]} {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const flagApp, envApp = 101, 102
	w.fake.AddApp(fixtures.App{ID: flagApp, Slug: "flag-app", PublicKey: &k.PublicKey})
	w.fake.AddApp(fixtures.App{ID: envApp, Slug: "env-app", PublicKey: &k.PublicKey})
	w.fake.InstallApp(envApp, testOwner, testName)
	inst := strconv.FormatInt(w.fake.InstallApp(flagApp, testOwner, testName), 10)
	asApp := map[string]string{"GH_TOKEN": "", "GHONCE_APP_ID": strconv.Itoa(envApp), "GHONCE_APP_PRIVATE_KEY": keyPEM}

	actions := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_WORKFLOW": "ci", "GITHUB_JOB": "build", "GITHUB_RUN_ID": "77"}
	issue := func(args ...string) []string {
		return slices.Concat([]string{"issue", "create", "--title", "t", "--body", "b", "--json"}, args)
	}
	n := 0
	task := func() []string { n++; return []string{"--task", "P-" + strconv.Itoa(n)} }
	repo := func() []string { return slices.Concat([]string{"--repo", testRepo}, task()) }
	in := func(name string) string { return filepath.Join(dir, name) }

	for _, tc := range []struct {
		name string
		env  map[string]string // over the world's; "" unsets
		args []string
		// what says which source won: "repo", "task", "author" of the
		// issue filed, or "ledger", the location `init --json` names.
		what, want string
		code       int
		stderr     string // for a failure: what the message must say
	}{
		{name: "--repo beats GH_REPO", env: map[string]string{"GH_REPO": testOwner + "/two", "GITHUB_REPOSITORY": testOwner + "/three"}, args: issue(slices.Concat([]string{"--repo", testOwner + "/one"}, task())...), what: "repo", want: testOwner + "/one"},
		{name: "GH_REPO beats GITHUB_REPOSITORY", env: map[string]string{"GH_REPO": testOwner + "/two", "GITHUB_REPOSITORY": testOwner + "/three"}, args: issue(task()...), what: "repo", want: testOwner + "/two"},
		{name: "GITHUB_REPOSITORY last", env: map[string]string{"GITHUB_REPOSITORY": testOwner + "/three"}, args: issue(task()...), what: "repo", want: testOwner + "/three"},
		{name: "no repository", args: issue(task()...), code: failure.ExitUsage, stderr: "pass --repo OWNER/NAME or set GH_REPO"},

		{name: "--task beats GHONCE_TASK", env: map[string]string{"GHONCE_TASK": "FROM-ENV"}, args: issue("--repo", testRepo, "--task", "FROM-FLAG"), what: "task", want: "FROM-FLAG"},
		{name: "GHONCE_TASK beats the Actions default", env: with(actions, "GHONCE_TASK", "FROM-ENV"), args: issue("--repo", testRepo), what: "task", want: "FROM-ENV"},
		{name: "the Actions default last", env: actions, args: issue("--repo", testRepo), what: "task", want: "gha/ci/build/run-77"},
		{name: "no task", args: issue("--repo", testRepo), code: failure.ExitUsage, stderr: "pass --task ID or set GHONCE_TASK"},
		{name: "an empty --task is none", args: issue("--repo", testRepo, "--task", ""), code: failure.ExitUsage, stderr: "pass --task ID or set GHONCE_TASK"},
		{name: "a blank GHONCE_TASK is none", env: map[string]string{"GHONCE_TASK": "   "}, args: issue("--repo", testRepo), code: failure.ExitUsage, stderr: "pass --task ID or set GHONCE_TASK"},

		{name: "GH_TOKEN beats GITHUB_TOKEN", env: map[string]string{"GITHUB_TOKEN": secondToken}, args: issue(repo()...), what: "author", want: testLogin},
		{name: "GITHUB_TOKEN when GH_TOKEN is empty", env: map[string]string{"GH_TOKEN": "", "GITHUB_TOKEN": secondToken}, args: issue(repo()...), what: "author", want: second},
		{name: "no token", env: map[string]string{"GH_TOKEN": ""}, args: issue(repo()...), code: failure.ExitUsage, stderr: "set GH_TOKEN or GITHUB_TOKEN"},

		{name: "--app-id beats GHONCE_APP_ID", env: asApp, args: issue(slices.Concat(repo(), []string{"--app-id", strconv.Itoa(flagApp)})...), what: "author", want: "flag-app[bot]"},
		{name: "GHONCE_APP_ID", env: asApp, args: issue(repo()...), what: "author", want: "env-app[bot]"},
		{name: "an App beats the token", env: with(asApp, "GH_TOKEN", testToken), args: issue(repo()...), what: "author", want: "env-app[bot]"},
		{name: "--app-private-key-file beats GHONCE_APP_PRIVATE_KEY_FILE", env: with(asApp, "GHONCE_APP_PRIVATE_KEY_FILE", badKeyFile), args: issue(slices.Concat(repo(), []string{"--app-private-key-file", keyFile})...), what: "author", want: "env-app[bot]"},
		{name: "GHONCE_APP_PRIVATE_KEY_FILE beats GHONCE_APP_PRIVATE_KEY", env: with(asApp, "GHONCE_APP_PRIVATE_KEY_FILE", badKeyFile), args: issue(repo()...), code: failure.ExitUsage, stderr: "parse github app private key"},
		{name: "--app-installation-id beats GHONCE_APP_INSTALLATION_ID", env: with(with(asApp, "GHONCE_APP_ID", strconv.Itoa(flagApp)), "GHONCE_APP_INSTALLATION_ID", "x"), args: issue(slices.Concat(repo(), []string{"--app-installation-id", inst})...), what: "author", want: "flag-app[bot]"},
		{name: "GHONCE_APP_INSTALLATION_ID beats the installation on --repo", env: with(asApp, "GHONCE_APP_INSTALLATION_ID", "x"), args: issue(repo()...), code: failure.ExitUsage, stderr: `invalid GitHub App installation id "x"`},

		{name: "--ledger beats GHONCE_LEDGER", env: map[string]string{"GHONCE_LEDGER": in("env.db")}, args: []string{"init", "--json", "--ledger", in("flag.db")}, what: "ledger", want: in("flag.db")},
		{name: "GHONCE_LEDGER beats XDG_STATE_HOME", env: map[string]string{"GHONCE_LEDGER": in("env.db"), "XDG_STATE_HOME": in("xdg")}, args: []string{"init", "--json"}, what: "ledger", want: in("env.db")},
		{name: "XDG_STATE_HOME last", env: map[string]string{"GHONCE_LEDGER": "", "XDG_STATE_HOME": in("xdg")}, args: []string{"init", "--json"}, what: "ledger", want: in("xdg/ghonce/ledger.db")},
		{name: "--ledger beats RUNNER_TEMP", env: with(actions, "RUNNER_TEMP", in("runner")), args: []string{"init", "--json", "--ledger", in("flag.db")}, what: "ledger", want: in("flag.db")},
		{name: "GHONCE_LEDGER beats RUNNER_TEMP", env: with(with(actions, "RUNNER_TEMP", in("runner")), "GHONCE_LEDGER", in("env.db")), args: []string{"init", "--json"}, what: "ledger", want: in("env.db")},
		{name: "RUNNER_TEMP in Actions, over XDG_STATE_HOME", env: with(with(with(actions, "RUNNER_TEMP", in("runner")), "GHONCE_LEDGER", ""), "XDG_STATE_HOME", in("xdg")), args: []string{"init", "--json"}, what: "ledger", want: in("runner/ghonce/ledger.db")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requests, entries := len(w.fake.Requests()), w.entries()
			o := w.run("", tc.env, tc.args...)
			if o.code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", o.code, tc.code, o.stderr)
			}
			if tc.code != 0 {
				// Refused at the door: nothing asked, nothing recorded.
				if !strings.Contains(o.stderr, tc.stderr) {
					t.Errorf("stderr %q does not say %q", o.stderr, tc.stderr)
				}
				if n := len(w.fake.Requests()) - requests; n != 0 {
					t.Errorf("%d requests reached GitHub, want none", n)
				}
				if n := w.entries() - entries; n != 0 {
					t.Errorf("%d entries recorded, want none", n)
				}
				return
			}
			if got := answer(t, w, tc.what, o.stdout); got != tc.want {
				t.Errorf("%s %q, want %q; stderr: %s", tc.what, got, tc.want, o.stderr)
			}
		})
	}
}

// entries counts the entries in w's ledger (none before it exists).
func (w *cliWorld) entries() int {
	o := w.run("", nil, "status", "--json")
	var st statusJSON
	if o.code != 0 || json.Unmarshal([]byte(o.stdout), &st) != nil {
		return 0
	}
	return len(st.Entries)
}

// with returns a copy of env with k set to v.
func with(env map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for ek, ev := range env {
		if ek != k {
			out[ek] = ev
		}
	}
	return out
}

// answer reads what of a run's JSON: the repository, task or author of
// the issue filed, or the ledger init names.
func answer(t *testing.T, w *cliWorld, what, stdout string) string {
	t.Helper()
	if what == "ledger" {
		var l initJSON
		if err := json.Unmarshal([]byte(stdout), &l); err != nil {
			t.Fatalf("init: %v: %q", err, stdout)
		}
		return l.Ledger
	}
	var r outcome.Result
	if err := json.Unmarshal([]byte(stdout), &r); err != nil || r.Outcome != outcome.Created {
		t.Fatalf("want one created issue, got %q (%v)", stdout, err)
	}
	switch what {
	case "repo":
		return r.Repo
	case "task":
		return r.Task
	}
	owner, name, _ := strings.Cut(r.Repo, "/")
	for _, is := range w.fake.Issues(owner, name) {
		if is.Number == r.Number {
			return is.Author
		}
	}
	t.Fatalf("issue #%d is not on the fake", r.Number)
	return ""
}

// GITHUB_API_URL works with and without its trailing slash (the fake
// serves under /api/v3/, as GitHub Enterprise does).
func TestAPIURLWithAndWithoutTrailingSlash(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	for i, u := range []string{w.fake.URL(), strings.TrimSuffix(w.fake.URL(), "/")} {
		if strings.HasSuffix(u, "/api/v3/") == (i == 1) {
			t.Fatalf("URL %q: want it with then without the trailing slash", u)
		}
		task := "T-" + strconv.Itoa(i)
		o := w.run("", map[string]string{"GITHUB_API_URL": u}, "issue", "create", "--task", task, "--title", task, "--body", "b", "--json", "--repo", testRepo)
		var r outcome.Result
		if err := json.Unmarshal([]byte(o.stdout), &r); o.code != 0 || err != nil || r.Outcome != outcome.Created || r.Number == 0 {
			t.Fatalf("GITHUB_API_URL=%s: exit %d, %q; want created\n%s", u, o.code, o.stdout, o.stderr)
		}
	}
	if n := len(w.fake.Issues(testOwner, testName)); n != 2 {
		t.Fatalf("%d issues, want 2", n)
	}
	for _, q := range w.fake.Requests() {
		if q.Status == 404 {
			t.Errorf("request %s %s answered 404: the API root was mangled", q.Method, q.Path)
		}
	}
}

// --step defaults to the kind's step, and the key is `ghonce key` of that
// identity; --step overrides it; exec, with no verb to default to, needs it.
func TestStepDefaultsToTheVerb(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	w.fake.SetRef(testOwner, testName, "fix-42", w.fake.AddCommit(testOwner, testName, "main"))
	mainSHA := w.fake.AddCommit(testOwner, testName, "main")
	n := strconv.Itoa(w.fake.SeedIssue(testOwner, testName, "mallory", fixtures.SeedIssue{Title: "Bug"}))
	key := func(step, kind, target string) string {
		o := w.run("", nil, "key", "--task", "ISSUE-42", "--step", step, "--kind", kind, "--repo", testRepo, "--target", target)
		if o.code != 0 {
			t.Fatalf("ghonce key: exit %d: %s", o.code, o.stderr)
		}
		return strings.TrimSpace(o.stdout)
	}
	for _, tc := range []struct {
		args               []string
		step, kind, target string
	}{
		{[]string{"pr", "create", "--base", "main", "--head", "fix-42", "--title", "Fix", "--body", "b"}, "pr-create", "pr", "main"},
		{[]string{"issue", "create", "--title", "Follow-up", "--body", "b"}, "issue-create", "issue", ""},
		{[]string{"issue", "comment", n, "--body", "b"}, "issue-comment", "comment", n},
		{[]string{"branch", "create", "release", "--sha", mainSHA}, "branch-create", "branch", "release"},
		{[]string{"file", "put", "docs/x.md", "--branch", "main", "-m", "m", "--content", "x"}, "file-put", "file", "main:docs/x.md"},
		{[]string{"issue", "create", "--step", "file-follow-up", "--title", "Another", "--body", "b"}, "file-follow-up", "issue", ""},
	} {
		verb := strings.Join(tc.args[:2], " ")
		t.Run(verb+" "+tc.step, func(t *testing.T) {
			o := w.run("", nil, slices.Concat(tc.args, []string{"--task", "ISSUE-42", "--repo", testRepo, "--json"})...)
			var r outcome.Result
			if err := json.Unmarshal([]byte(o.stdout), &r); o.code != 0 || err != nil {
				t.Fatalf("exit %d, %q (%v): %s", o.code, o.stdout, err, o.stderr)
			}
			if r.Step != tc.step || r.Kind != tc.kind || r.Outcome != outcome.Created {
				t.Errorf("step %q kind %q outcome %q, want %s %s created", r.Step, r.Kind, r.Outcome, tc.step, tc.kind)
			}
			if want := key(tc.step, tc.kind, tc.target); r.Key != want {
				t.Errorf("key %s, want `ghonce key --step %s --kind %s --target %q` = %s", r.Key, tc.step, tc.kind, tc.target, want)
			}
		})
	}
	o := w.run("", nil, "exec", "--task", "ISSUE-42", "--", "true")
	if o.code != failure.ExitUsage || !strings.Contains(o.stderr, "--step") {
		t.Errorf("exec without --step: exit %d, stderr %q; want %d asking for --step", o.code, o.stderr, failure.ExitUsage)
	}
}

// GHONCE_SETTLE is the default of --settle on every verb that reads it; the
// flag wins over it, and a value that is not a duration is refused before
// anything is recorded.
func TestSettleFromFlagElseGhonceSettle(t *testing.T) {
	for _, tc := range []struct {
		name, env string
		args      []string
		want      time.Duration
		code      int
	}{
		{name: "default", want: reconcile.DefaultSettle},
		{name: "env", env: "250ms", want: 250 * time.Millisecond},
		{name: "env zero", env: "0", want: 0},
		{name: "flag beats env", env: "250ms", args: []string{"--settle", "2s"}, want: 2 * time.Second},
		{name: "bad env", env: "soon", code: failure.ExitUsage},
		{name: "negative env", env: "-1s", code: failure.ExitUsage},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got time.Duration
			ran := false
			c := newCmdReconcile(&cmdutil.Factory{IO: IO{Getenv: mapEnv{"GHONCE_SETTLE": tc.env}.get}}, func(o *reconcileOptions) error {
				ran, got = true, o.Engine.Settle
				return nil
			})
			root := &cobra.Command{Use: "ghonce", SilenceErrors: true, SilenceUsage: true}
			root.AddCommand(c)
			root.PersistentPreRunE = func(c *cobra.Command, _ []string) error {
				return cmdutil.SettleDefault(c, mapEnv{"GHONCE_SETTLE": tc.env}.get)
			}
			root.SetArgs(append([]string{"reconcile"}, tc.args...))
			root.SetOut(io.Discard)
			root.SetErr(io.Discard)
			err := root.Execute()
			if tc.code != 0 {
				if err == nil || !isUsageErr(err) || !strings.Contains(err.Error(), "GHONCE_SETTLE") || ran {
					t.Fatalf("GHONCE_SETTLE=%q: err %v, ran %v; want a usage error naming GHONCE_SETTLE and no run", tc.env, err, ran)
				}
				return
			}
			if err != nil || !ran || got != tc.want {
				t.Fatalf("GHONCE_SETTLE=%q %v: settle %v (ran %v, err %v), want %v", tc.env, tc.args, got, ran, err, tc.want)
			}
		})
	}
}

// The root wires GHONCE_SETTLE in: a bad value stops any verb that reads
// --settle with exit 2, before a ledger is opened.
func TestBadGhonceSettleIsUsage(t *testing.T) {
	var stderr bytes.Buffer
	ledger := filepath.Join(t.TempDir(), "ledger.db")
	code := Main(context.Background(), []string{"reconcile", "--ledger", ledger}, IO{
		In: strings.NewReader(""), Out: io.Discard, Err: &stderr,
		Getenv: mapEnv{"GHONCE_SETTLE": "soon"}.get, Now: time.Now,
	})
	if code != failure.ExitUsage || !strings.Contains(stderr.String(), "GHONCE_SETTLE") {
		t.Fatalf("exit %d, stderr %q; want exit 2 naming GHONCE_SETTLE", code, stderr.String())
	}
	if _, err := os.Stat(ledger); !os.IsNotExist(err) {
		t.Fatalf("a ledger was made (%v); a usage error must touch nothing", err)
	}
}

// A comment has one default step whichever verb makes it: `pr comment N`
// and `issue comment N` in one task are one comment. A comment recorded
// under the step `pr comment` defaulted to before ("pr-comment") is still
// found: the rerun settles that entry instead of commenting again.
func TestOneDefaultStepPerKind(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	n := strconv.Itoa(w.fake.SeedPR(testOwner, testName, "mallory", fixtures.SeedPR{Title: "Fix", Head: "fix-1"}))
	run := func(task string, args ...string) outcome.Result {
		t.Helper()
		o := w.run("", nil, slices.Concat(args, []string{"--body", "b", "--task", task, "--repo", testRepo, "--json"})...)
		var r outcome.Result
		if err := json.Unmarshal([]byte(o.stdout), &r); o.code != 0 || err != nil {
			t.Fatalf("%v: exit %d, %q (%v): %s", args, o.code, o.stdout, err, o.stderr)
		}
		return r
	}
	first := run("ONE", "pr", "comment", n)
	second := run("ONE", "issue", "comment", n)
	if first.Step != "issue-comment" || first.Outcome != outcome.Created || second.Outcome != outcome.Skipped || second.Key != first.Key {
		t.Errorf("pr comment: %s %s %s; issue comment: %s %s; want issue-comment created, then skipped under its key", first.Step, first.Outcome, first.Key, second.Outcome, second.Key)
	}

	old := run("OLD", "pr", "comment", n, "--step", "pr-comment") // as an earlier ghonce recorded it
	again := run("OLD", "pr", "comment", n)
	if again.Outcome != outcome.Skipped || again.Key != old.Key {
		t.Errorf("rerun after the upgrade: %s under %s, want skipped under the earlier key %s", again.Outcome, again.Key, old.Key)
	}
	if got := len(w.fake.Comments(testOwner, testName, mustAtoi(t, n))); got != 2 {
		t.Errorf("%d comments on #%s, want 2 (one per task)", got, n)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	i, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return i
}

type mapEnv map[string]string

func (m mapEnv) get(k string) string { return m[k] }

func isUsageErr(err error) bool { u, ok := err.(interface{ Usage() bool }); return ok && u.Usage() }
