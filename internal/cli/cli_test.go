package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/sqlite"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
	"github.com/ghonce/ghonce/tests/testworld"
)

// These tests run the CLI in process through the injected IO: buffers for
// the streams, a map for the environment, and the fake GitHub on loopback.
// What only a real process shows (SIGKILL, exit status, a real stdin) is
// tested by cmd/ghonce.

const (
	testOwner = testworld.Owner
	testName  = testworld.Name
	testRepo  = testworld.Repo
	testLogin = testworld.Login
	// testToken is a placeholder the fake accepts, not a credential.
	testToken = testworld.Token
)

// cliWorld is the shared test world (testworld) and the environment
// cli.Main reads, as a map: the world's token, fake and ledger.
type cliWorld struct {
	t      *testing.T
	tw     *testworld.World
	fake   *fixtures.Server
	ledger string
	env    map[string]string
}

func newCLIWorld(t *testing.T) *cliWorld {
	t.Helper()
	tw := testworld.New(t)
	return &cliWorld{t: t, tw: tw, fake: tw.GitHub, ledger: tw.Ledger, env: map[string]string{
		"GH_TOKEN": testToken, "GITHUB_API_URL": tw.GitHub.URL(), "GHONCE_LEDGER": tw.Ledger,
	}}
}

type cliRun struct {
	code           int
	stdout, stderr string
}

// run runs ghonce args with stdin and w.env plus extra ("KEY=" unsets KEY).
func (w *cliWorld) run(stdin string, extra map[string]string, args ...string) cliRun {
	sys, out, errb := w.io(stdin, extra)
	code := Main(context.Background(), args, sys)
	return cliRun{code: code, stdout: out.String(), stderr: errb.String()}
}

// io is an IO reading stdin, with w.env plus extra ("KEY=" unsets KEY),
// writing to the buffers it returns.
func (w *cliWorld) io(stdin string, extra map[string]string) (IO, *bytes.Buffer, *bytes.Buffer) {
	env := maps.Clone(w.env)
	maps.Copy(env, extra)
	var out, errb bytes.Buffer
	return IO{
		In: strings.NewReader(stdin), Out: &out, Err: &errb,
		Getenv: func(k string) string { return env[k] }, Now: time.Now, Executable: os.Executable,
	}, &out, &errb
}

func TestActingVerbsInProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bodyFile := filepath.Join(dir, "body.md")
	if err := os.WriteFile(bodyFile, []byte("from a file"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		before  []string // run first, in the same world, to succeed
		stdin   string
		env     map[string]string
		args    []string
		code    int
		outcome outcome.Outcome // with --json; "" for no JSON check
		stdout  string          // a substring of stdout, for non-JSON runs
		stderr  string          // a substring of stderr
		issues  int             // the issues on the fake after the row
	}{
		{name: "issue from --body", args: []string{"issue", "create", "--task", "T1", "--title", "t", "--body", "b", "--json", "--repo", testRepo}, outcome: outcome.Created, issues: 1},
		{name: "the same again is skipped", before: []string{"issue", "create", "--task", "T1", "--title", "t", "--body", "b", "--repo", testRepo},
			args: []string{"issue", "create", "--task", "T1", "--title", "t", "--body", "b", "--json", "--repo", testRepo}, outcome: outcome.Skipped, issues: 1},
		{name: "body from stdin", stdin: "piped body", args: []string{"issue", "create", "--task", "T2", "--title", "t", "--body-file", "-", "--repo", testRepo}, stdout: "/issues/", stderr: "created issue", issues: 1},
		{name: "body from a file", args: []string{"issue", "create", "--task", "T3", "--title", "t", "-F", bodyFile, "--repo", testRepo, "--json"}, outcome: outcome.Created, issues: 1},
		{name: "missing body file", args: []string{"issue", "create", "--task", "T4", "--title", "t", "-F", filepath.Join(dir, "nope"), "--repo", testRepo}, code: failure.ExitUsage, stderr: "read --body-file"},
		{name: "task and repo from the environment", env: map[string]string{"GHONCE_TASK": "T5", "GH_REPO": testRepo}, args: []string{"issue", "create", "--title", "t", "--body", "b", "--json"}, outcome: outcome.Created, issues: 1},
		{name: "no task", args: []string{"issue", "create", "--title", "t", "--body", "b", "--repo", testRepo}, code: failure.ExitUsage, stderr: "GHONCE_TASK"},
		{name: "bad repo", args: []string{"issue", "create", "--task", "T6", "--title", "t", "--body", "b", "--repo", "not-a-repo"}, code: failure.ExitUsage, stderr: "OWNER/NAME"},
		{name: "no token", env: map[string]string{"GH_TOKEN": ""}, args: []string{"issue", "create", "--task", "T7", "--title", "t", "--body", "b", "--repo", testRepo}, code: failure.ExitUsage, stderr: "GITHUB_TOKEN"},
		{name: "file content from stdin", stdin: "hello\n", args: []string{"file", "put", "README.md", "--task", "T8", "--branch", "main", "-m", "add", "--content-file", "-", "--repo", testRepo, "--json"}, outcome: outcome.Created},
		{name: "file content from a missing file", args: []string{"file", "put", "README.md", "--task", "T9", "--branch", "main", "-m", "add", "--content-file", filepath.Join(dir, "nope"), "--repo", testRepo}, code: failure.ExitUsage, stderr: "read --content-file"},
		{name: "both content flags", args: []string{"file", "put", "README.md", "--task", "T10", "--branch", "main", "-m", "add", "--content", "x", "--content-file", bodyFile, "--repo", testRepo}, code: failure.ExitUsage, stderr: "only one of"},
		{name: "bad comment number", args: []string{"pr", "comment", "x", "--task", "T11", "--body", "b", "--repo", testRepo}, code: failure.ExitUsage, stderr: "invalid number"},
		{name: "upper-case sha is refused", args: []string{"branch", "create", "feature", "--task", "T12", "--sha", strings.Repeat("A", 40), "--repo", testRepo}, code: failure.ExitUsage, stderr: "is not a commit SHA"},
		{name: "exec needs no token or repo", env: map[string]string{"GH_TOKEN": ""}, args: []string{"exec", "--task", "T13", "--step", "s", "--check", "false", "--json", "--", "true"}, outcome: outcome.Created},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each row in a world of its own: no row sees what another made.
			w := newCLIWorld(t)
			if tc.before != nil {
				if o := w.run("", nil, tc.before...); o.code != 0 {
					t.Fatalf("%s first: exit %d; stderr: %s", tc.name, o.code, o.stderr)
				}
			}
			o := w.run(tc.stdin, tc.env, tc.args...)
			if o.code != tc.code {
				t.Errorf("%s: exit %d, want %d; stderr: %s", tc.name, o.code, tc.code, o.stderr)
				return
			}
			if !strings.Contains(o.stderr, tc.stderr) {
				t.Errorf("%s: stderr %q does not say %q", tc.name, o.stderr, tc.stderr)
			}
			if tc.code != 0 && o.stdout != "" {
				t.Errorf("%s: a failed run printed on stdout: %q", tc.name, o.stdout)
			}
			if !strings.Contains(o.stdout, tc.stdout) {
				t.Errorf("%s: stdout %q does not contain %q", tc.name, o.stdout, tc.stdout)
			}
			if tc.outcome != "" {
				var r outcome.Result
				if err := json.Unmarshal([]byte(o.stdout), &r); err != nil {
					t.Errorf("%s: stdout is not one JSON result: %v: %q", tc.name, err, o.stdout)
				} else if r.Outcome != tc.outcome {
					t.Errorf("%s: outcome %q, want %q", tc.name, r.Outcome, tc.outcome)
				}
			}
			if n := len(w.fake.Issues(testOwner, testName)); n != tc.issues {
				t.Errorf("%s: %d issues on the fake, want %d", tc.name, n, tc.issues)
			}
			if tc.issues > 0 && w.fake.Writes() == 0 {
				t.Errorf("%s: no write reached the fake", tc.name)
			}
		})
	}
}

