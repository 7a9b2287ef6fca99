package ghshim

import (
	"bytes"
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/cli/cmdutil"
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
	str := func(o *ghFlags, field string) string { return o.field(field).Str }
	if str(o, "title") != "T" || str(o, "body") != "B" || str(o, "base") != "dev" || str(o, "head") != "me:feat" || !o.field("draft").On || o.repo != "o/r" || len(rest) != 0 || !o.set("body") {
		t.Fatalf("parsed %+v, rest %q", o, rest)
	}
	if p, err := cmdutil.GatherPayload(o.set, o.fields, nil, cmdutil.IO{Getenv: func(string) string { return "" }}, nil, false); err != nil || !slices.Equal(p["labels"].([]string), []string{"bug", "help", "x"}) {
		t.Fatalf("labels %v (%v), want gh's comma lists split", p["labels"], err)
	}
	o, _, err = parseGh("issue create", []string{"--title=T", "-F", "-"})
	if err != nil || str(o, "title") != "T" || o.field("body").File != "-" || o.set("body") {
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
			sys := cmdutil.IO{Getenv: func(k string) string { return tc.env[k] }}
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
	e := newGhEnv(context.Background(), cmdutil.IO{Getenv: mapEnv{"GH_TOKEN": "t", "GHONCE_GH": "/nonexistent/gh"}.get}, "gh")
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
