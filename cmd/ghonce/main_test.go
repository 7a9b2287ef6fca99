package main_test

// Tests of the real ghonce binary: TestMain builds it once; every test runs
// it as a child process against a fake GitHub (fixtures.Server) on
// 127.0.0.1, with a ledger in t.TempDir(), and kills it with SIGKILL at the
// moment the fake has committed a write and before the answer leaves
// (harness.Runner). Assertions are on the fake's state, on --json output
// and on exit codes.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/fakegithub"
	"github.com/ghonce/ghonce/taskkey"
	"github.com/ghonce/ghonce/tests/harness"
	"github.com/ghonce/ghonce/tests/testworld"
)

const (
	owner = testworld.Owner
	name  = testworld.Name
	repo  = testworld.Repo
	login = testworld.Login
	// token is distinctive so that any leak into an output or the ledger is
	// found by a plain substring search (see recordOutput and checkLedger).
	token    = testworld.Token
	stranger = testworld.Stranger
	// strangerToken authenticates the stranger; also kept secret.
	strangerToken = testworld.StrangerToken
)

// secrets must appear in no output of any run and in no ledger file.
var secrets = []string{token, strangerToken, testworld.SecretPrefix}

// bin is the ghonce binary TestMain built.
var bin string

func TestMain(m *testing.M) {
	code := func() int {
		dir, err := os.MkdirTemp("", "ghonce-cmd-test-")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		root, err := harness.ModuleRoot()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if bin, err = harness.Build(ctx, root, dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		code := m.Run()
		if leaks := leakedOutputs(); len(leaks) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: a token appeared in the output of %d runs:\n  %s\n", len(leaks), strings.Join(leaks, "\n  "))
			return 1
		}
		return code
	}()
	os.Exit(code)
}

// outputs collects every run's stdout and stderr, for the secrets check.
var outputs struct {
	sync.Mutex
	all []recorded
}

type recorded struct {
	test, args, text string
}

// recordOutput keeps o's output and fails t at once if it contains a secret.
func recordOutput(t *testing.T, args []string, stdout, stderr string) {
	t.Helper()
	outputs.Lock()
	outputs.all = append(outputs.all, recorded{test: t.Name(), args: strings.Join(args, " "), text: stdout + "\n" + stderr})
	outputs.Unlock()
	for _, s := range secrets {
		if strings.Contains(stdout, s) || strings.Contains(stderr, s) {
			t.Errorf("ghonce %s: a token appears in its output:\nstdout: %s\nstderr: %s", strings.Join(args, " "), stdout, stderr)
		}
	}
}

func leakedOutputs() []string {
	outputs.Lock()
	defer outputs.Unlock()
	var out []string
	for _, r := range outputs.all {
		for _, s := range secrets {
			if strings.Contains(r.text, s) {
				out = append(out, r.test+": ghonce "+r.args)
				break
			}
		}
	}
	return out
}

// world is the shared test world (testworld) with a harness.Runner: runs
// go through it, so a world runs one ghonce at a time. Its fields name the
// shared world's parts as these tests use them.
type world struct {
	t      *testing.T
	tw     *testworld.World
	fake   *fixtures.Server
	runner *harness.Runner
	dir    string
	ledger string
	main   string // the initial head of main
	env    []string
	number int // the issue or PR a test comments on
}

func newWorld(t *testing.T) *world {
	t.Helper()
	return newWorldWith(t, fixtures.Options{})
}

// newWorldWith is newWorld with a fake made from opts.
func newWorldWith(t *testing.T, opts fixtures.Options) *world {
	t.Helper()
	tw := testworld.New(t, testworld.Fake(opts))
	w := &world{
		t: t, tw: tw, fake: tw.GitHub, runner: harness.NewRunner(tw.GitHub), dir: tw.Dir,
		ledger: tw.Ledger, main: tw.Main, env: tw.Env(),
	}
	t.Cleanup(func() { checkLedgerFiles(t, tw.Dir) })
	return w
}

