package main_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/fakegithub"
	"github.com/ghonce/ghonce/taskkey"
	"github.com/ghonce/ghonce/tests/harness"
)

// ghWorld is a world with ghonce installed as gh (`ghonce shim DIR`) in
// front of a stub gh that records what it is given, and a git checkout of
// the repository on branch fix-42 whose origin is github.com's.
type ghWorld struct {
	*world
	shim, stub, log, checkout string
}

// stubGh records its argv (NUL-separated, $0 first), standard input and
// $GH_PROBE, prints a line on each stream and exits 7. Asked for
// `gh auth token --hostname github.com` it prints $GH_STUB_TOKEN, as a
// logged-in gh prints its stored token, and notes that it was asked.
const stubGh = `#!/bin/sh
if [ "$*" = "auth token --hostname github.com" ] && [ -n "$GH_STUB_TOKEN" ]; then
	touch "$GH_STUB_LOG.auth"
	echo "$GH_STUB_TOKEN"
	exit 0
fi
printf '%s\0' "$0" "$@" > "$GH_STUB_LOG.argv"
cat > "$GH_STUB_LOG.stdin"
printf '%s' "$GH_PROBE" > "$GH_STUB_LOG.env"
echo "stub out"
echo "stub err" >&2
exit 7
`

func newGhWorld(t *testing.T) *ghWorld {
	t.Helper()
	w := &ghWorld{world: newWorld(t)}
	w.push("fix-42")
	w.shim = filepath.Join(w.dir, "shim")
	o := w.exec(nil, nil, "shim", w.shim)
	wantExit(t, o, 0, "ghonce shim")
	if want := "export PATH=" + w.shim + ":\"$PATH\"\n"; o.Stdout != want {
		t.Fatalf("ghonce shim printed %q, want %q", o.Stdout, want)
	}
	w.stub = filepath.Join(w.dir, "stub")
	if err := os.MkdirAll(w.stub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.stub, "gh"), []byte(stubGh), 0o755); err != nil {
		t.Fatal(err)
	}
	w.log = filepath.Join(w.dir, "stub-log")
	w.checkout = filepath.Join(w.dir, "checkout")
	for _, args := range [][]string{
		{"init", "-q", "-b", "fix-42", w.checkout},
		{"-C", w.checkout, "remote", "add", "origin", "https://github.com/" + repo + ".git"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return w
}

// ghEnv is the agent's environment: the shim first on PATH, the stub
// after it, a task, the checkout (by GIT_DIR: the harness runs in the test's
// directory), no settle window (GHONCE_SETTLE=0: the fake commits a create
// before its kill, so a rerun needs not wait for one in flight), and
// extra.
func (w *ghWorld) ghEnv(extra ...string) []string {
	path := w.shim + ":" + w.stub + ":" + os.Getenv("PATH")
	return slices.Concat(w.env, []string{
		"PATH=" + path, "GHONCE_TASK=ISSUE-42", "GHONCE_LEDGER=" + w.ledger,
		"GIT_DIR=" + filepath.Join(w.checkout, ".git"), "GIT_CONFIG_NOSYSTEM=1",
		"GH_STUB_LOG=" + w.log, "GHONCE_SETTLE=0",
	}, extra)
}

// gh runs the shim as the agent would, `gh args...`.
func (w *ghWorld) gh(killOn func(*fixtures.Commit) bool, env []string, args ...string) harness.Outcome {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o, err := w.runner.Run(ctx, filepath.Join(w.shim, "gh"), args, env, killOn)
	recordOutput(w.t, append([]string{"gh"}, args...), o.Stdout, o.Stderr)
	if err != nil {
		w.t.Fatalf("gh %s: %v", strings.Join(args, " "), err)
	}
	return o
}

// The evidence of issue 20 for the shim: each guarded gh command, killed
// right after GitHub committed it, rerun with reworded text, leaves one
// artifact, and the rerun prints its URL on stdout as gh does (the URL and
// a newline, nothing else); the key is the CLI's for the same task.
func TestGhShimKilledAfterCommitRerunMakesOne(t *testing.T) {
	for _, tc := range []struct {
		name        string
		kill        fixtures.CommitKind
		first, then func(w *ghWorld) []string
		step, kind  string
		target      func(w *ghWorld) string
		urls        func(w *ghWorld) []string // our artifacts' URLs on the fake
	}{
		{
			name: "pr create", kill: fakegithub.KindPull, step: "pr-create", kind: "pr",
			first: func(*ghWorld) []string {
				return []string{"pr", "create", "--title", "Fix #42", "--body", "Generated fix."}
			},
			then: func(*ghWorld) []string {
				return []string{"pr", "create", "-t", "Fix #42, again", "-b", "Reworded after the crash."}
			},
			target: func(*ghWorld) string { return "main" },
			urls: func(w *ghWorld) []string {
				var out []string
				for _, p := range w.fake.PullRequests(owner, name) {
					if p.Author == login {
						out = append(out, w.fake.WebURL()+repo+"/pull/"+strconv.Itoa(p.Number))
					}
				}
				return out
			},
		},
		{
			name: "issue create", kill: fakegithub.KindIssue, step: "issue-create", kind: "issue",
			first: func(*ghWorld) []string {
				return []string{"issue", "create", "--title", "Flaky test", "--body", "Seen twice."}
			},
			then:   func(*ghWorld) []string { return []string{"issue", "create", "-t", "Flaky test (retry)", "-F", "-"} },
			target: func(*ghWorld) string { return "" },
			urls: func(w *ghWorld) []string {
				var out []string
				for _, is := range w.fake.Issues(owner, name) {
					if is.Author == login {
						out = append(out, w.fake.WebURL()+repo+"/issues/"+strconv.Itoa(is.Number))
					}
				}
				return out
			},
		},
		{
			name: "issue comment", kill: fakegithub.KindComment, step: "issue-comment", kind: "comment",
			first: func(w *ghWorld) []string {
				w.number = w.fake.SeedIssue(owner, name, stranger, fixtures.SeedIssue{Title: "It crashes"})
				return []string{"issue", "comment", strconv.Itoa(w.number), "--body", "Opened a fix."}
			},
			then: func(w *ghWorld) []string {
				return []string{"issue", "comment", w.fake.WebURL() + repo + "/issues/" + strconv.Itoa(w.number), "-b", "I opened a fix (retry)."}
			},
			target: func(w *ghWorld) string { return strconv.Itoa(w.number) },
			urls: func(w *ghWorld) []string {
				var out []string
				for _, c := range w.fake.Comments(owner, name, w.number) {
					if c.Author == login {
						out = append(out, w.fake.WebURL()+repo+"/issues/"+strconv.Itoa(w.number)+"#issuecomment-"+strconv.FormatInt(c.ID, 10))
					}
				}
				return out
			},
		},
		{
			// No number: the open pull request of the current branch, as gh.
			name: "pr comment", kill: fakegithub.KindComment, step: "issue-comment", kind: "comment",
			first: func(w *ghWorld) []string {
				w.number = w.fake.SeedPR(owner, name, login, fixtures.SeedPR{Title: "Fix #42", Head: "fix-42"})
				return []string{"pr", "comment", "--body", "CI is green."}
			},
			then:   func(w *ghWorld) []string { return []string{"pr", "comment", "-b", "CI is green (rerun)."} },
			target: func(w *ghWorld) string { return strconv.Itoa(w.number) },
			urls: func(w *ghWorld) []string {
				var out []string
				for _, c := range w.fake.Comments(owner, name, w.number) {
					if c.Author == login {
						out = append(out, w.fake.WebURL()+repo+"/pull/"+strconv.Itoa(w.number)+"#issuecomment-"+strconv.FormatInt(c.ID, 10))
					}
				}
				return out
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newGhWorld(t)
			o := w.gh(func(c *fixtures.Commit) bool { return c.Kind == tc.kill }, w.ghEnv(), tc.first(w)...)
			if !o.Killed {
				t.Fatalf("gh %s: want it killed at the %s commit, got exit %d\nstdout: %s\nstderr: %s", tc.name, tc.kill, o.Exit, o.Stdout, o.Stderr)
			}
			args := tc.then(w)
			env := w.ghEnv()
			var o2 harness.Outcome
			if slices.Contains(args, "-") {
				o2 = w.ghStdin(env, "Reworded, from standard input.\n", args...)
			} else {
				o2 = w.gh(nil, env, args...)
			}
			wantExit(t, o2, 0, "rerun gh "+strings.Join(args, " "))
			urls := tc.urls(w)
			if len(urls) != 1 {
				t.Fatalf("GitHub holds %d of ours after the rerun, want 1: %v", len(urls), urls)
			}
			if o2.Stdout != urls[0]+"\n" {
				t.Fatalf("rerun stdout %q, want the URL as gh prints it, %q", o2.Stdout, urls[0]+"\n")
			}
			if !strings.Contains(o2.Stderr, "found") {
				t.Fatalf("rerun stderr does not say it found the first one:\n%s", o2.Stderr)
			}
			key := w.key("ISSUE-42", tc.step, tc.kind, tc.target(w))
			if e, ok := w.status()[key]; !ok || e.Status != "done" {
				t.Fatalf("the ledger has no done entry under the CLI's key %s: %+v", key, w.status())
			}
			if _, err := os.Stat(w.log + ".argv"); err == nil {
				t.Fatal("the real gh was run for a guarded command")
			}
		})
	}
}

// ghStdin is gh with stdin.
func (w *ghWorld) ghStdin(env []string, stdin string, args ...string) harness.Outcome {
	w.t.Helper()
	cmd := exec.Command(filepath.Join(w.shim, "gh"), args...)
	cmd.Env = env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	o := harness.Outcome{Stdout: out.String(), Stderr: errb.String(), Exit: cmd.ProcessState.ExitCode()}
	recordOutput(w.t, append([]string{"gh"}, args...), o.Stdout, o.Stderr)
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		w.t.Fatal(err)
	}
	return o
}

