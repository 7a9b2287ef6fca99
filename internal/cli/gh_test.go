package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
)

func TestGuardedGh(t *testing.T) {
	for _, tc := range []struct {
		args []string
		verb string
		rest []string
	}{
		// gh's own aliases of create, and flags before the noun or verb,
		// which gh's cobra accepts: each creates, so each is guarded.
		{[]string{"issue", "new", "-t", "x", "-b", "y"}, "issue create", []string{"-t", "x", "-b", "y"}},
		{[]string{"pr", "new", "-t", "x"}, "pr create", []string{"-t", "x"}},
		{[]string{"issue", "-R", "o/r", "new", "-t", "x"}, "issue create", []string{"-R", "o/r", "-t", "x"}},
		{[]string{"--repo", "o/r", "pr", "create"}, "pr create", []string{"--repo", "o/r"}},
		{[]string{"--repo=o/r", "issue", "comment", "3"}, "issue comment", []string{"--repo=o/r", "3"}},
		{[]string{"pr", "-R", "o/r", "new", "--web"}, "", nil},
		{[]string{"issue", "-h", "new"}, "", nil},
		{[]string{"--", "issue", "new"}, "", nil},
		{[]string{"issue", "news"}, "", nil},
		{[]string{"pr", "create", "-t", "x"}, "pr create", nil},
		{[]string{"issue", "create"}, "issue create", nil},
		{[]string{"issue", "comment", "3", "-b", "x"}, "issue comment", nil},
		{[]string{"pr", "comment"}, "pr comment", nil},
		{[]string{"pr", "create", "--help"}, "", nil},
		{[]string{"pr", "create", "-h"}, "", nil},
		{[]string{"pr", "create", "-w"}, "", nil},
		{[]string{"pr", "create", "--dry-run"}, "", nil},
		{[]string{"pr", "comment", "3", "--edit-last", "-b", "x"}, "", nil},
		{[]string{"pr", "create", "-b", "x", "--", "--help"}, "pr create", nil},
		{[]string{"issue", "edit", "3", "--add-label", "bug"}, "issue edit", nil},
		{[]string{"issue", "edit", "3", "--add-label=bug", "-R", "o/r"}, "issue edit", nil},
		{[]string{"pr", "edit", "--add-label", "bug,ci"}, "pr edit", nil},
		{[]string{"issue", "edit", "3", "--add-label", "bug", "--title", "x"}, "", nil},
		{[]string{"issue", "edit", "3", "--remove-label", "bug"}, "", nil},
		{[]string{"pr", "edit", "3"}, "", nil},
		{[]string{"pr", "list"}, "", nil},
		{[]string{"api", "repos/o/r/pulls", "-X", "POST"}, "", nil},
		{[]string{"--version"}, "", nil},
		{nil, "", nil},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			verb, rest, ok := guardedGh(tc.args)
			if verb != tc.verb || ok != (tc.verb != "") {
				t.Errorf("guardedGh(%q) = %q, %v; want %q", tc.args, verb, ok, tc.verb)
			}
			if tc.rest != nil && !slices.Equal(rest, tc.rest) {
				t.Errorf("guardedGh(%q) hands the verb %q, want %q", tc.args, rest, tc.rest)
			}
		})
	}
}

// Every spelling the shim guards is one the installed gh runs as the same
// command (its help is the verb's), and every alias a gh recent enough to
// print them lists under ALIASES is guarded.
func TestGhVerbsAreTheRealGhs(t *testing.T) {
	real, err := exec.LookPath("gh")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("the real gh is not installed; under CI=true its aliases must be checked (apt-get install gh)")
		}
		t.Skip("the real gh is not installed (apt-get install gh)")
	}
	help := func(words string) string {
		t.Helper()
		cmd := exec.Command(real, append(strings.Fields(words), "--help")...)
		cmd.Env = append(os.Environ(), "GH_CONFIG_DIR="+t.TempDir(), "GH_NO_UPDATE_NOTIFIER=1", "NO_COLOR=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("gh %s --help: %v\n%s", words, err, out)
		}
		return string(out)
	}
	for spelling, verb := range ghVerbs {
		h := help(verb)
		if got := help(spelling); got != h {
			t.Errorf("gh %s --help is not gh %s's: the real gh does not take it as that verb", spelling, verb)
		}
		noun := strings.Fields(verb)[0]
		if _, aliases, ok := strings.Cut(h, "ALIASES\n"); ok {
			for _, line := range strings.Split(aliases, "\n") {
				f := strings.Fields(line)
				if len(f) == 0 {
					break
				}
				if len(f) >= 3 && f[0] == "gh" && f[1] == noun && ghVerbs[noun+" "+f[2]] != verb {
					t.Errorf("the real gh lists %q as an alias of gh %s; the shim does not guard it", line, verb)
				}
			}
		}
	}
}

