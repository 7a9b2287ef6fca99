package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/cli/cmdutil"
)

// `ghonce shim DIR` links DIR/gh to this binary and prints the PATH line;
// run again it changes nothing; a gh there that is not its link is left
// alone, with a usage error.
func TestShimVerb(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "ghonce")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(target string) (int, string, string) {
		var out, errb bytes.Buffer
		sys := IO{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }, Executable: func() (string, error) { return exe, nil }}
		return Main(context.Background(), []string{"shim", target}, sys), out.String(), errb.String()
	}
	shim := filepath.Join(dir, "shim dir")
	for i := 0; i < 2; i++ {
		code, out, stderr := run(shim)
		if code != 0 || out != "export PATH='"+shim+"':\"$PATH\"\n" {
			t.Fatalf("run %d: exit %d, stdout %q, stderr %q", i, code, out, stderr)
		}
		if got, err := os.Readlink(filepath.Join(shim, "gh")); err != nil || got != exe {
			t.Fatalf("run %d: %s/gh links to %q (%v), want %q", i, shim, got, err, exe)
		}
	}
	other := filepath.Join(dir, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "gh"), []byte("real gh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run(other); code != failure.ExitUsage || !strings.Contains(stderr, "never overwrites") {
		t.Fatalf("over an existing gh: exit %d, stderr %q", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(other, "gh")); string(b) != "real gh" {
		t.Fatal("the existing gh was changed")
	}
}

// ghWorld is a cliWorld for ghonce run as gh, in process: no real gh
// (GHONCE_GH names none), a task, and a branch fix one commit ahead of
// main; collaborators monalisa, hubot and the token's login, team core,
// milestone v1.
func newGhCLIWorld(t *testing.T) *cliWorld {
	t.Helper()
	w := newCLIWorld(t)
	w.env["GHONCE_GH"] = "/nonexistent/gh"
	w.env["GHONCE_TASK"] = "ISSUE-7"
	w.fake.SetRef(testOwner, testName, "fix", w.fake.AddCommit(testOwner, testName, "main"))
	for _, l := range []string{"monalisa", "hubot", testLogin} {
		w.fake.AddCollaborator(testOwner, testName, l)
	}
	w.fake.AddTeam(testOwner, testName, "core")
	w.fake.SeedMilestone(testOwner, testName, "v1", "open")
	return w
}

// gh runs `gh args...` in process; terminal says which streams are
// terminals ("in", "out", "err").
func (w *cliWorld) gh(terminal string, extra map[string]string, args ...string) cliRun {
	sys, out, errb := w.io("", extra)
	in := sys.In
	sys.IsTerminal = func(s any) bool {
		return s == any(in) && strings.Contains(terminal, "in") || s == any(out) && strings.Contains(terminal, "out") || s == any(errb) && strings.Contains(terminal, "err")
	}
	code := GhMain(context.Background(), append([]string{"gh"}, args...), sys)
	return cliRun{code: code, stdout: out.String(), stderr: errb.String()}
}

