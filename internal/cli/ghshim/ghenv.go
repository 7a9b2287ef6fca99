package ghshim

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/cli/cmdutil"
)

// ghEnv is gh's environment as the shim reads it: the host, the token and
// the git checkout the command runs in.
type ghEnv struct {
	ctx  context.Context
	sys  cmdutil.IO // sys with GH_TOKEN and GITHUB_API_URL resolved as gh would
	host string
	self string // argv[0], to find the real gh after it
}

// newGhEnv resolves gh's host and token. The token is, as in gh:
// GH_TOKEN, then GITHUB_TOKEN (github.com), or GH_ENTERPRISE_TOKEN, then
// GITHUB_ENTERPRISE_TOKEN (GH_HOST another host); else what the real
// `gh auth token` prints. None is not an error here: the factory reports
// it when GitHub is first needed.
func newGhEnv(ctx context.Context, sys cmdutil.IO, self string) *ghEnv {
	e := &ghEnv{ctx: ctx, host: cmdutil.FirstOf(sys.Getenv("GH_HOST"), "github.com"), self: self}
	enterprise := !strings.EqualFold(e.host, "github.com")
	names := []string{"GH_TOKEN", "GITHUB_TOKEN"}
	if enterprise {
		names = []string{"GH_ENTERPRISE_TOKEN", "GITHUB_ENTERPRISE_TOKEN"}
	}
	token := ""
	for _, n := range names {
		if token = sys.Getenv(n); token != "" {
			break
		}
	}
	if token == "" && sys.Getenv("GHONCE_APP_ID") == "" {
		token = e.ghAuthToken(sys.Getenv)
	}
	api := sys.Getenv("GITHUB_API_URL")
	if api == "" && enterprise {
		api = "https://" + e.host + "/api/v3"
	}
	getenv := sys.Getenv
	e.sys = sys
	e.sys.Getenv = func(k string) string {
		switch k {
		case "GH_TOKEN":
			return token
		case "GITHUB_TOKEN":
			return ""
		case "GITHUB_API_URL":
			return api
		}
		return getenv(k)
	}
	return e
}

// ghAuthToken asks the real gh for its stored token, "" if there is none.
func (e *ghEnv) ghAuthToken(getenv func(string) string) string {
	gh, err := realGh(e.self, getenv)
	if err != nil {
		return ""
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(e.ctx, gh, "auth", "token", "--hostname", e.host)
	cmd.Stdout = &out
	if cmd.Run() != nil {
		return ""
	}
	return strings.TrimSpace(out.String())
}

// repo is the repository a command acts on: flag (gh's -R, or a URL's),
// GH_REPO, else the git remote gh would pick: the one `gh repo
// set-default` marked (remote.NAME.gh-resolved), then upstream, github,
// origin, then any, of those on the host.
func (e *ghEnv) repo(flag string) (ghcheck.Repo, error) {
	if s := cmdutil.FirstOf(flag, e.sys.Getenv("GH_REPO")); s != "" {
		return parseGhRepo(s, e.host)
	}
	remotes, err := e.remotes()
	if err != nil {
		return ghcheck.Repo{}, err
	}
	if len(remotes) == 0 {
		return ghcheck.Repo{}, cmdutil.Usagef("no repository: run inside a git checkout with a GitHub remote, pass -R OWNER/NAME or set GH_REPO")
	}
	return remotes[0].repo, nil
}

type remote struct {
	name string
	repo ghcheck.Repo
}

// remotes lists the checkout's remotes on e.host in gh's order.
func (e *ghEnv) remotes() ([]remote, error) {
	out, err := e.git("config", "--get-regexp", `^remote\..*\.(url|gh-resolved)$`)
	if err != nil {
		// No checkout, or one without remotes: git exits 1 for "none".
		return nil, nil
	}
	urls := map[string]string{}
	resolved := ""
	var order []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, _ := strings.Cut(line, " ")
		k = strings.TrimPrefix(k, "remote.")
		switch {
		case strings.HasSuffix(k, ".url"):
			n := strings.TrimSuffix(k, ".url")
			if _, ok := urls[n]; !ok {
				order = append(order, n)
			}
			urls[n] = v
		case strings.HasSuffix(k, ".gh-resolved") && v == "base":
			resolved = strings.TrimSuffix(k, ".gh-resolved")
		}
	}
	rank := func(n string) int {
		switch n {
		case resolved:
			return 0
		case "upstream":
			return 1
		case "github":
			return 2
		case "origin":
			return 3
		}
		return 4
	}
	var rs []remote
	for _, n := range order {
		host, r, ok := parseRemoteURL(urls[n])
		if ok && strings.EqualFold(host, e.host) {
			rs = append(rs, remote{name: n, repo: r})
		}
	}
	for i := 1; i < len(rs); i++ { // stable insertion sort by rank
		for j := i; j > 0 && rank(rs[j].name) < rank(rs[j-1].name); j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
	return rs, nil
}

// parseRemoteURL parses a git remote URL: https://HOST/O/R(.git),
// ssh://git@HOST/O/R.git or git@HOST:O/R.git.
func parseRemoteURL(s string) (string, ghcheck.Repo, bool) {
	var host, path string
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		host, path = u.Hostname(), u.Path
	} else if at, rest, ok := strings.Cut(s, "@"); ok && !strings.Contains(at, "/") {
		host, path, _ = strings.Cut(rest, ":")
	} else {
		return "", ghcheck.Repo{}, false
	}
	r, err := ghcheck.ParseRepo(strings.TrimSuffix(strings.Trim(path, "/"), ".git"))
	return host, r, err == nil
}