// Every command line the shim does not guard reaches the next gh on PATH
// verbatim: its arguments, standard input, environment, streams and exit
// code.
func TestGhShimHandsEverythingElseToTheRealGh(t *testing.T) {
	w := newGhWorld(t)
	for _, args := range [][]string{
		{"pr", "list", "--state", "all"},
		{"api", "repos/octo-org/hello-world/pulls", "-X", "POST", "-f", "title=with spaces and 'quotes'"},
		{"auth", "status"},
		{"--version"},
		{},
		{"pr", "create", "--help"},
		{"pr", "create", "--web"},
		{"issue", "comment", "1", "--edit-last", "-b", "x"},
		{"issue", "list", "--search", "ünïcödé \"x\""},
		{"repo", "clone", "--", "pr", "create"},
	} {
		os.Remove(w.log + ".argv")
		o := w.ghStdin(w.ghEnv("GH_PROBE=probe value"), "stdin for gh\n", args...)
		if o.Exit != 7 || o.Stdout != "stub out\n" || o.Stderr != "stub err\n" {
			t.Fatalf("gh %q: exit %d stdout %q stderr %q, want the stub's 7, \"stub out\", \"stub err\"", args, o.Exit, o.Stdout, o.Stderr)
		}
		b, err := os.ReadFile(w.log + ".argv")
		if err != nil {
			t.Fatalf("gh %q: the stub was not run: %v", args, err)
		}
		got := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
		if !slices.Equal(got[1:], args) && !(len(args) == 0 && len(got) == 1) {
			t.Fatalf("the stub got argv %q, want %q", got[1:], args)
		}
		for file, want := range map[string]string{".stdin": "stdin for gh\n", ".env": "probe value"} {
			if b, _ := os.ReadFile(w.log + file); string(b) != want {
				t.Fatalf("gh %q: the stub's %s is %q, want %q", args, file, b, want)
			}
		}
	}
	// Found through PATH by a shell (argv[0] is then plain "gh"), the shim
	// still hands over to the gh after its own directory.
	os.Remove(w.log + ".argv")
	o := w.sh("gh pr list --limit 1", w.ghEnv())
	if b, err := os.ReadFile(w.log + ".argv"); o.Exit != 7 || err != nil || !strings.HasSuffix(string(b), "\x00pr\x00list\x00--limit\x001\x00") {
		t.Fatalf("gh via PATH: exit %d, stub argv %q (%v)\n%s", o.Exit, b, err, o.Stderr)
	}
	// GHONCE_GH naming the shim itself would loop: refused.
	o = w.ghStdin(w.ghEnv("GHONCE_GH="+filepath.Join(w.shim, "gh")), "", "pr", "list")
	if o.Exit != 1 || !strings.Contains(o.Stderr, "ghonce itself") {
		t.Fatalf("GHONCE_GH=the shim: exit %d, stderr %q", o.Exit, o.Stderr)
	}
	if writes, _ := w.counts(); writes != 0 {
		t.Fatalf("GitHub saw %d writes; the stub should have had every command", writes)
	}
}