// gh prints "Creating pull request for H into B in R" only where it could
// have prompted (standard input and output on a terminal, prompts not
// disabled), and "Creating issue in R" only when standard output is a
// terminal; the URL goes to stdout either way.
func TestGhSaysCreatingOnlyOnATerminal(t *testing.T) {
	const prLine = "\nCreating pull request for fix into main in " + testRepo + "\n\n"
	const issueLine = "\nCreating issue in " + testRepo + "\n\n"
	for i, tc := range []struct {
		terminal string
		env      map[string]string
		pr       bool
		issue    bool
	}{
		{"in out err", nil, true, true},
		{"in out", nil, true, true},
		{"out err", nil, false, true},
		{"in err", nil, false, false},
		{"", nil, false, false},
		{"in out err", map[string]string{"GH_PROMPT_DISABLED": "1"}, false, true},
	} {
		t.Run(fmt.Sprintf("terminal=%q env=%v", tc.terminal, tc.env), func(t *testing.T) {
			w := newGhCLIWorld(t)
			o := w.gh(tc.terminal, tc.env, "pr", "create", "-R", testRepo, "-H", "fix", "-t", "Fix", "-b", "Body.")
			if o.code != 0 || strings.Contains(o.stderr, prLine) != tc.pr || !strings.HasSuffix(o.stdout, "/pull/1\n") {
				t.Errorf("case %d, terminals %q %v: pr create exit %d, stdout %q, stderr %q; want the Creating line: %v", i, tc.terminal, tc.env, o.code, o.stdout, o.stderr, tc.pr)
			}
			o = w.gh(tc.terminal, tc.env, "issue", "create", "-R", testRepo, "-t", "Flaky", "-b", "Seen twice.")
			if o.code != 0 || strings.Contains(o.stderr, issueLine) != tc.issue || !strings.HasSuffix(o.stdout, "/issues/2\n") {
				t.Errorf("case %d, terminals %q %v: issue create exit %d, stdout %q, stderr %q; want the Creating line: %v", i, tc.terminal, tc.env, o.code, o.stdout, o.stderr, tc.issue)
			}
		})
	}
}

// writes lists the fake's answered writes, "METHOD path".
func writes(fake *fixtures.Server) []string {
	var out []string
	for _, q := range fake.Requests() {
		if q.Method != "GET" && q.Status/100 == 2 {
			out = append(out, q.Method+" "+q.Path)
		}
	}
	return out
}

// gh's -a, -r and -m are set on what the guarded create made, through the
// API (no real gh); a rerun finds them in place and writes nothing.
func TestGhSetsAssigneesReviewersAndMilestone(t *testing.T) {
	w := newGhCLIWorld(t)
	args := []string{"pr", "create", "-R", testRepo, "-H", "fix", "-t", "Fix", "-b", "Body.", "-a", "@me,monalisa", "-r", "hubot", "--reviewer", testOwner + "/core", "-m", "v1"}
	for run := 0; run < 2; run++ {
		o := w.gh("", nil, args...)
		if o.code != 0 || o.stdout != w.fake.WebURL()+testRepo+"/pull/1\n" {
			t.Fatalf("run %d: exit %d, stdout %q, stderr %q", run, o.code, o.stdout, o.stderr)
		}
		prs := w.fake.PullRequests(testOwner, testName)
		if len(prs) != 1 || !slices.Equal(prs[0].Assignees, []string{testLogin, "monalisa"}) || !slices.Equal(prs[0].Reviewers, []string{"hubot", testOwner + "/core"}) || prs[0].Milestone != "v1" {
			t.Fatalf("run %d: %d PRs, %+v", run, len(prs), prs)
		}
	}
	want := []string{"POST /repos/" + testRepo + "/pulls", "POST /repos/" + testRepo + "/issues/1/assignees", "POST /repos/" + testRepo + "/pulls/1/requested_reviewers", "PATCH /repos/" + testRepo + "/issues/1"}
	got := slices.DeleteFunc(writes(w.fake), func(s string) bool { return strings.HasSuffix(s, "/labels") })
	if len(got) > 1 {
		slices.Sort(got[1:]) // after the create, sent together
		slices.Sort(want[1:])
	}
	if !slices.Equal(got, want) {
		t.Fatalf("writes %q, want %q: the rerun must send nothing", got, want)
	}
	o := w.gh("", nil, "issue", "create", "-R", testRepo, "-t", "Flaky", "-b", "Seen twice.", "-a", "hubot", "-m", "1")
	is := w.fake.Issues(testOwner, testName)
	if o.code != 0 || len(is) != 1 || !slices.Equal(is[0].Assignees, []string{"hubot"}) || is[0].Milestone != "v1" {
		t.Fatalf("issue create -a -m: exit %d, %+v\n%s", o.code, is, o.stderr)
	}
}