// The ledger verbs filter by --repo and --task only: GHONCE_TASK and GH_REPO
// name an action, they never hide ledger entries.
func TestLedgerVerbsIgnoreTheActionEnvironment(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	for _, task := range []string{"A", "B"} {
		if o := w.run("", nil, "exec", "--task", task, "--step", "s", "--check", "false", "--", "true"); o.code != 0 {
			t.Fatalf("exec %s: exit %d: %s", task, o.code, o.stderr)
		}
	}
	env := map[string]string{"GHONCE_TASK": "A", "GH_REPO": testRepo, "GITHUB_REPOSITORY": testRepo}
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"status sees every task", []string{"status", "--json"}, 2},
		{"--task narrows it", []string{"status", "--json", "--task", "B"}, 1},
		{"--repo narrows it", []string{"status", "--json", "--repo", testRepo}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := w.run("", env, tc.args...)
			if o.code != 0 {
				t.Errorf("%s: exit %d: %s", tc.name, o.code, o.stderr)
				return
			}
			var st statusJSON
			if err := json.Unmarshal([]byte(o.stdout), &st); err != nil {
				t.Errorf("%s: %v: %q", tc.name, err, o.stdout)
				return
			}
			if len(st.Entries) != tc.want {
				t.Errorf("%s: %d entries, want %d", tc.name, len(st.Entries), tc.want)
			}
			for _, e := range st.Entries {
				if e.Status != "done" || e.Kind != "exec" || e.Key == "" {
					t.Errorf("%s: entry %+v, want a done exec entry with a key", tc.name, e)
				}
			}
		})
	}

	o := w.run("", env, "reconcile", "--json")
	if o.code != 0 {
		t.Fatalf("reconcile: exit %d: %s", o.code, o.stderr)
	}
	var rc reconcileJSON
	if err := json.Unmarshal([]byte(o.stdout), &rc); err != nil || rc.Settled == nil || rc.Unsettled != 0 {
		t.Errorf("reconcile --json = %q (%v), want an empty settled list and 0 unsettled", o.stdout, err)
	}
	if o := w.run("", env, "status", "--repo", "bad"); o.code != failure.ExitUsage {
		t.Errorf("status --repo bad: exit %d, want %d", o.code, failure.ExitUsage)
	}
}

// status KEY shows the entry's history; an unknown key is exit 1, a
// malformed one exit 2.
func TestStatusKeyHistory(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	o := w.run("", nil, "exec", "--task", "H", "--step", "s", "--check", "false", "--json", "--", "true")
	var r outcome.Result
	if err := json.Unmarshal([]byte(o.stdout), &r); err != nil {
		t.Fatalf("exec: %v: %q %s", err, o.stdout, o.stderr)
	}
	o = w.run("", nil, "status", r.Key, "--json")
	var st statusJSON
	if err := json.Unmarshal([]byte(o.stdout), &st); err != nil || len(st.Entries) != 1 {
		t.Fatalf("status KEY --json = %q (%v)", o.stdout, err)
	}
	if h := st.Entries[0].History; len(h) < 2 || h[len(h)-1].To != "done" {
		t.Errorf("history %+v, want at least a claim and the move to done", h)
	}
	if o := w.run("", nil, "status", taskkey.Prefix+strings.Repeat("a", 32)); o.code != failure.ExitError || !strings.Contains(o.stderr, "no such entry") {
		t.Errorf("status of a well-formed unknown key: exit %d, stderr %q; want exit 1, no such entry", o.code, o.stderr)
	}
	if o := w.run("", nil, "status", "nonsense"); o.code != failure.ExitUsage {
		t.Errorf("status nonsense: exit %d, want %d", o.code, failure.ExitUsage)
	}
}