// An alias the user defined with the real gh (`gh alias set`) is read from
// the config the real gh wrote and expanded as gh expands it, so a guarded
// verb behind it is guarded; a shell alias is left to the real gh, whose
// shell runs the shim.
func TestGhUserAliasesAreExpanded(t *testing.T) {
	real, err := exec.LookPath("gh")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("the real gh is not installed; under CI=true its aliases must be checked (apt-get install gh)")
		}
		t.Skip("the real gh is not installed (apt-get install gh)")
	}
	dir := t.TempDir()
	for _, a := range [][]string{
		{"ic", "issue create"},
		{"bug", `issue create --label bug --title "$1"`},
		{"note", "pr comment $1 --body 'a note'"},
		{"co", "pr checkout"},
		{"--shell", "sic", `gh issue create "$@"`},
	} {
		cmd := exec.Command(real, append([]string{"alias", "set"}, a...)...)
		cmd.Env = append(os.Environ(), "GH_CONFIG_DIR="+dir, "GH_NO_UPDATE_NOTIFIER=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gh alias set %q: %v\n%s", a, err, out)
		}
	}
	getenv := func(k string) string {
		if k == "GH_CONFIG_DIR" {
			return dir
		}
		return ""
	}
	for _, tc := range []struct {
		args []string
		verb string
		rest []string
	}{
		{[]string{"ic", "-t", "x", "-b", "y"}, "issue create", []string{"-t", "x", "-b", "y"}},
		{[]string{"bug", "Flaky test", "-b", "seen twice"}, "issue create", []string{"--label", "bug", "--title", "Flaky test", "-b", "seen twice"}},
		{[]string{"note", "7"}, "pr comment", []string{"7", "--body", "a note"}},
		{[]string{"co", "7"}, "", nil},
		{[]string{"sic", "-t", "x"}, "", nil},
		{[]string{"bug"}, "", nil}, // $1 missing: the real gh says so
		{[]string{"unknown"}, "", nil},
	} {
		exp, ok := expandGhAlias(tc.args, getenv)
		verb, rest, guarded := "", []string(nil), false
		if ok {
			verb, rest, guarded = guardedGh(exp)
		}
		if verb != tc.verb || guarded != (tc.verb != "") || (tc.rest != nil && !slices.Equal(rest, tc.rest)) {
			t.Errorf("gh %q: verb %q, args %q; want %q, %q", tc.args, verb, rest, tc.verb, tc.rest)
		}
	}
}