// When GitHub refuses one of them, the pull request stays (its URL on
// stdout, exit 1 as gh), stderr names what failed and what to do, and the
// rerun after the fix sets it without creating again.
func TestGhMetadataFailureKeepsTheCreate(t *testing.T) {
	w := newGhCLIWorld(t)
	args := []string{"pr", "create", "-R", testRepo, "-H", "fix", "-t", "Fix", "-b", "Body.", "-a", "monalisa", "-r", "stranger"}
	o := w.gh("", nil, args...)
	url := w.fake.WebURL() + testRepo + "/pull/1\n"
	if o.code != 1 || o.stdout != url {
		t.Fatalf("exit %d, stdout %q (want 1 and %q), stderr %q", o.code, o.stdout, url, o.stderr)
	}
	for _, says := range []string{"request reviews from stranger", "collaborator of " + testRepo, "rerun the same command", "creates nothing again"} {
		if !strings.Contains(o.stderr, says) {
			t.Errorf("stderr does not say %q:\n%s", says, o.stderr)
		}
	}
	if prs := w.fake.PullRequests(testOwner, testName); len(prs) != 1 || !slices.Equal(prs[0].Assignees, []string{"monalisa"}) {
		t.Fatalf("after the refusal: %+v", prs)
	}
	w.fake.AddCollaborator(testOwner, testName, "stranger")
	o = w.gh("", nil, args...)
	prs := w.fake.PullRequests(testOwner, testName)
	if o.code != 0 || o.stdout != url || len(prs) != 1 || !slices.Equal(prs[0].Reviewers, []string{"stranger"}) {
		t.Fatalf("rerun: exit %d stdout %q, %+v\n%s", o.code, o.stdout, prs, o.stderr)
	}
}

// GHONCE_SETTLE is a duration; anything else is refused before anything
// is created.
func TestGhSettleFromEnv(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want time.Duration
		ok   bool
	}{{"", 7 * time.Second, true}, {"0", 0, true}, {"250ms", 250 * time.Millisecond, true}, {"15", 0, false}, {"-1s", 0, false}, {"soon", 0, false}} {
		t.Run("GHONCE_SETTLE="+tc.v, func(t *testing.T) {
			d, err := cmdutil.SettleFromEnv(mapEnv{"GHONCE_SETTLE": tc.v}.get, 7*time.Second)
			if (err == nil) != tc.ok || d != tc.want || err != nil && (!isUsageErr(err) || !strings.Contains(err.Error(), "GHONCE_SETTLE")) {
				t.Errorf("GHONCE_SETTLE=%q: %v, %v", tc.v, d, err)
			}
		})
	}
	w := newGhCLIWorld(t)
	o := w.gh("", map[string]string{"GHONCE_SETTLE": "soon"}, "issue", "create", "-R", testRepo, "-t", "Flaky", "-b", "Seen twice.")
	if o.code != 1 || !strings.Contains(o.stderr, "GHONCE_SETTLE") || len(writes(w.fake)) != 0 {
		t.Fatalf("a bad GHONCE_SETTLE: exit %d, stderr %q, writes %q", o.code, o.stderr, writes(w.fake))
	}
}