// A kind's verb, built from its declaration, parses its command line into
// the kind's description; runF sees it.
func TestFlagsParseIntoOptions(t *testing.T) {
	t.Parallel()
	f := &cmdutil.Factory{IO: IO{Getenv: func(string) string { return "" }}}
	var got *kindRun
	c := newCmdKind(f, "pr", "pr create", func(r *kindRun) error { got = r; return nil })
	c.SetArgs([]string{"--base", "main", "--head", "fork:feat", "-t", "T", "-b", "", "-l", "x", "-l", "y,z", "--draft", "--on-change", "warn"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	want := reconcile.PR{Base: "main", Head: "fork:feat", Title: "T", Draft: true, Labels: []string{"x", "y", "z"}}
	if got == nil || !reflect.DeepEqual(got.Spec, want) || got.OnChange != "warn" {
		t.Fatalf("parsed %+v, want %+v", got, want)
	}

	c = newCmdKind(f, "file", "file put", func(r *kindRun) error { got = r; return nil })
	c.SetArgs([]string{"a/b.txt", "--branch", "main", "-m", "msg", "--content", ""})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	if fp, ok := got.Spec.(reconcile.File); !ok || fp.Path != "a/b.txt" || fp.Branch != "main" || fp.Message != "msg" || fp.Content == nil {
		t.Errorf("file put parsed %#v (an empty --content is content)", got.Spec)
	}
	if c.Flags().Lookup("on-change") != nil {
		t.Error("file put has --on-change, but a file is never edited to match")
	}
}

// As a new user tried it: a directory given as a file's path is bad input
// (exit 2, kind usage), refused before anything is recorded, where it used
// to exit 3 and leave an attempting entry no rerun could settle.
func TestFilePutOfADirectoryIsUsageAndRecordsNothing(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	if o := w.run("", nil, "issue", "create", "--task", "T0", "--title", "t", "--body", "b", "--repo", testRepo); o.code != 0 {
		t.Fatalf("setup: exit %d: %s", o.code, o.stderr)
	}
	writes := w.fake.Writes()
	o := w.run("", nil, "file", "put", "docs/", "--task", "T1", "--branch", "main", "-m", "add", "--content", "x", "--repo", testRepo, "--json")
	if o.code != failure.ExitUsage {
		t.Fatalf("exit %d, want %d (usage); stderr: %s", o.code, failure.ExitUsage, o.stderr)
	}
	var f struct {
		Error struct{ Kind string } `json:"error"`
	}
	if err := json.Unmarshal([]byte(o.stdout), &f); err != nil || f.Error.Kind != "usage" {
		t.Fatalf("failure %q (%v), want kind usage", o.stdout, err)
	}
	l, err := sqlite.Open(context.Background(), w.ledger, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if ents, err := l.List(context.Background(), ledger.ListParams{Task: "T1"}); err != nil || len(ents) != 0 {
		t.Fatalf("the ledger holds %d entries for T1 (%v), want none", len(ents), err)
	}
	if n := w.fake.Writes() - writes; n != 0 {
		t.Fatalf("%d writes reached GitHub, want none", n)
	}
}

// A file put without --branch goes to the repository's default branch,
// read from GitHub as the kind reads it (reconcile.Complete), and its key
// is the one --branch with that name gives: a rerun that names the branch
// is the same action, and `ghonce key` with BRANCH:PATH prints that key.
// When the default branch cannot be read, nothing is recorded or written.
func TestFilePutWithoutBranchWritesToTheDefaultBranch(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	const name = "trunked"
	w.fake.AddRepo(testOwner, name, "trunk")
	repo := testOwner + "/" + name
	put := func(task string, extra ...string) []string {
		return append([]string{"file", "put", "notes.md", "--task", task, "-m", "add", "--content", "x", "--repo", repo, "--json"}, extra...)
	}
	first := w.result(put("T")...)
	if first.Outcome != outcome.Created || !slices.Contains(w.fake.Files(testOwner, name, "trunk"), "notes.md") {
		t.Fatalf("without --branch: %s; the default branch trunk holds %v, want notes.md created", first.Outcome, w.fake.Files(testOwner, name, "trunk"))
	}
	if again := w.result(put("T", "--branch", "trunk")...); again.Outcome != outcome.Skipped || again.Key != first.Key {
		t.Fatalf("rerun with --branch trunk: %s under %q; want skipped under %q", again.Outcome, again.Key, first.Key)
	}
	if k := w.run("", nil, "key", "--kind", "file", "--target", "trunk:notes.md", "--task", "T", "--repo", repo); strings.TrimSpace(k.stdout) != first.Key {
		t.Errorf("ghonce key --target trunk:notes.md prints %q (exit %d), want %q", k.stdout, k.code, first.Key)
	}

	entries, writes := w.entries(), w.fake.Writes()
	w.fake.Inject(fixtures.Fault{Kind: fixtures.Status502BeforeCommit, Times: 1000, Match: fixtures.MatchMethodPath(http.MethodGet, "/repos/"+repo)})
	if o := w.run("", nil, put("DOWN")...); o.code == 0 || !strings.Contains(o.stdout, "default branch could not be read (name one with --branch)") {
		t.Errorf("default branch unreadable: exit %d, stdout %s; want a failure that says so and names --branch", o.code, o.stdout)
	}
	if n := w.entries(); n != entries {
		t.Errorf("the ledger holds %d entries, want still %d", n, entries)
	}
	if n := w.fake.Writes() - writes; n != 0 {
		t.Errorf("%d writes reached GitHub, want none", n)
	}
}