// head is the head gh would push: the current branch, as OWNER:BRANCH
// when the branch's remote is another owner's repository (a fork).
func (e *ghEnv) head(base ghcheck.Repo) (string, error) {
	out, err := e.git("symbolic-ref", "--quiet", "--short", "HEAD")
	branch := strings.TrimSpace(out)
	if err != nil || branch == "" {
		return "", cmdutil.Usagef("no head: not on a branch of a git checkout; pass --head BRANCH")
	}
	for _, k := range []string{"branch." + branch + ".pushRemote", "remote.pushDefault", "branch." + branch + ".remote"} {
		name, err := e.git("config", "--get", k)
		if err != nil || strings.TrimSpace(name) == "" {
			continue
		}
		u, err := e.git("config", "--get", "remote."+strings.TrimSpace(name)+".url")
		if err != nil {
			break
		}
		if _, r, ok := parseRemoteURL(strings.TrimSpace(u)); ok && !strings.EqualFold(r.Owner, base.Owner) {
			return r.Owner + ":" + branch, nil
		}
		break
	}
	return branch, nil
}

// fill is gh's --fill: with one commit between base and head, its subject
// and body; with more, the branch name in words and a list of the
// subjects. first takes the first commit alone; verbose lists each
// commit's body too.
func (e *ghEnv) fill(repo ghcheck.Repo, base, head string, first, verbose bool) (title, body string, err error) {
	// The base as the remote last showed it, else a local branch of
	// that name.
	baseRef := base
	if rs, _ := e.remotes(); len(rs) > 0 {
		for _, r := range rs {
			if _, err := e.git("rev-parse", "--verify", "--quiet", r.name+"/"+base); r.repo == repo && err == nil {
				baseRef = r.name + "/" + base
				break
			}
		}
	}
	out, err := e.git("log", "--reverse", "--format=%s%x1f%b%x1e", baseRef+"..HEAD")
	if err != nil {
		return "", "", cmdutil.Usagef("gh pr create --fill: read the commits since %s: %v", baseRef, err)
	}
	type commit struct{ subject, body string }
	var cs []commit
	for _, rec := range strings.Split(out, "\x1e") {
		rec = strings.TrimLeft(rec, "\n")
		if rec == "" {
			continue
		}
		s, b, _ := strings.Cut(rec, "\x1f")
		cs = append(cs, commit{strings.TrimSpace(s), strings.TrimSpace(b)})
	}
	if len(cs) == 0 {
		return "", "", cmdutil.Usagef("gh pr create --fill: no commits between %s and HEAD", baseRef)
	}
	if first || len(cs) == 1 {
		return cs[0].subject, cs[0].body, nil
	}
	_, branch, ok := strings.Cut(head, ":")
	if !ok {
		branch = head
	}
	var lines []string
	for _, c := range cs {
		lines = append(lines, "- "+c.subject)
		if verbose && c.body != "" {
			lines = append(lines, "", c.body, "")
		}
	}
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' {
			return ' '
		}
		return r
	}, branch), strings.Join(lines, "\n"), nil
}

// git runs git in the working directory with the process's environment
// (GIT_DIR and friends apply) and returns its stdout.
func (e *ghEnv) git(args ...string) (string, error) {
	cmd := exec.CommandContext(e.ctx, "git", args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if msg := strings.TrimSpace(errb.String()); msg != "" {
			return out.String(), fmt.Errorf("git %s: %s", args[0], msg)
		}
		return out.String(), fmt.Errorf("git %s: %w", args[0], err)
	}
	return out.String(), nil
}

// realGh finds the gh the shim stands in front of: GHONCE_GH, else the
// first gh on PATH after the shim's own directory that is not ghonce.
func realGh(self string, getenv func(string) string) (string, error) {
	exe, _ := os.Executable()
	exeInfo, _ := os.Stat(exe)
	isSelf := func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && exeInfo != nil && os.SameFile(fi, exeInfo)
	}
	if p := getenv("GHONCE_GH"); p != "" {
		if isSelf(p) {
			return "", fmt.Errorf("GHONCE_GH=%s is ghonce itself: point it at the real gh", p)
		}
		return p, nil
	}
	shimDir := ""
	if strings.Contains(self, "/") {
		if abs, err := filepath.Abs(filepath.Dir(self)); err == nil {
			shimDir = abs
		}
	}
	dirs := filepath.SplitList(getenv("PATH"))
	start := 0
	for i, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			continue
		}
		if abs == shimDir || (shimDir == "" && isSelf(filepath.Join(abs, "gh"))) {
			start = i + 1
			break
		}
	}
	for _, d := range dirs[start:] {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, "gh")
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 || isSelf(p) {
			continue
		}
		return p, nil
	}
	return "", errNoRealGh
}

// handOff replaces this process with the real gh, with the same argv
// (argv[0] too), environment, standard streams and so exit code. It
// returns only when there is none to run.
func handOff(argv []string, sys cmdutil.IO) int {
	gh, err := realGh(argv[0], sys.Getenv)
	if err != nil && err != errNoRealGh {
		fmt.Fprintf(sys.Err, "ghonce: %v\n", err)
		return 1
	}
	if err != nil {
		fmt.Fprintf(sys.Err, "ghonce: `gh %s` is not guarded, and no real gh was found on PATH after %s: install gh (https://cli.github.com) or set GHONCE_GH to its path\n", strings.Join(argv[1:], " "), shimDirOf(argv[0]))
		return 1
	}
	code, err := execGh(gh, argv)
	if err != nil {
		fmt.Fprintf(sys.Err, "ghonce: run the real gh at %s: %v\n", gh, err)
		return 1
	}
	return code
}

func shimDirOf(self string) string {
	if strings.Contains(self, "/") {
		return filepath.Dir(self)
	}
	return "the shim's directory"
}