// Another text under a done key through the shim (issues 28 and 37): a
// reworded retry and a second act alike get the facts (the first URL, both
// titles, the GHONCE_STEP for another act), gh's exit 1 (ghonce's 7 with
// GHONCE_EXIT_CODES=ghonce) and nothing on stdout; nothing is created. A
// retry stops there; a second act reruns with the step and is made. The
// same title with another body is the first, exit 0, with a warning.
func TestGhSecondActIsNotTheFirst(t *testing.T) {
	w := newGhCLIWorld(t)
	first := w.gh("", nil, "issue", "create", "-R", testRepo, "-t", "Follow-up: flaky test in auth", "-b", "Seen twice.")
	url := w.fake.WebURL() + testRepo + "/issues/1\n"
	if first.code != 0 || first.stdout != url {
		t.Fatalf("first: exit %d, stdout %q, stderr %q", first.code, first.stdout, first.stderr)
	}
	retry := w.gh("", nil, "issue", "create", "-R", testRepo, "-t", "Follow-up: flaky test in auth", "-b", "Seen twice, on CI.")
	if retry.code != 0 || retry.stdout != url {
		t.Fatalf("retry, another body: exit %d, stdout %q, stderr %q; want the first URL, exit 0", retry.code, retry.stdout, retry.stderr)
	}
	// Its warning names the setting gh's user has: gh has no --on-change.
	if !strings.Contains(retry.stderr, "GHONCE_ON_CHANGE=update edits it") || strings.Contains(retry.stderr, "--on-change") || strings.Contains(retry.stderr, "--step") {
		t.Errorf("retry's warning, want it to name GHONCE_ON_CHANGE and no flag gh lacks:\n%s", retry.stderr)
	}
	for _, tc := range []struct{ title, step string }{
		{"Follow-up: flaky test in auth (retry)", "issue-create-follow-up-flaky-test-in-auth-retry"},
		{"Follow-up: docs typo in README", "issue-create-follow-up-docs-typo-in-readme"},
	} {
		o := w.gh("", nil, "issue", "create", "-R", testRepo, "-t", tc.title, "-b", "b")
		if o.code != 1 || o.stdout != "" {
			t.Fatalf("%q: exit %d, stdout %q; want gh's 1 and nothing on stdout", tc.title, o.code, o.stdout)
		}
		for _, says := range []string{strings.TrimSpace(url), `"Follow-up: flaky test in auth"`, fmt.Sprintf("%q", tc.title), "Nothing was created", "it is done: nothing to do", "GHONCE_STEP=" + tc.step} {
			if !strings.Contains(o.stderr, says) {
				t.Errorf("%q: stderr does not say %q:\n%s", tc.title, says, o.stderr)
			}
		}
		if o := w.gh("", map[string]string{"GHONCE_EXIT_CODES": "ghonce"}, "issue", "create", "-R", testRepo, "-t", tc.title, "-b", "b"); o.code != failure.ExitSameOrAnother {
			t.Errorf("%q with GHONCE_EXIT_CODES=ghonce: exit %d, want %d", tc.title, o.code, failure.ExitSameOrAnother)
		}
	}
	if n := len(w.fake.Issues(testOwner, testName)); n != 1 {
		t.Fatalf("%d issues after the facts, want 1", n)
	}
	const step = "issue-create-follow-up-docs-typo-in-readme"
	again := w.gh("", map[string]string{"GHONCE_STEP": step}, "issue", "create", "-R", testRepo, "-t", "Follow-up: docs typo in README", "-b", "A typo.")
	if again.code != 0 || again.stdout != w.fake.WebURL()+testRepo+"/issues/2\n" {
		t.Fatalf("with GHONCE_STEP: exit %d, stdout %q, stderr %q", again.code, again.stdout, again.stderr)
	}

	// Comments: "started" then "done" on one issue.
	if o := w.gh("", nil, "issue", "comment", "1", "-R", testRepo, "-b", "Started."); o.code != 0 {
		t.Fatalf("started: exit %d, %s", o.code, o.stderr)
	}
	done := w.gh("", nil, "issue", "comment", "1", "-R", testRepo, "-b", "Done: the fix is in #12.")
	if done.code == 0 || !strings.Contains(done.stderr, "GHONCE_STEP=issue-comment-done-the-fix-is-in-12") {
		t.Fatalf("done after started: exit %d, stderr %q; want non-zero naming GHONCE_STEP", done.code, done.stderr)
	}
	// GHONCE_ON_CHANGE=warn is the old answer: the first, exit 0, a warning.
	warn := w.gh("", map[string]string{"GHONCE_ON_CHANGE": "warn"}, "issue", "comment", "1", "-R", testRepo, "-b", "Done: the fix is in #12.")
	if warn.code != 0 || !strings.Contains(warn.stdout, "#issuecomment-") {
		t.Fatalf("GHONCE_ON_CHANGE=warn: exit %d, stdout %q, stderr %q", warn.code, warn.stdout, warn.stderr)
	}
	if bad := w.gh("", map[string]string{"GHONCE_ON_CHANGE": "sometimes"}, "issue", "comment", "1", "-R", testRepo, "-b", "x"); bad.code == 0 || !strings.Contains(bad.stderr, "GHONCE_ON_CHANGE") {
		t.Fatalf("GHONCE_ON_CHANGE=sometimes: exit %d, stderr %q", bad.code, bad.stderr)
	}
}