func TestSplitShellWords(t *testing.T) {
	for in, want := range map[string][]string{
		`issue create`:              {"issue", "create"},
		`a "b c" 'd e' f\ g`:        {"a", "b c", "d e", "f g"},
		`x "" ''`:                   {"x", "", ""},
		`"a \"q\" $b" 'no \escape'`: {`a "q" $b`, `no \escape`},
	} {
		if got, ok := splitShellWords(in); !ok || !slices.Equal(got, want) {
			t.Errorf("splitShellWords(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	for _, bad := range []string{`"open`, `'open`} {
		if _, ok := splitShellWords(bad); ok {
			t.Errorf("splitShellWords(%q) parsed an unterminated quote", bad)
		}
	}
}

// gh's flags, long and short, parse into the shim's; those it cannot guard
// are refused by name with what to do instead.
func TestParseGhFlags(t *testing.T) {
	o, rest, err := parseGh("pr create", []string{"-t", "T", "-b", "B", "-B", "dev", "-H", "me:feat", "-d", "-l", "bug,help", "--label", "x", "-R", "o/r"})
	if err != nil {
		t.Fatal(err)
	}
	str := func(o *ghFlags, field string) string { return o.field(field).str }
	if str(o, "title") != "T" || str(o, "body") != "B" || str(o, "base") != "dev" || str(o, "head") != "me:feat" || !o.field("draft").on || o.repo != "o/r" || len(rest) != 0 || !o.set("body") {
		t.Fatalf("parsed %+v, rest %q", o, rest)
	}
	if p, err := gatherPayload(o.set, o.fields, nil, IO{Getenv: func(string) string { return "" }}, nil, false); err != nil || !slices.Equal(p["labels"].([]string), []string{"bug", "help", "x"}) {
		t.Fatalf("labels %v (%v), want gh's comma lists split", p["labels"], err)
	}
	o, _, err = parseGh("issue create", []string{"--title=T", "-F", "-"})
	if err != nil || str(o, "title") != "T" || o.field("body").file != "-" || o.set("body") {
		t.Fatalf("issue create: %+v, %v", o, err)
	}
	o, _, err = parseGh("pr create", []string{"-a", "@me,monalisa", "--assignee", "hubot", "-r", "octo-org/core", "-m", "v1"})
	if err != nil || !slices.Equal(o.meta.Assignees, []string{"@me", "monalisa", "hubot"}) || !slices.Equal(o.meta.Reviewers, []string{"octo-org/core"}) || o.meta.Milestone != "v1" {
		t.Fatalf("pr create -a -r -m: %+v, %v", o, err)
	}
	for _, tc := range []struct {
		verb string
		args []string
		says string
	}{
		{"pr create", []string{"-e"}, "-e/--editor"},
		{"issue create", []string{"--editor"}, "-e/--editor"},
		{"issue comment", []string{"1", "-e"}, "-e/--editor"},
		{"pr create", []string{"-p", "Roadmap"}, "--add-project"},
		{"issue create", []string{"-r", "octocat"}, "unknown shorthand flag: 'r'"},
		{"issue create", []string{"-T", "bug"}, "-T/--template"},
		{"pr create", []string{"--no-such-flag"}, "unknown flag"},
	} {
		t.Run(tc.verb+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			_, _, err := parseGh(tc.verb, tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.says) || !isUsageErr(err) {
				t.Errorf("parseGh(%s %q) = %v; want a usage error mentioning %q", tc.verb, tc.args, err, tc.says)
			}
		})
	}
}

func isUsageErr(err error) bool { u, ok := err.(interface{ Usage() bool }); return ok && u.Usage() }

func TestParseGhTargetAndRepo(t *testing.T) {
	n, repo, err := parseGhTarget("https://github.com/octo-org/hello-world/pull/12")
	if n != 12 || repo != "octo-org/hello-world" || err != nil {
		t.Fatalf("pull URL: %d %q %v", n, repo, err)
	}
	if n, repo, err = parseGhTarget("#7"); n != 7 || repo != "" || err != nil {
		t.Fatalf("#7: %d %q %v", n, repo, err)
	}
	for _, bad := range []string{"0", "-1", "abc", "https://github.com/o/r/tree/main"} {
		if _, _, err := parseGhTarget(bad); err == nil {
			t.Errorf("parseGhTarget(%q): want an error", bad)
		}
	}
	for _, tc := range []struct{ s, host string }{
		{"o/r", "github.com"}, {"github.com/o/r", "github.com"}, {"https://github.com/o/r", "github.com"},
		{"https://ghe.example.com/o/r.git", "ghe.example.com"}, {"GHE.example.com/o/r", "ghe.example.com"},
	} {
		t.Run(tc.s, func(t *testing.T) {
			if r, err := parseGhRepo(tc.s, tc.host); err != nil || r != (ghcheck.Repo{Owner: "o", Name: "r"}) {
				t.Errorf("parseGhRepo(%q, %q) = %v, %v", tc.s, tc.host, r, err)
			}
		})
	}
	if _, err := parseGhRepo("ghe.example.com/o/r", "github.com"); err == nil || !strings.Contains(err.Error(), "GH_HOST=ghe.example.com") {
		t.Errorf("a repository on another host: %v", err)
	}
	for _, tc := range []struct{ url, host, repo string }{
		{"https://github.com/o/r.git", "github.com", "o/r"},
		{"git@github.com:o/r.git", "github.com", "o/r"},
		{"ssh://git@ghe.example.com:2222/o/r", "ghe.example.com", "o/r"},
		{"https://x-access-token:tok@github.com/o/r", "github.com", "o/r"},
	} {
		host, r, ok := parseRemoteURL(tc.url)
		if !ok || host != tc.host || r.String() != tc.repo {
			t.Errorf("parseRemoteURL(%q) = %q %v %v", tc.url, host, r, ok)
		}
	}
}

// gh's token and host variables: GH_TOKEN before GITHUB_TOKEN on
// github.com; the enterprise pair, and https://HOST/api/v3, on GH_HOST.
func TestGhEnvToken(t *testing.T) {
	for _, tc := range []struct {
		env       map[string]string
		token     string
		api, host string
	}{
		{map[string]string{"GH_TOKEN": "a", "GITHUB_TOKEN": "b"}, "a", "", "github.com"},
		{map[string]string{"GITHUB_TOKEN": "b"}, "b", "", "github.com"},
		{map[string]string{"GH_HOST": "ghe.example.com", "GH_TOKEN": "a", "GH_ENTERPRISE_TOKEN": "e"}, "e", "https://ghe.example.com/api/v3", "ghe.example.com"},
		{map[string]string{"GH_HOST": "ghe.example.com", "GITHUB_ENTERPRISE_TOKEN": "e2"}, "e2", "https://ghe.example.com/api/v3", "ghe.example.com"},
		{map[string]string{"GH_TOKEN": "a", "GITHUB_API_URL": "http://127.0.0.1:1/api/"}, "a", "http://127.0.0.1:1/api/", "github.com"},
	} {
		t.Run(strings.Join(slices.Sorted(maps.Keys(tc.env)), " "), func(t *testing.T) {
			tc.env["GHONCE_GH"] = "/nonexistent/gh" // no `gh auth token`
			sys := IO{Getenv: func(k string) string { return tc.env[k] }}
			e := newGhEnv(context.Background(), sys, "gh")
			if got := e.sys.Getenv("GH_TOKEN"); got != tc.token || e.sys.Getenv("GITHUB_TOKEN") != "" || e.sys.Getenv("GITHUB_API_URL") != tc.api || e.host != tc.host {
				t.Errorf("env %v: token %q api %q host %q; want %q %q %q", tc.env, got, e.sys.Getenv("GITHUB_API_URL"), e.host, tc.token, tc.api, tc.host)
			}
		})
	}
}

// gitCheckout makes a checkout whose remotes are given, on branch.
func gitCheckout(t *testing.T, branch string, remotes ...string) string {
	t.Helper()
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out.String())
		}
		return strings.TrimSpace(out.String())
	}
	git("init", "-q", "-b", "main")
	git("commit", "-q", "--allow-empty", "-m", "initial")
	for i := 0; i+1 < len(remotes); i += 2 {
		git("remote", "add", remotes[i], remotes[i+1])
	}
	git("update-ref", "refs/remotes/origin/main", "HEAD")
	git("checkout", "-q", "-b", branch)
	git("commit", "-q", "--allow-empty", "-m", "Fix the crash", "-m", "It was the cache.")
	t.Setenv("GIT_DIR", filepath.Join(dir, ".git"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	return dir
}

// The repository, head and --fill come from the checkout as gh infers
// them: upstream before origin, the current branch, the commits since the
// base.
func TestGhEnvInfersFromGit(t *testing.T) {
	dir := gitCheckout(t, "fix-crash_on-start", "origin", "git@github.com:me/hello-world.git", "upstream", "https://github.com/octo-org/hello-world.git", "other", "https://gitlab.com/x/y.git")
	e := newGhEnv(context.Background(), IO{Getenv: mapEnv{"GH_TOKEN": "t", "GHONCE_GH": "/nonexistent/gh"}.get}, "gh")
	repo, err := e.repo("")
	if err != nil || repo.String() != "octo-org/hello-world" {
		t.Fatalf("repo = %v, %v; want upstream's octo-org/hello-world", repo, err)
	}
	if r, _ := e.repo("a/b"); r.String() != "a/b" {
		t.Fatalf("-R a/b gave %v", r)
	}
	head, err := e.head(repo)
	if err != nil || head != "fix-crash_on-start" {
		t.Fatalf("head = %q, %v", head, err)
	}
	// The branch pushes to the fork: gh's head is then OWNER:BRANCH.
	if out, err := exec.Command("git", "-C", dir, "config", "branch.fix-crash_on-start.remote", "origin").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	if head, _ = e.head(repo); head != "me:fix-crash_on-start" {
		t.Fatalf("fork head = %q, want me:fix-crash_on-start", head)
	}
	// One commit since origin/main... upstream has no main ref, so the
	// base is read as the bare branch name, which git resolves locally.
	title, body, err := e.fill(repo, "main", head, false, false)
	if err != nil || title != "Fix the crash" || body != "It was the cache." {
		t.Fatalf("fill = %q %q %v", title, body, err)
	}
	if out, err := exec.Command("git", "-C", dir, "commit", "-q", "--allow-empty", "-m", "Add a test").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	title, body, err = e.fill(repo, "main", head, false, false)
	if err != nil || title != "fix crash on start" || body != "- Fix the crash\n- Add a test" {
		t.Fatalf("fill of two commits = %q %q %v; want the branch in words and the subjects", title, body, err)
	}
	if title, _, _ = e.fill(repo, "main", head, true, false); title != "Fix the crash" {
		t.Fatalf("fill-first title = %q", title)
	}
}

type mapEnv map[string]string

func (m mapEnv) get(k string) string { return m[k] }

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
	if code, _, stderr := run(other); code != ExitUsage || !strings.Contains(stderr, "never overwrites") {
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
			d, err := settleFromEnv(mapEnv{"GHONCE_SETTLE": tc.v}.get, 7*time.Second)
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
		if o := w.gh("", map[string]string{"GHONCE_EXIT_CODES": "ghonce"}, "issue", "create", "-R", testRepo, "-t", tc.title, "-b", "b"); o.code != ExitSameOrAnother {
			t.Errorf("%q with GHONCE_EXIT_CODES=ghonce: exit %d, want %d", tc.title, o.code, ExitSameOrAnother)
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
		if err := json.Unmarshal([]byte(o.stdout), &f); err != nil || o.code != ExitUsage {
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
	if o := w.run("", nil, "branch", "create", "other", "--task", "T", "--repo", testRepo, "--sha", head, "--from", "main"); o.code != ExitUsage {
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

// gh issue edit --add-label through the shim adds once: a second run asks
// GitHub nothing and a label a person removed in between stays removed;
// gh's repeatable and comma-separated forms both count.
func TestGhAddLabelOnce(t *testing.T) {
	w := newGhCLIWorld(t)
	n := w.fake.SeedIssue(testOwner, testName, testLogin, fixtures.SeedIssue{Title: "Flaky"})
	args := []string{"issue", "edit", fmt.Sprint(n), "-R", testRepo, "--add-label", "bug,ci", "--add-label", "triage"}
	if o := w.gh("", nil, args...); o.code != 0 {
		t.Fatalf("first: exit %d, stderr %q", o.code, o.stderr)
	}
	w.fake.RemoveLabel(testOwner, testName, n, "someone", "ci")
	if o := w.gh("", nil, args...); o.code != 0 || !strings.Contains(o.stderr, "skipped") {
		t.Fatalf("second: exit %d, stderr %q; want skipped", o.code, o.stderr)
	}
	for _, l := range []string{"bug", "ci", "triage"} {
		if got := w.fake.Labeled(testOwner, testName, n, l); got != 1 {
			t.Errorf("%s: %d labeled events, want 1", l, got)
		}
	}
}
