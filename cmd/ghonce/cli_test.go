package main_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/fakegithub"
	"github.com/ghonce/ghonce/tests/harness"
)

// Without --json: the URL (or SHA) alone on stdout, the status on stderr.
// With --json, a guarded command's own output goes to stderr so that
// stdout stays one JSON object.
func TestPlainAndJSONOutput(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.push("fix-42")
	o := w.run("pr", "create", "--task", "ISSUE-42", "--base", "main", "--head", "fix-42", "--title", "Fix", "--body", "b")
	wantExit(t, o, 0, "pr create")
	prs := w.ourPRs()
	if len(prs) != 1 {
		t.Fatalf("%d PRs, want 1", len(prs))
	}
	url := w.fake.WebURL() + repo + "/pull/" + strconv.Itoa(prs[0].Number)
	if o.Stdout != url+"\n" {
		t.Errorf("stdout %q, want the PR's URL %q alone", o.Stdout, url+"\n")
	}
	if !strings.Contains(o.Stderr, "created pr #"+strconv.Itoa(prs[0].Number)) {
		t.Errorf("stderr %q does not report the creation", o.Stderr)
	}
	o = w.run("pr", "create", "--task", "ISSUE-42", "--base", "main", "--head", "fix-42", "--title", "Fix", "--body", "b")
	if o.Exit != 0 || o.Stdout != url+"\n" || !strings.Contains(o.Stderr, "skipped") {
		t.Errorf("rerun: exit %d, stdout %q, stderr %q; want 0, the URL, skipped", o.Exit, o.Stdout, o.Stderr)
	}
	o = w.run("branch", "create", "release", "--task", "ISSUE-42", "--sha", w.main)
	if want := w.fake.WebURL() + repo + "/tree/release\n"; o.Exit != 0 || o.Stdout != want {
		t.Errorf("branch create: exit %d, stdout %q; want the branch's URL %q alone", o.Exit, o.Stdout, want)
	}

	if st := w.exec(nil, nil, "status", "--ledger", w.ledger); st.Exit != 0 {
		t.Fatal(st.Stderr)
	}
	o = w.run("exec", "--task", "ISSUE-42", "--step", "say", "--json", "--", "/bin/sh", "-c", "echo hello from the command; echo oops >&2")
	wantExit(t, o, 0, "exec --json")
	var r result
	oneJSON(t, o.Stdout, &r)
	if r.Outcome != "created" || !strings.Contains(o.Stderr, "hello from the command") {
		t.Errorf("exec --json: %+v, stderr %q; want created, the command's output on stderr", r, o.Stderr)
	}
}

// Bad flags and input are exit 2, before anything is recorded or asked.
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, args := range [][]string{
		{"pr", "create", "--task", "T", "--bogus"},
		{"nosuchverb"},
		{"issue", "comment", "abc", "--task", "T", "--body", "b"},
		{"pr", "create", "--task", "T", "--base", "main", "--title", "x", "--body", "b"}, // no --head
		{"branch", "create", "x", "--task", "T", "--sha", w.main, "--from", "main"},      // both --sha and --from
		{"branch", "create", "bad..name", "--task", "T", "--sha", w.main},
		{"status", "--state", "sideways"},
	} {
		o := w.run(args...)
		wantExit(t, o, 2, "ghonce "+strings.Join(args, " "))
		if o.Stdout != "" {
			t.Errorf("ghonce %s: stdout %q, want nothing", strings.Join(args, " "), o.Stdout)
		}
	}
	if _, reqs := w.counts(); reqs != 0 {
		t.Errorf("usage errors sent %d requests", reqs)
	}
	if _, err := os.Stat(w.ledger); !os.IsNotExist(err) {
		t.Errorf("usage errors created the ledger (%v)", err)
	}
}

// `ghonce --help` lists the exit codes.
func TestHelpListsExitCodes(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	o := w.exec(nil, nil, "--help")
	wantExit(t, o, 0, "ghonce --help")
	for _, want := range []string{
		"0  success", "1  error", "2  usage", "3  needs a rerun or a person", "4  in progress elsewhere", "5  stale",
	} {
		if !strings.Contains(o.Stdout, want) {
			t.Errorf("--help does not list exit code %q:\n%s", want, o.Stdout)
		}
	}
}