// Bad input names its field in the words of the front it came through:
// ghonce's flag, gh's flag or the variable the shim reads, never another
// front's; --json gives the field by its wire name. Nothing is created.
func TestInvalidInputNamesTheFrontsField(t *testing.T) {
	w := newGhCLIWorld(t)
	for _, tc := range []struct {
		name string
		o    cliRun
		says string
	}{
		{"ghonce's --base", w.run("", nil, "pr", "create", "--task", "T", "--base", "", "--head", "fix", "--title", "t", "--body", "b", "--repo", testRepo), "--base is empty"},
		{"ghonce's --from", w.run("", nil, "branch", "create", "x", "--task", "T", "--from", "a b", "--repo", testRepo), `--from "a b" holds white space`},
		{"ghonce's --step", w.run("", nil, "issue", "create", "--task", "T", "--step", "a\nb", "--title", "t", "--body", "b", "--repo", testRepo), `--step "a\nb" holds a control character`},
		{"the action's base: input", w.run("", map[string]string{"GITHUB_ACTIONS": "true", "GHONCE_VIA_ACTION": "true"}, "pr", "create", "--task", "T", "--base", "", "--head", "fix", "--title", "t", "--body", "b", "--repo", testRepo), "the base: input is empty"},
		{"status's --task", w.run("", nil, "status", "--task", "a\nb"), `--task "a\nb" holds a control character`},
		{"gh's --title", w.gh("", nil, "issue", "create", "-R", testRepo, "-t", " ", "-b", "b"), "--title is empty"},
		{"the shim's GHONCE_STEP", w.gh("", map[string]string{"GHONCE_STEP": "a\nb"}, "issue", "create", "-R", testRepo, "-t", "T", "-b", "b"), `GHONCE_STEP "a\nb" holds a control character`},
	} {
		// The shim exits as gh does (1), ghonce with its usage code.
		if tc.o.code == 0 || !strings.Contains(tc.o.stderr, tc.says) || strings.Contains(tc.says, "input") && strings.Contains(tc.o.stderr, "--base") {
			t.Errorf("%s: exit %d, stderr %q; want a failure saying %q", tc.name, tc.o.code, tc.o.stderr, tc.says)
		}
	}
	o := w.run("", nil, "pr", "create", "--task", "T", "--base", "", "--head", "fix", "--title", "t", "--body", "b", "--repo", testRepo, "--json")
	var f failure.Failure
	if err := json.Unmarshal([]byte(o.stdout), &f); err != nil || f.Error.Kind != failure.Usage || f.Error.Field != "base" || !strings.Contains(f.Error.Message, "--base is empty") {
		t.Errorf("--json: %q (%v); want kind usage, field base, the message naming --base", o.stdout, err)
	}
	if n := len(w.fake.Issues(testOwner, testName)); n != 0 {
		t.Errorf("%d issues and pull requests after bad input, want 0", n)
	}
}