// The shim's refusals: each says what to do, exits as gh would, creates
// nothing and runs no real gh.
func TestGhShimRefusals(t *testing.T) {
	w := newGhWorld(t)
	// Nothing but the shim on PATH: no gh after it (one may be installed
	// on this machine).
	noStub := slices.Concat(w.envWithout([]string{"PATH"}), []string{"PATH=" + w.shim, "GIT_DIR=" + filepath.Join(w.checkout, ".git")})
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		exit int
		says string
	}{
		{"no task", w.envWithout([]string{"GHONCE_TASK"}, "PATH="+w.shim+":"+w.stub+":"+os.Getenv("PATH"), "GIT_DIR="+filepath.Join(w.checkout, ".git"), "GH_STUB_LOG="+w.log, "GHONCE_LEDGER="+w.ledger),
			[]string{"pr", "create", "-t", "x", "-b", "y"}, 1, "GHONCE_TASK"},
		{"editor", w.ghEnv(), []string{"pr", "create", "-e"}, 1, "-e/--editor"},
		{"project", w.ghEnv(), []string{"pr", "create", "-t", "x", "-b", "y", "-p", "Roadmap"}, 1, "--add-project"},
		{"bad GHONCE_SETTLE", w.ghEnv("GHONCE_SETTLE=15"), []string{"pr", "create", "-t", "x", "-b", "y"}, 1, "GHONCE_SETTLE"},
		{"no token", slices.Concat(w.ghEnv(), []string{"GH_TOKEN=", "GHONCE_GH=/nonexistent/gh"}), []string{"issue", "create", "-t", "x", "-b", "y"}, 4, "GH_TOKEN"},
		{"no token, ghonce codes", slices.Concat(w.ghEnv(), []string{"GH_TOKEN=", "GHONCE_GH=/nonexistent/gh", "GHONCE_EXIT_CODES=ghonce"}), []string{"issue", "create", "-t", "x", "-b", "y"}, 2, "GH_TOKEN"},
		{"no real gh", noStub, []string{"pr", "list"}, 1, "no real gh was found"},
		{"comment without a number", w.ghEnv(), []string{"pr", "comment", "-b", "x"}, 1, "number or URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(w.log + ".argv")
			o := w.ghStdin(tc.env, "", tc.args...)
			if o.Exit != tc.exit || !strings.Contains(o.Stderr, tc.says) || o.Stdout != "" {
				t.Fatalf("gh %q: exit %d (want %d), stdout %q, stderr %q (want it to mention %q)", tc.args, o.Exit, tc.exit, o.Stdout, o.Stderr, tc.says)
			}
			if _, err := os.Stat(w.log + ".argv"); err == nil {
				t.Fatal("the real gh was run")
			}
		})
	}
	if writes, _ := w.counts(); writes != 0 {
		t.Fatalf("GitHub saw %d writes", writes)
	}
}