// `ghonce demo` needs no token and no ledger: the naive agent ends with
// three PRs, ghonce with one, and the audit closes the naive agent's two
// duplicates.
func TestDemo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "demo")
	cmd.Env = append(harness.CleanEnv(), "HOME="+dir, "XDG_STATE_HOME="+dir)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	recordOutput(t, cmd.Args[1:], stdout.String(), stderr.String())
	if err != nil {
		t.Fatalf("ghonce demo: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	if !regexp.MustCompile(`(?m)^Without ghonce: .*\b3 pull requests\b`).MatchString(out) {
		t.Errorf("demo does not say the naive agent made 3 PRs:\n%s", out)
	}
	if !regexp.MustCompile(`(?m)^With ghonce: .*\b1 pull request:`).MatchString(out) {
		t.Errorf("demo does not say ghonce made 1 PR:\n%s", out)
	}
	// The restarted run finds the first run's PR and says so (exit 0), and
	// the agent, answered, stops there.
	if !regexp.MustCompile(`(?m)^    run 2: exit 0: .*"outcome":"found"`).MatchString(out) || strings.Contains(out, "    run 3:") ||
		!regexp.MustCompile(`(?m)^With ghonce: 2 runs`).MatchString(out) {
		t.Errorf("demo's restarted run does not find the first PR, or a run follows it:\n%s", out)
	}
	// The audit at its end finds the naive agent's two duplicates and
	// --apply closes them; the first PR stays open.
	if !regexp.MustCompile(`(?m)^ +pr +exact +#1 +#2 .*would comment linking #1, close as a duplicate$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^  #2 .*closed$`).MatchString(out) || !regexp.MustCompile(`(?m)^  #3 .*closed$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^  #1 .*open$`).MatchString(out) {
		t.Errorf("demo's audit does not find and close the duplicate PRs:\n%s", out)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("demo wrote into HOME/XDG_STATE_HOME: %v", entries)
	}
}

// blockFirstPR makes the fake hold its answer to the first PR create until
// release is closed; committed is closed when it is stored.
func blockFirstPR(fake *fixtures.Server) (committed, release chan struct{}) {
	committed, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	fake.OnCommit(func(c *fixtures.Commit) {
		if c.Kind != fakegithub.KindPull {
			return
		}
		once.Do(func() {
			close(committed)
			<-release
		})
	})
	return committed, release
}

// started is a ghonce process running in the background.
type started struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	done           chan error
	lines          chan string // stderr, line by line (closed at EOF)
}

func start(t *testing.T, ctx context.Context, env []string, args ...string) *started {
	t.Helper()
	p := &started{cmd: exec.CommandContext(ctx, bin, args...), done: make(chan error, 1), lines: make(chan string, 100)}
	p.cmd.Env = env
	p.cmd.Stdout = &p.stdout
	pipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			p.stderr.WriteString(sc.Text() + "\n")
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
		_, _ = io.Copy(io.Discard, pipe)
		close(p.lines)
		p.done <- p.cmd.Wait()
	}()
	return p
}

// wait waits for the process and returns its exit code.
func (p *started) wait(t *testing.T) int {
	t.Helper()
	<-p.done
	recordOutput(t, p.cmd.Args[1:], p.stdout.String(), p.stderr.String())
	return p.cmd.ProcessState.ExitCode()
}