// `ghonce key` derives keys through the acting verbs' door: a target they
// refuse is refused (exit 2) in the same words, not printed as a key no
// verb would use.
func TestKeyRefusesWhatTheVerbRefuses(t *testing.T) {
	w := newCLIWorld(t)
	message := func(args ...string) string {
		t.Helper()
		o := w.run("", nil, append(args, "--task", "T", "--repo", testRepo, "--json")...)
		var f failure.Failure
		if err := json.Unmarshal([]byte(o.stdout), &f); err != nil || o.code != failure.ExitUsage {
			t.Fatalf("%v: exit %d, stdout %q; want exit 2 and a failure", args, o.code, o.stdout)
		}
		return f.Error.Message
	}
	for _, tc := range []struct{ verb, key []string }{
		{[]string{"pr", "create", "--base", "bad..branch", "--head", "fix", "--title", "t", "--body", "b"}, []string{"key", "--kind", "pr", "--target", "bad..branch"}},
		{[]string{"branch", "create", "bad..branch", "--from", "main"}, []string{"key", "--kind", "branch", "--target", "bad..branch"}},
		{[]string{"file", "put", "../x", "--branch", "main", "-m", "m", "--content", "x"}, []string{"key", "--kind", "file", "--target", "main:../x"}},
		{[]string{"issue", "comment", "0", "--body", "b"}, []string{"key", "--kind", "comment", "--target", "0"}},
	} {
		if verb, key := message(tc.verb...), message(tc.key...); verb != key {
			t.Errorf("%v says %q, %v says %q; want the same", tc.verb, verb, tc.key, key)
		}
	}
	if got := message("key", "--kind", "pr"); !strings.Contains(got, "--target is empty") {
		t.Errorf("a pr key without a target: %q; want it to name --target", got)
	}
}

// A branch that names neither --sha nor --from starts from the default
// branch's head, as create_branch without from_branch does: the kind's
// default, whichever front it comes through. Both flags are refused.
func TestBranchCreateStartsFromTheDefaultBranch(t *testing.T) {
	w := newCLIWorld(t)
	head, _ := w.fake.Branch(testOwner, testName, "main")
	o := w.run("", nil, "branch", "create", "feature", "--task", "T", "--repo", testRepo, "--json")
	if sha, ok := w.fake.Branch(testOwner, testName, "feature"); o.code != 0 || !ok || sha != head {
		t.Fatalf("exit %d, stdout %q, stderr %q; branch at %q (%v), want main's head %s", o.code, o.stdout, o.stderr, sha, ok, head)
	}
	if o := w.run("", nil, "branch", "create", "other", "--task", "T", "--repo", testRepo, "--sha", head, "--from", "main"); o.code != failure.ExitUsage {
		t.Fatalf("--sha and --from: exit %d, stderr %q; want exit 2", o.code, o.stderr)
	}
}

// An installation token cannot read GET /user, so ghonce cannot learn whose
// artifacts are ours from it: through the shim, whose gh has no
// --trust-author, the advice names GHONCE_TRUST_AUTHOR, and that setting
// files the issue once (a rerun finds it).
func TestGhTrustAuthorFromEnv(t *testing.T) {
	w := newGhCLIWorld(t)
	const appToken = "ghs_GHONCEtestSECRET_shimapp_7e2a" // a placeholder the fake accepts
	w.fake.AddInstallationToken("shim-app[bot]", appToken)
	env := map[string]string{"GH_TOKEN": appToken}
	args := []string{"issue", "create", "-R", testRepo, "-t", "Flaky", "-b", "Seen twice."}
	o := w.gh("", env, args...)
	if o.code == 0 || !strings.Contains(o.stderr, "GHONCE_TRUST_AUTHOR=LOGIN") || strings.Contains(o.stderr, "--trust-author") || len(writes(w.fake)) != 0 {
		t.Fatalf("without a trusted login: exit %d, stderr %q, writes %q; want a refusal naming GHONCE_TRUST_AUTHOR, no flag gh lacks, nothing sent", o.code, o.stderr, writes(w.fake))
	}
	env["GHONCE_TRUST_AUTHOR"] = "someone-else, shim-app[bot]"
	first := w.gh("", env, args...)
	again := w.gh("", env, args...)
	if first.code != 0 || again.code != 0 || first.stdout != again.stdout || len(w.fake.Issues(testOwner, testName)) != 1 {
		t.Fatalf("with GHONCE_TRUST_AUTHOR: exits %d, %d, stdout %q then %q, %d issues; want one issue, the same URL twice", first.code, again.code, first.stdout, again.stdout, len(w.fake.Issues(testOwner, testName)))
	}
}