// With no token in the environment the shim asks the real gh, as gh's own
// login would: `gh auth token`.
func TestGhShimTakesTheRealGhsToken(t *testing.T) {
	w := newGhWorld(t)
	o := w.ghStdin(w.ghEnv("GH_TOKEN=", "GH_STUB_TOKEN="+token), "", "issue", "create", "-t", "Flaky test", "-b", "Seen twice.")
	wantExit(t, o, 0, "gh issue create with gh's stored token")
	if _, err := os.Stat(w.log + ".auth"); err != nil {
		t.Fatal("the real gh was not asked for its token")
	}
	n := 0
	for _, is := range w.fake.Issues(owner, name) {
		if is.Author == login {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("GitHub holds %d issues by %s, want 1", n, login)
	}
	if !strings.HasPrefix(o.Stdout, w.fake.WebURL()+repo+"/issues/") {
		t.Fatalf("stdout %q, want the issue's URL", o.Stdout)
	}
}

// An agent that mixes the shim and ghonce's own verb for the same task
// opens one pull request: they share the key.
func TestGhShimAndCLIShareTheKey(t *testing.T) {
	w := newGhWorld(t)
	o := w.gh(nil, w.ghEnv(), "pr", "create", "-t", "Fix #42", "-b", "Generated fix.")
	wantExit(t, o, 0, "gh pr create")
	r := w.ok("pr", "create", "--task", "ISSUE-42", "--base", "main", "--head", "fix-42", "--title", "Fix #42", "--body", "Another body.")
	if r.Outcome != "skipped" || r.URL+"\n" != o.Stdout {
		t.Fatalf("ghonce pr create after gh pr create: outcome %q url %q; want skipped and the shim's %q", r.Outcome, r.URL, o.Stdout)
	}
}

// gh's own aliases of create (`issue new`, `pr new`), flags before the
// verb and aliases of the user's own (`gh alias set`) are the same command
// to gh, so the shim guards them: run in every spelling, one issue and one pull request, and the reruns print
// their URLs.
func TestGhShimGuardsGhsAliases(t *testing.T) {
	w := newGhWorld(t)
	// An alias of the user's own, in gh's config (as `gh alias set` writes it).
	cfg := filepath.Join(w.dir, "gh-aliases")
	if err := os.MkdirAll(cfg, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cfg, "config.yml"), []byte("aliases:\n    ic: issue create\n    npr: pr new --title \"$1\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kind  string
		forms [][]string
	}{
		{"issue", [][]string{
			{"issue", "new", "-t", "Flaky test", "-b", "Seen twice."},
			{"issue", "-R", repo, "new", "-t", "Flaky test", "-b", "Seen twice."},
			{"issue", "create", "-t", "Flaky test", "-b", "Seen twice."},
			{"ic", "-t", "Flaky test", "-b", "Seen twice."},
		}},
		{"pull", [][]string{
			{"pr", "new", "-t", "Fix #42", "-b", "Generated fix."},
			{"--repo", repo, "pr", "new", "-t", "Fix #42", "-b", "Generated fix."},
			{"pr", "create", "-t", "Fix #42", "-b", "Generated fix."},
			{"npr", "Fix #42", "-b", "Generated fix."},
		}},
	} {
		var first string
		for _, args := range tc.forms {
			o := w.gh(nil, w.ghEnv("GH_CONFIG_DIR="+cfg), args...)
			wantExit(t, o, 0, "gh "+strings.Join(args, " "))
			if first == "" {
				first = o.Stdout
			}
			if o.Stdout != first || !strings.Contains(o.Stdout, "/"+tc.kind) {
				t.Fatalf("gh %q printed %q, want the first run's %s %q", args, o.Stdout, tc.kind, first)
			}
		}
	}
	if is, prs := w.fake.Issues(owner, name), w.fake.PullRequests(owner, name); len(is) != 1 || len(prs) != 1 {
		t.Fatalf("GitHub holds %d issues and %d pull requests, want one of each", len(is), len(prs))
	}
}

// gh pr create -a -r -m, killed at the create's commit, at its labels'
// (which go out beside the edits, once the create is answered) or between
// the edits, and rerun with the ledger kept or lost: one pull request,
// labelled, with its assignee, reviewer and milestone each sent once, and
// the rerun prints its URL.
func TestGhShimKilledBeforeTheEditsRerunFinishesThem(t *testing.T) {
	type killCase struct {
		name string
		kill func(c *fixtures.Commit) bool
		lose bool
	}
	var cases []killCase
	for _, tc := range []killCase{
		{name: "at the create", kill: func(c *fixtures.Commit) bool {
			return c.Kind == fakegithub.KindPull && c.Method == "POST" && strings.HasSuffix(c.Path, "/pulls")
		}},
		{name: "at the assignee", kill: func(c *fixtures.Commit) bool { return strings.HasSuffix(c.Path, "/assignees") }},
		{name: "at the review request", kill: func(c *fixtures.Commit) bool { return strings.HasSuffix(c.Path, "/requested_reviewers") }},
		{name: "at the labels", kill: func(c *fixtures.Commit) bool { return c.Kind == fakegithub.KindLabel && c.Number != 0 }},
	} {
		cases = append(cases, tc)
		tc.lose, tc.name = true, tc.name+" with the ledger lost"
		cases = append(cases, tc)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newGhWorld(t)
			w.fake.AddCollaborator(owner, name, "monalisa")
			w.fake.AddCollaborator(owner, name, "hubot")
			w.fake.SeedMilestone(owner, name, "v1", "open")
			args := []string{"pr", "create", "-t", "Fix #42", "-b", "Generated fix.", "-a", "monalisa", "-r", "hubot", "-m", "v1"}
			if o := w.gh(tc.kill, w.ghEnv(), args...); !o.Killed {
				t.Fatalf("want it killed %s, got exit %d\nstdout: %s\nstderr: %s", tc.name, o.Exit, o.Stdout, o.Stderr)
			}
			if tc.lose {
				w.deleteLedger()
			}
			o := w.gh(nil, w.ghEnv(), args...)
			wantExit(t, o, 0, "rerun gh "+strings.Join(args, " "))
			var ours []fakegithub.PR
			for _, p := range w.fake.PullRequests(owner, name) {
				if p.Author == login {
					ours = append(ours, p)
				}
			}
			if len(ours) != 1 {
				t.Fatalf("GitHub holds %d pull requests of ours, want 1", len(ours))
			}
			p := ours[0]
			if url := w.fake.WebURL() + repo + "/pull/" + strconv.Itoa(p.Number) + "\n"; o.Stdout != url {
				t.Fatalf("rerun stdout %q, want %q", o.Stdout, url)
			}
			if !slices.Contains(p.Labels, taskkey.Label(w.key("ISSUE-42", "pr-create", "pr", "main"))) {
				t.Fatalf("labels %q, want the key's", p.Labels)
			}
			if !slices.Equal(p.Assignees, []string{"monalisa"}) || !slices.Equal(p.Reviewers, []string{"hubot"}) || p.Milestone != "v1" {
				t.Fatalf("assignees %q, review requests %q, milestone %q; want monalisa, hubot, v1", p.Assignees, p.Reviewers, p.Milestone)
			}
			w.fake.WaitIdle()
			sent := map[string]int{}
			for _, q := range w.fake.Requests() {
				switch {
				case q.Method == "POST" && strings.HasSuffix(q.Path, "/assignees"):
					sent["assignees"]++
				case q.Method == "POST" && strings.HasSuffix(q.Path, "/requested_reviewers"):
					sent["reviewers"]++
				case q.Method == "PATCH" && q.Path == "/repos/"+repo+"/issues/"+strconv.Itoa(p.Number):
					sent["milestone"]++
				}
			}
			if sent["assignees"] != 1 || sent["reviewers"] != 1 || sent["milestone"] != 1 {
				t.Fatalf("sent %v; want each edit once across both runs", sent)
			}
		})
	}
}