// Two processes race on one key with one ledger: the first is stopped by
// the fake right after GitHub stored its PR; the second starts, finds the
// key held by a live process and waits (--wait); released, the first
// records created and the second reports skipped, both exit 0, one PR.
// With --wait 0 the second gives up at once: exit 4.
func TestRacingProcessesOneCreates(t *testing.T) {
	for _, wait := range []string{"30s", "0"} {
		wait := wait
		t.Run("wait="+wait, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.push("fix-42")
			committed, release := blockFirstPR(w.fake)
			var releaseOnce sync.Once
			unblock := func() { releaseOnce.Do(func() { close(release) }) }
			t.Cleanup(unblock)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			args := []string{"pr", "create", "--task", "ISSUE-42", "--base", "main", "--head", "fix-42", "--title", "Fix", "--body", "b",
				"--json", "--ledger", w.ledger, "--repo", repo, "--wait", "30s"}

			first := start(t, ctx, w.env, args...)
			select {
			case <-committed:
			case err := <-first.done:
				t.Fatalf("the first process ended (%v) before GitHub stored its PR:\n%s", err, first.stderr.String())
			case <-ctx.Done():
				t.Fatal("the first process never created its PR")
			}

			second := start(t, ctx, w.env, append(args[:len(args)-1:len(args)-1], wait)...)
			if wait == "0" {
				code := second.wait(t)
				unblock()
				if code != 4 || !strings.Contains(second.stderr.String(), "in progress") || strings.Contains(second.stderr.String(), "waiting") {
					t.Fatalf("second process with --wait 0: exit %d, want 4 (in progress) without waiting\nstderr: %s", code, second.stderr.String())
				}
				if c := first.wait(t); c != 0 {
					t.Fatalf("first process: exit %d\nstderr: %s", c, first.stderr.String())
				}
				return
			}
			// The second says it waits for the first; only then is the
			// first let go.
			for line := range second.lines {
				if strings.Contains(line, "waiting") {
					break
				}
			}
			unblock()
			if c := first.wait(t); c != 0 {
				t.Fatalf("first process: exit %d\nstderr: %s", c, first.stderr.String())
			}
			if c := second.wait(t); c != 0 {
				t.Fatalf("second process: exit %d\nstderr: %s", c, second.stderr.String())
			}
			if !strings.Contains(second.stderr.String(), "waiting") {
				t.Fatalf("the second process never said it was waiting for the first:\n%s", second.stderr.String())
			}
			var r1, r2 result
			oneJSON(t, first.stdout.String(), &r1)
			oneJSON(t, second.stdout.String(), &r2)
			if r1.Outcome != "created" || (r2.Outcome != "skipped" && r2.Outcome != "found") || r1.Number != r2.Number || r1.Key != r2.Key {
				t.Fatalf("first %+v, second %+v: want created, then skipped or found of the same PR", r1, r2)
			}
			if n := len(w.fake.PullRequests(owner, name)); n != 1 {
				t.Fatalf("%d PRs, want 1", n)
			}
		})
	}
}

// No token in any output (every run of this package is checked as it ends,
// and again in TestMain) and none in the ledger (checked when each world
// ends): here the runs that are most likely to echo one.
func TestNoSecretsInOutputsOrLedger(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.push("fix-42")
	const unknownToken = "ghp_GHONCEtestSECRET_unknown_99b3"
	for _, tc := range []struct {
		name string
		env  func(*world) []string
	}{
		{"a token GitHub rejects", func(*world) []string { return []string{"GH_TOKEN=" + unknownToken} }},
		{"a token with a stray newline", func(*world) []string { return []string{"GH_TOKEN=" + token + "\n"} }},
		{"a token with a space", func(*world) []string { return []string{"GH_TOKEN=" + token + " x"} }},
		{"credentials in the API URL", func(w *world) []string {
			return []string{"GITHUB_API_URL=" + strings.Replace(w.fake.URL(), "http://", "http://x:"+token+"@", 1)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each row in a world of its own: nothing a failed run leaves
			// behind reaches the next row or the runs below.
			w := newWorld(t)
			w.push("fix-42")
			o := w.exec(nil, tc.env(w), "pr", "create", "--task", "T-SECRET", "--base", "main", "--head", "fix-42", "--title", "Fix", "--body", "b", "--ledger", w.ledger, "--repo", repo)
			if o.Exit == 0 {
				t.Errorf("%s: exit 0, want a failure", tc.name)
			}
			if o.Stderr == "" {
				t.Errorf("%s: no message on stderr", tc.name)
			}
		})
	}
	// And runs that succeed, fail on GitHub's side, and settle.
	const body = "distinctive-body-7c41 in the ledger"
	w.fake.Inject(fixtures.Fault{Match: fixtures.MatchMethodPath("POST", "/repos/"+repo+"/pulls"), Kind: fixtures.Status504AfterCommit})
	wantExit(t, w.run("pr", "create", "--task", "T-SECRET", "--base", "main", "--head", "fix-42", "--title", "Fix", "--body", body), 3, "pr create answered 504")
	if r := w.ok("pr", "create", "--task", "T-SECRET", "--base", "main", "--head", "fix-42", "--title", "Fix", "--body", body); r.Outcome != "found" {
		t.Fatalf("rerun after a 504: %+v, want found", r)
	}
	wantExit(t, w.exec(nil, nil, "status", "--ledger", w.ledger), 0, "status")
	wantExit(t, w.exec(nil, nil, "reconcile", "--ledger", w.ledger), 0, "reconcile")
	// The ledger scan is not vacuous: it sees what was written.
	found := false
	_ = filepath.WalkDir(w.dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(filepath.Base(p), "ledger") {
			b, _ := os.ReadFile(p)
			found = found || bytes.Contains(b, []byte(body))
		}
		return nil
	})
	if !found {
		t.Fatal("the ledger files do not hold the PR's body: the secrets scan reads the wrong files")
	}
}