// checkLedgerFiles fails t if any file under dir (the ledger, its WAL and
// shared-memory files) contains a secret.
func checkLedgerFiles(t *testing.T, dir string) {
	t.Helper()
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.Contains(filepath.Base(p), "ledger") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil
		}
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("ledger file %s contains a token", p)
			}
		}
		return nil
	})
}

// envWithout is w's environment without the variables named, plus extra.
func (w *world) envWithout(names []string, extra ...string) []string {
	var env []string
	for _, kv := range w.env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, k) {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// push stands in for the agent's git push: a new commit on main's head,
// on a new branch.
func (w *world) push(branch string) string { return w.tw.Push(branch) }

// withFlags adds flags to args, before a "--" if there is one.
func withFlags(args []string, flags ...string) []string {
	i := slices.Index(args, "--")
	if i < 0 {
		return slices.Concat(args, flags)
	}
	return slices.Concat(args[:i], flags, args[i:])
}

// exec runs ghonce with exactly args and w's environment plus extraEnv
// (later entries win), killing it when killOn matches a commit.
func (w *world) exec(killOn func(*fixtures.Commit) bool, extraEnv []string, args ...string) harness.Outcome {
	w.t.Helper()
	return w.execEnv(killOn, slices.Concat(w.env, extraEnv), args...)
}

// execEnv runs ghonce with exactly args and env.
func (w *world) execEnv(killOn func(*fixtures.Commit) bool, env []string, args ...string) harness.Outcome {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o, err := w.runner.Run(ctx, bin, args, env, killOn)
	recordOutput(w.t, args, o.Stdout, o.Stderr)
	if err != nil {
		w.t.Fatalf("ghonce %s: %v", strings.Join(args, " "), err)
	}
	return o
}

// run runs ghonce args with --ledger and --repo added.
func (w *world) run(args ...string) harness.Outcome {
	w.t.Helper()
	return w.exec(nil, nil, withFlags(args, "--ledger", w.ledger, "--repo", repo)...)
}

// crash runs ghonce args (with --ledger and --repo) and kills it right
// after the fake commits a write of kind k; it fails the test if no such
// write happened.
func (w *world) crash(k fixtures.CommitKind, args ...string) {
	w.t.Helper()
	// A label commit means labels added to the issue or PR (Number set),
	// not the repository label ghonce creates first.
	o := w.exec(func(c *fixtures.Commit) bool { return c.Kind == k && (k != fakegithub.KindLabel || c.Number != 0) }, nil, withFlags(args, "--ledger", w.ledger, "--repo", repo)...)
	if !o.Killed {
		w.t.Fatalf("ghonce %s: want it killed at a %s commit, but it ended with exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), k, o.Exit, o.Stdout, o.Stderr)
	}
}

// ok runs ghonce args --json (with --ledger and --repo), wants exit 0 and
// returns the one JSON object it printed.
func (w *world) ok(args ...string) result {
	w.t.Helper()
	o := w.run(withFlags(args, "--json")...)
	if o.Exit != 0 {
		w.t.Fatalf("ghonce %s: exit %d, want 0\nstdout: %s\nstderr: %s", strings.Join(args, " "), o.Exit, o.Stdout, o.Stderr)
	}
	var r result
	oneJSON(w.t, o.Stdout, &r)
	return r
}

// deleteLedger removes the ledger and its WAL and shared-memory files, as a
// lost disk or a fresh machine would.
func (w *world) deleteLedger() {
	w.t.Helper()
	if err := os.RemoveAll(filepath.Dir(w.ledger)); err != nil {
		w.t.Fatal(err)
	}
}

// counts returns a measure of the writes the fake has seen (every non-GET
// request it logged plus Writes, those that reached an endpoint: any write
// raises it) and the number of requests of any method.
func (w *world) counts() (writes, requests int) {
	reqs := w.fake.Requests()
	for _, r := range reqs {
		if r.Method != "GET" && r.Method != "HEAD" {
			writes++
		}
	}
	return writes + w.fake.Writes(), len(reqs)
}

// result is ghonce's --json output for an action. It spells out the field
// names on purpose, apart from outcome.Result: they are the CLI's contract
// with scripts, and a rename there must fail these tests.
type result struct {
	Key            string `json:"key"`
	Kind           string `json:"kind"`
	Task           string `json:"task"`
	Step           string `json:"step"`
	Repo           string `json:"repo"`
	Outcome        string `json:"outcome"`
	Number         int    `json:"number"`
	URL            string `json:"url"`
	ID             int64  `json:"id"`
	SHA            string `json:"sha"`
	Ref            string `json:"ref"`
	PayloadChanged bool   `json:"payload_changed"`
	Attempts       int    `json:"attempts"`
	Warning        string `json:"warning"`

	// Changed names the fields that differ when PayloadChanged.
	Changed []string `json:"changed"`
}

// oneJSON decodes stdout, which must hold exactly one JSON object and
// nothing else but whitespace, into v.
func oneJSON(t *testing.T, stdout string, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		t.Fatalf("stdout is not one JSON object: %v\nstdout: %q", err, stdout)
	}
	if len(raw) == 0 || raw[0] != '{' {
		t.Fatalf("stdout is not a JSON object: %q", stdout)
	}
	if rest, _ := io.ReadAll(dec.Buffered()); len(bytes.TrimSpace(rest)) > 0 || dec.More() {
		t.Fatalf("stdout holds more than one JSON object: %q", stdout)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
}

// entry is one row of `ghonce status --json`.
type entry struct {
	Key      string `json:"key"`
	Status   string `json:"status"`
	Kind     string `json:"kind"`
	Task     string `json:"task"`
	Step     string `json:"step"`
	Outcome  string `json:"outcome"`
	Number   int    `json:"number"`
	URL      string `json:"url"`
	SHA      string `json:"sha"`
	Ref      string `json:"ref"`
	Attempts int    `json:"attempts"`
	History  []struct {
		Owner string `json:"owner"`
		From  string `json:"from"`
		To    string `json:"to"`
		Why   string `json:"why"`
	} `json:"history"`
}

// status returns the ledger's entries by key, from `ghonce status --json`.
func (w *world) status(extra ...string) map[string]entry {
	w.t.Helper()
	o := w.exec(nil, nil, slices.Concat([]string{"status", "--json", "--ledger", w.ledger}, extra)...)
	if o.Exit != 0 {
		w.t.Fatalf("ghonce status: exit %d\nstderr: %s", o.Exit, o.Stderr)
	}
	var st struct {
		Entries []entry `json:"entries"`
	}
	oneJSON(w.t, o.Stdout, &st)
	out := map[string]entry{}
	for _, e := range st.Entries {
		out[e.Key] = e
	}
	return out
}

// key is the key ghonce derives, from `ghonce key`.
func (w *world) key(task, step, kind, target string) string {
	w.t.Helper()
	o := w.exec(nil, nil, "key", "--task", task, "--step", step, "--kind", kind, "--repo", repo, "--target", target)
	k := strings.TrimSpace(o.Stdout)
	if o.Exit != 0 || !taskkey.Valid(k) {
		w.t.Fatalf("ghonce key: exit %d, stdout %q, stderr %s", o.Exit, o.Stdout, o.Stderr)
	}
	return k
}

// ourComments returns the comments on number by login that carry key's marker.
func (w *world) ourComments(number int, key string) []fakegithub.Comment {
	var out []fakegithub.Comment
	for _, c := range w.fake.Comments(owner, name, number) {
		if c.Author == login && taskkey.HasMarker(c.Body, key) {
			out = append(out, c)
		}
	}
	return out
}

func wantExit(t *testing.T, o harness.Outcome, code int, what string) {
	t.Helper()
	if o.Exit != code {
		t.Fatalf("%s: exit %d, want %d\nstdout: %s\nstderr: %s", what, o.Exit, code, o.Stdout, o.Stderr)
	}
}
