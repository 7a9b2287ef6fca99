package docs_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"gopkg.in/yaml.v3"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/cli"
	"github.com/ghonce/ghonce/internal/mcp"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/tests/harness"
	"github.com/ghonce/ghonce/tools/clidoc"
)

// root is the module root: the tests run in docs/.
const root = ".."

// generated are the pages written by a program, not by hand; the tests of
// prose leave them to their generators.
var generated = map[string]bool{"docs/performance.md": true, "docs/reliability.md": true}

// pages returns README.md and every Markdown page under docs/, as paths
// relative to the module root, the CLI reference (generated) included only
// when withReference.
func pages(t *testing.T, withReference bool) []string {
	t.Helper()
	out := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() && rel == "docs/reference/cli" && !withReference {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			out = append(out, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func read(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// block is one fenced code block of a page.
type block struct {
	page, lang, text string
	line             int    // of the opening fence
	notRun           string // the reason of a "<!-- not run: ... -->" line right above it
}

var notRunRe = regexp.MustCompile(`^<!-- not run: (.+) -->$`)

func blocks(t *testing.T, rel string) []block {
	t.Helper()
	var out []block
	var cur *block
	prev := ""
	sc := bufio.NewScanner(strings.NewReader(read(t, rel)))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &block{page: rel, lang: strings.TrimPrefix(line, "```"), line: n}
			if m := notRunRe.FindStringSubmatch(prev); m != nil {
				cur.notRun = m[1]
			}
		case cur != nil && line == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		}
		prev = line
	}
	if cur != nil {
		t.Fatalf("%s:%d: code block never closed", rel, cur.line)
	}
	return out
}

// The README is the front door: short, and every page can be reached from
// it by following links.
func TestREADMEIsAFrontDoor(t *testing.T) {
	readme := read(t, "README.md")
	if n := strings.Count(readme, "\n"); n > 250 {
		t.Errorf("README.md has %d lines; keep it at most 250 and move the rest into docs/", n)
	}
	seen := map[string]bool{"README.md": true}
	queue := []string{"README.md"}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, m := range linkRe.FindAllStringSubmatch(read(t, p), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") || !strings.HasSuffix(target, ".md") {
				continue
			}
			dest := filepath.ToSlash(filepath.Join(filepath.Dir(p), target))
			if _, err := os.Stat(filepath.Join(root, dest)); err == nil && !seen[dest] {
				seen[dest] = true
				queue = append(queue, dest)
			}
		}
	}
	for _, p := range pages(t, true) {
		if !seen[p] {
			t.Errorf("%s cannot be reached from README.md by following links: link it from the page it belongs under (README.md's Documentation list for a new guide)", p)
		}
	}
}

// No page sends a reader to something they do not have: a folder outside
// the repository, or the material the project grew from.
func TestNoPageReachesOutsideTheRepository(t *testing.T) {
	bad := regexp.MustCompile(`(?i)\.\./shared|/work/|seed article|the seeds|seeds'|seed 0\d\d|bench-peers`)
	// The generated reports too: what their generators write is read as
	// much as any page.
	for _, p := range pages(t, true) {
		for i, line := range strings.Split(read(t, p), "\n") {
			if m := bad.FindString(line); m != "" {
				t.Errorf("%s:%d: %q points outside the repository: %s", p, i+1, m, line)
			}
		}
	}
}

var linkRe = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Every relative link resolves to a file or directory of the repository,
// and an anchor to a heading of the page it names.
func TestLinksResolve(t *testing.T) {
	for _, p := range pages(t, true) {
		text := read(t, p)
		for _, m := range linkRe.FindAllStringSubmatch(text, -1) {
			link := m[1]
			if strings.HasPrefix(link, "http://") || strings.HasPrefix(link, "https://") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			target, anchor, _ := strings.Cut(link, "#")
			dest := p
			if target != "" {
				dest = filepath.ToSlash(filepath.Join(filepath.Dir(p), target))
				if _, err := os.Stat(filepath.Join(root, dest)); err != nil {
					t.Errorf("%s: link %s: %s does not exist", p, link, dest)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(dest, ".md") && !slices.Contains(anchors(read(t, dest)), anchor) {
				t.Errorf("%s: link %s: %s has no heading #%s (it has %v)", p, link, dest, anchor, anchors(read(t, dest)))
			}
		}
	}
}

var docPathRe = regexp.MustCompile(`\bdocs/[A-Za-z0-9_/.-]+\.md\b`)

// What ghonce's own help and messages point at (a page under docs/) exists,
// and none of them sends a reader to a README section: the README is the
// front door, its sections are not a reference.
func TestHelpPointsAtPagesThatExist(t *testing.T) {
	pages, err := clidoc.Pages()
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range pages {
		if name == "README.md" {
			continue
		}
		for _, p := range docPathRe.FindAllString(string(b), -1) {
			if _, err := os.Stat(filepath.Join(root, p)); err != nil {
				t.Errorf("the help of %s points at %s, which does not exist", name, p)
			}
		}
		if strings.Contains(string(b), "README") {
			t.Errorf("the help of %s points at a README section; point at a page under docs/", name)
		}
	}
}

// anchors are the ids GitHub gives a page's headings.
func anchors(page string) []string {
	var out []string
	inCode := false
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, "```") {
			inCode = !inCode
		}
		if inCode || !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var b strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// The CLI reference is what the commands say today.
func TestCLIReferenceIsCurrent(t *testing.T) {
	want, err := clidoc.Pages()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "docs", "reference", "cli")
	have, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	var stale []string
	for _, p := range have {
		name := filepath.Base(p)
		if _, ok := want[name]; !ok {
			stale = append(stale, name+" (no such command any more)")
		}
	}
	for name, b := range want {
		got, err := os.ReadFile(filepath.Join(dir, name))
		switch {
		case err != nil:
			stale = append(stale, name+" (missing)")
		case !bytes.Equal(got, b):
			stale = append(stale, name+" (differs from the command's help)")
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("docs/reference/cli is stale; run `make docs` and commit the result:\n  %s", strings.Join(stale, "\n  "))
	}
}

// The generated sections (clidoc.GuideSections: the MCP tool tables, what
// `ghonce mcp` serves in its tools/list; the table of kinds; action.yml's
// command input and dispatch, from the kinds' Faces) are current.
func TestGeneratedGuideSectionsAreCurrent(t *testing.T) {
	want, err := clidoc.Guides(root)
	if err != nil {
		t.Fatal(err)
	}
	for p, b := range want {
		if got := read(t, p); got != string(b) {
			t.Errorf("%s: a generated section differs from what the code declares; run `make docs` and commit the result", p)
		}
	}
}

var fileFuncRe = regexp.MustCompile("`([A-Za-z0-9_./-]+\\.go):([A-Za-z_][A-Za-z0-9_]*(?:\\.[A-Za-z_][A-Za-z0-9_]*)?)`")

// Every file:function the architecture page names is declared in that file
// (Type.Method: a method of Type), so the walk cannot rot.
func TestArchitectureNamesExist(t *testing.T) {
	page := "docs/design/architecture.md"
	refs := fileFuncRe.FindAllStringSubmatch(read(t, page), -1)
	if len(refs) < 10 {
		t.Fatalf("%s names %d file:function steps; the walk of `ghonce pr create` should name each step", page, len(refs))
	}
	for _, m := range refs {
		file, name := m[1], m[2]
		recv, fn, isMethod := strings.Cut(name, ".")
		if !isMethod {
			recv, fn = "", name
		}
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, file), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("%s names %s:%s, but %s: %v", page, file, name, file, err)
			continue
		}
		if !declares(f, recv, fn) {
			t.Errorf("%s names %s:%s, which %s does not declare: update the walk", page, file, name, file)
		}
	}
}

// The package map names every package of the module: run
// `go list ./...` and each one is in the table.
func TestArchitectureMapsEveryPackage(t *testing.T) {
	page := read(t, "docs/design/architecture.md")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		if d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && p != root {
			return filepath.SkipDir
		}
		gofiles, err := filepath.Glob(filepath.Join(p, "*.go"))
		if err != nil || len(gofiles) == 0 || p == root {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if !strings.Contains(page, "`"+rel+"`") {
			t.Errorf("docs/design/architecture.md: the package map does not name `%s`", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func declares(f *ast.File, recv, name string) bool {
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != name {
			continue
		}
		if recv == "" {
			return fd.Recv == nil
		}
		if fd.Recv == nil || len(fd.Recv.List) == 0 {
			continue
		}
		typ := fd.Recv.List[0].Type
		if s, ok := typ.(*ast.StarExpr); ok {
			typ = s.X
		}
		if ix, ok := typ.(*ast.IndexExpr); ok {
			typ = ix.X
		}
		if id, ok := typ.(*ast.Ident); ok && id.Name == recv {
			return true
		}
	}
	return false
}

// Every Go snippet is code the compiler sees: its lines are, in order, the
// lines of a Go file of the module. A snippet that shows how to call
// ghonce is a function of docs/example_test.go, whose Examples run it; a
// snippet that shows ghonce's own code quotes its file verbatim.
func TestGoSnippetsAreCompiledCode(t *testing.T) {
	corpus := map[string][]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && p != root) {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".go") {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			corpus[p] = lines(string(b))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range pages(t, false) {
		for _, b := range blocks(t, p) {
			if b.lang != "go" {
				continue
			}
			n++
			want := lines(b.text)
			found := false
			for _, src := range corpus {
				if containsRun(src, want) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("%s:%d: this Go snippet is not code of the module: make it a function of docs/example_test.go that an Example runs, or quote ghonce's own file verbatim", b.page, b.line)
			}
		}
	}
	if n == 0 {
		t.Fatal("no Go snippets found")
	}
}

// lines are the trimmed, non-blank lines of s.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func containsRun(hay, run []string) bool {
	for i := 0; i+len(run) <= len(hay); i++ {
		if slices.Equal(hay[i:i+len(run)], run) {
			return true
		}
	}
	return false
}

// Every JSON example parses: one or more values, as a stream.
func TestJSONExamplesParse(t *testing.T) {
	for _, p := range pages(t, false) {
		for _, b := range blocks(t, p) {
			if b.lang != "json" {
				continue
			}
			dec := json.NewDecoder(strings.NewReader(b.text))
			for {
				var v any
				err := dec.Decode(&v)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Errorf("%s:%d: JSON example does not parse: %v", b.page, b.line, err)
					break
				}
			}
		}
	}
}

const (
	docLogin = "agent-bot"
	docToken = "ghp_docsTESTtoken_0000"
)

// newWorld is what the recipes run against: the fake GitHub with o/r
// (main, my-branch and fix-42 pushed, issue 42 open), a working directory
// with the files the recipes name, and the environment of a runner.
func newWorld(t *testing.T) (*fixtures.Server, string, []string) {
	t.Helper()
	gh := fixtures.NewServer(fixtures.Options{})
	t.Cleanup(gh.Close)
	gh.AddUser(docLogin, docToken)
	gh.AddRepo("o", "r", "main")
	gh.SetRef("o", "r", "my-branch", gh.AddCommit("o", "r", "main"))
	gh.SetRef("o", "r", "fix-42", gh.AddCommit("o", "r", "main"))
	for n := 0; n < 42; {
		n = gh.SeedIssue("o", "r", "reporter", fixtures.SeedIssue{Title: "an issue"})
	}
	work := t.TempDir()
	files := map[string]string{
		"body.md":         "Fixes #42.\n",
		"CHANGELOG.md":    "# Changelog\n\n- Fix #42.\n",
		"notify-slack.sh": "#!/bin/sh\necho \"$GHONCE_KEY\" >> sent.log\n",
		"sent.sh":         "#!/bin/sh\ntest -f sent.log && grep -q \"$1\" sent.log\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(work, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	state := t.TempDir()
	env := append(harness.CleanEnv(),
		"GH_TOKEN="+docToken, "GITHUB_API_URL="+gh.URL(), "GH_REPO=o/r",
		"HOME="+state, "XDG_STATE_HOME="+state, "GHONCE_LEDGER="+filepath.Join(state, "ledger.db"))
	return gh, work, env
}

// counts is what GitHub holds in the world: what a duplicate would change.
func counts(gh *fixtures.Server) string {
	return fmt.Sprintf("pull requests %d, issues %d, comments on #42 %d, branches %d",
		len(gh.PullRequests("o", "r")), len(gh.Issues("o", "r")), len(gh.Comments("o", "r", 42)), len(gh.Branches("o", "r")))
}

// Every shell recipe runs, against the fake GitHub, with bash -e: each
// page's recipes in order in one world. Then they run again, as a
// restarted agent would, and GitHub holds nothing new: the promise the
// pages make.
func TestShellRecipesRun(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the ghonce binary")
	}
	for _, tool := range []string{"bash", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("the recipes need %s", tool)
			}
			t.Skipf("SKIP: the recipes need %s, which is not installed", tool)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	mod, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	binDir := t.TempDir()
	if _, err := harness.Build(ctx, mod, binDir); err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, p := range pages(t, false) {
		if generated[p] {
			continue // the generators' own commands: make bench, make reliability
		}
		var recipes []block
		for _, b := range blocks(t, p) {
			if b.lang == "sh" && b.notRun == "" {
				recipes = append(recipes, b)
			}
		}
		if len(recipes) == 0 {
			continue
		}
		t.Run(p, func(t *testing.T) {
			gh, work, env := newWorld(t)
			env = append(env, "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
			// One shell per page, as a reader types them: a variable an
			// earlier block exports is set in the next.
			var script strings.Builder
			script.WriteString("ghonce init >/dev/null 2>&1\n") // the ledger a set-up agent has
			for _, b := range recipes {
				fmt.Fprintf(&script, "# %s:%d\n%s", b.page, b.line, b.text)
			}
			run := func(round string) {
				cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", "trap 'echo \"recipe failed at script line $LINENO\" >&2' ERR\n"+script.String())
				cmd.Dir, cmd.Env = work, env
				// The output goes to a file, not a pipe: a server a recipe
				// starts with & (docs/guide/service.md) inherits it, and
				// when a later line fails before the one that stops the
				// server, Run would wait, past the shell's exit and past
				// ctx, for the server to close a pipe it never closes.
				f, err := os.CreateTemp(t.TempDir(), "out")
				if err != nil {
					t.Fatal(err)
				}
				cmd.Stdout, cmd.Stderr = f, f
				ownGroup(cmd)
				runErr := cmd.Run()
				killGroup(cmd)
				f.Close()
				b, err := os.ReadFile(f.Name())
				if err != nil {
					t.Fatal(err)
				}
				out := string(b)
				if runErr != nil {
					t.Fatalf("%s's recipes (%s): %v\n%s\nthe script, line 1 being the trap:\n%s", p, round, runErr, out, numbered(script.String()))
				}
				if strings.Contains(out, docToken) {
					t.Fatalf("%s's recipes: the token appears in the output", p)
				}
				t.Logf("%s:\n%s", round, out)
			}
			run("first run")
			after := counts(gh)
			// Every page acts for one task: one pull request, one comment
			// on #42 at most, however often a recipe retries.
			if n := len(gh.PullRequests("o", "r")); n > 1 {
				t.Errorf("%s's recipes opened %d pull requests for one task", p, n)
			}
			if n := len(gh.Comments("o", "r", 42)); n > 1 {
				t.Errorf("%s's recipes left %d comments on #42 for one task and step", p, n)
			}
			run("run again")
			if again := counts(gh); again != after {
				t.Errorf("running %s's recipes again changed GitHub: %s, then %s", p, after, again)
			}
			ran += len(recipes)
		})
	}
	if ran == 0 {
		t.Fatal("no shell recipes ran")
	}
}

// The JSON reference names every field a verb prints with --json.
func TestJSONReferenceNamesEveryField(t *testing.T) {
	_, _, env := newWorld(t)
	getenv := func(k string) string {
		for _, kv := range env {
			if name, v, ok := strings.Cut(kv, "="); ok && name == k {
				return v
			}
		}
		return ""
	}
	ref := read(t, "docs/reference/json.md")
	now := time.Now
	run := func(args ...string) map[string]any {
		var out, errOut bytes.Buffer
		sys := cli.IO{In: strings.NewReader(""), Out: &out, Err: &errOut, Getenv: getenv, Now: now,
			Executable: func() (string, error) { return "", fmt.Errorf("no executable in process") }}
		cli.Main(context.Background(), append([]string{"--json"}, args...), sys)
		var v map[string]any
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatalf("ghonce %s --json: stdout is not one JSON object: %v\n%s%s", strings.Join(args, " "), err, out.String(), errOut.String())
		}
		return v
	}
	objs := map[string]map[string]any{}
	objs["init"] = run("init")
	key := run("pr", "create", "--repo", "o/r", "--task", "T-1", "--base", "main", "--head", "my-branch", "--title", "Fix", "--body", "x")["key"].(string)
	objs["pr create (payload changed)"] = run("pr", "create", "--repo", "o/r", "--task", "T-1", "--base", "main", "--head", "fix-42", "--title", "Fix!", "--body", "y")
	objs["issue create"] = run("issue", "create", "--repo", "o/r", "--task", "T-1", "--title", "Follow-up", "--body", "x")
	objs["issue comment"] = run("issue", "comment", "42", "--repo", "o/r", "--task", "T-1", "--body", "x")
	objs["branch create"] = run("branch", "create", "b1", "--repo", "o/r", "--task", "T-1", "--from", "main")
	objs["file put"] = run("file", "put", "a.txt", "--repo", "o/r", "--task", "T-1", "--branch", "my-branch", "-m", "add", "--content", "x")
	objs["exec"] = run("exec", "--task", "T-1", "--step", "s", "--", "true")
	objs["status"] = run("status")
	objs["status KEY"] = run("status", key)
	objs["reconcile"] = run("reconcile")
	objs["resolve"] = run("resolve", key, "--done", "--note", "checked")
	objs["key"] = run("key", "--task", "T-1", "--step", "s", "--kind", "exec")
	objs["branch name"] = run("branch", "name", "--task", "T-1")
	objs["version"] = run("version")
	objs["audit"] = run("audit", "--repo", "o/r")
	now = func() time.Time { return time.Now().Add(48 * time.Hour) }
	objs["labels prune"] = run("labels", "prune", "--repo", "o/r", "--older-than", "1d", "--dry-run")
	if len(objs["labels prune"]["labels"].([]any)) == 0 {
		t.Errorf("labels prune --dry-run listed no labels: %v", objs["labels prune"])
	}
	now = time.Now
	objs["usage error"] = run("key", "--no-such-flag")
	objs["refused"] = run("issue", "comment", "4242", "--repo", "o/r", "--task", "T-1", "--body", "x")
	objs["stale"] = run("status", "--stale", "0s")
	// The audit's listings are the kinds' (Audit.Listing), named in the
	// audit guide's generated table, which json.md points at.
	guide := read(t, "docs/guide/audit.md")
	listed, _ := objs["audit"]["listed"].(map[string]any)
	for l := range listed {
		if !strings.Contains(guide, "`"+l+"`") {
			t.Errorf("ghonce audit --json lists %q, which docs/guide/audit.md's table does not name", l)
		}
	}
	if len(listed) == 0 || !strings.Contains(ref, "guide/audit.md") {
		t.Errorf("ghonce audit --json listed %v; want listings, and json.md pointing at the audit guide for them", listed)
	}
	objs["audit"]["listed"] = map[string]any{}
	for what, v := range objs {
		for _, field := range fields(v) {
			if !strings.Contains(ref, "`"+field+"`") && !strings.Contains(ref, "."+field+"`") { // `error.message`
				t.Errorf("ghonce %s --json prints %q, which docs/reference/json.md does not name", what, field)
			}
		}
	}
}

// fields are the object keys in v, at any depth (a map of counts by status
// included).
func fields(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			out = append(out, k)
			out = append(out, fields(x)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, fields(x)...)
		}
	}
	return out
}

func numbered(s string) string {
	var b strings.Builder
	for i, l := range strings.Split(s, "\n") {
		fmt.Fprintf(&b, "%3d  %s\n", i+2, l)
	}
	return b.String()
}

// The library reads no environment (docs/guide/library.md): when GitHub
// cannot be reached, the error names the setting of the API root in Go as
// well as the CLI's variable.
func TestUnreachableGitHubNamesTheLibrarysSetting(t *testing.T) {
	err := error(&outcome.NotSentError{Key: "gk1_x", Err: errors.New(`Get "https://ghe.example/api/v3/user": dial tcp: connection refused`)})
	for _, want := range []string{"nothing was created", "ghcheck.Options.BaseURL", "GITHUB_API_URL"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q:\n%v", want, err)
		}
	}
}

// Every workflow snippet is YAML, and where it uses the action it passes
// only inputs action.yml declares and reads only outputs it sets.
func TestWorkflowSnippetsMatchActionYAML(t *testing.T) {
	var action struct {
		Inputs  map[string]any `yaml:"inputs"`
		Outputs map[string]any `yaml:"outputs"`
	}
	if err := yaml.Unmarshal([]byte(read(t, "action.yml")), &action); err != nil {
		t.Fatalf("action.yml: %v", err)
	}
	guide := read(t, "docs/guide/github-actions.md")
	for what, names := range map[string]map[string]any{"input": action.Inputs, "output": action.Outputs} {
		for name := range names {
			if !strings.Contains(guide, "`"+name+"`") {
				t.Errorf("action.yml's %s %q is not named in docs/guide/github-actions.md", what, name)
			}
		}
	}
	outputRe := regexp.MustCompile(`steps\.([A-Za-z0-9_-]+)\.outputs\.([A-Za-z0-9_-]+)`)
	n := 0
	for _, p := range pages(t, false) {
		for _, b := range blocks(t, p) {
			if b.lang != "yaml" {
				continue
			}
			var doc any // a workflow, a job, or a list of steps
			if err := yaml.Unmarshal([]byte(b.text), &doc); err != nil {
				t.Errorf("%s:%d: YAML does not parse: %v", b.page, b.line, err)
				continue
			}
			ours := map[string]bool{}
			for _, step := range actionSteps(doc) {
				n++
				if id, ok := step["id"].(string); ok {
					ours[id] = true
				}
				with, _ := step["with"].(map[string]any)
				for in := range with {
					if _, ok := action.Inputs[in]; !ok {
						t.Errorf("%s:%d: input %q is not one of action.yml's inputs", b.page, b.line, in)
					}
				}
			}
			for _, m := range outputRe.FindAllStringSubmatch(b.text, -1) {
				if _, ok := action.Outputs[m[2]]; ours[m[1]] && !ok {
					t.Errorf("%s:%d: output %q is not one of action.yml's outputs", b.page, b.line, m[2])
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no workflow snippet uses the action")
	}
}

var envNameRe = regexp.MustCompile(`^(GHONCE|GITHUB|GH|RUNNER|XDG|PG)_[A-Z0-9_]+$`)

// Every environment variable ghonce's code names is on the configuration
// page. Test machinery (fakes, harnesses, crash points, the benchmarks'
// generators) is not ghonce's interface and is left out.
func TestConfigurationNamesEveryVariable(t *testing.T) {
	page := read(t, "docs/reference/configuration.md")
	machinery := regexp.MustCompile(`^(docs|fixtures|tools|tests|internal/crashpoint|ledger/ledgertest)(/|$)|/(pgtest|sqlitetest)(/|$)`)
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." || machinery.MatchString(rel) || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			name := strings.Trim(lit.Value, "`\"")
			if envNameRe.MatchString(name) && !regexp.MustCompile(`\b`+name+`\b`).MatchString(page) {
				t.Errorf("%s names the environment variable %s, which docs/reference/configuration.md does not", rel, name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// actionSteps are the steps anywhere in doc that use the ghonce action.
func actionSteps(doc any) []map[string]any {
	var out []map[string]any
	switch v := doc.(type) {
	case map[string]any:
		if uses, ok := v["uses"].(string); ok && strings.HasPrefix(uses, "ghonce/ghonce@") {
			out = append(out, v)
		}
		for _, x := range v {
			out = append(out, actionSteps(x)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, actionSteps(x)...)
		}
	}
	return out
}

// The Go modules nested in this one (the engine adapters, which keep their
// SDKs out of the core module) are outside `go test ./...` and `go vet ./...`
// at the root, and so are the Examples that the snippets of their pages
// come from: `make test` runs each adapter module's tests from its
// directory (ADAPTERS in the Makefile). A nested module elsewhere, with Go
// code of its own, would be tested by nothing.
func TestNestedModulesAreTested(t *testing.T) {
	makefile := read(t, "Makefile")
	for _, want := range []string{
		"ADAPTERS := $(patsubst %/go.mod,%,$(wildcard adapters/*/go.mod))",
		"for m in $(ADAPTERS)",
		"$(GO) test -race -count=1",
	} {
		if !strings.Contains(makefile, want) {
			t.Fatalf("the Makefile no longer has %q: make test must run each adapter module's tests", want)
		}
	}
	adapters := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && p != root) {
			return filepath.SkipDir
		}
		if d.IsDir() || d.Name() != "go.mod" || filepath.Dir(p) == root {
			return nil
		}
		dir, _ := filepath.Rel(root, filepath.Dir(p))
		dir = filepath.ToSlash(dir)
		if path.Dir(dir) == "adapters" {
			adapters++
			if tests, _ := filepath.Glob(filepath.Join(filepath.Dir(p), "*_test.go")); len(tests) == 0 {
				t.Errorf("%s: an adapter module with no tests", dir)
			}
			return nil
		}
		if gofiles, _ := filepath.Glob(filepath.Join(filepath.Dir(p), "*.go")); len(gofiles) > 0 {
			t.Errorf("%s is a Go module with code of its own outside adapters/: `make test` does not run its tests; put it under adapters/ or test it from the Makefile", dir)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if adapters == 0 {
		t.Fatal("no adapter module found under adapters/")
	}
}

// TestExamplesNameOneActionRef: every `uses: ghonce/ghonce@REF` in the
// README, the guides and the example workflows names one ref, and a ref
// that resolves: main (today, before any release exists; issue 28: @v1 did
// not), or one the release path makes, read from
// .github/workflows/release.yml: a vX.Y.Z tag it is triggered by, or the
// major tag (v1) it moves to each release. So a workflow pasted from any of
// them runs, and switching the docs to @v1 passes only while release.yml
// moves v1.
func TestExamplesNameOneActionRef(t *testing.T) {
	re := regexp.MustCompile(`uses: ghonce/ghonce@([^\s"'` + "`" + `]+)`)
	var files []string
	for _, glob := range []string{"../README.md", "guide/*.md", "examples/workflows/*.yml"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	release := releaseRefs(t)
	refs := map[string][]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			refs[m[1]] = append(refs[m[1]], f)
		}
	}
	if n := len(slices.Concat(slices.Collect(maps.Values(refs))...)); n < 3 {
		t.Fatalf("found %d uses of ghonce/ghonce in the docs, want the README's, the guide's and the examples'", n)
	}
	for ref, in := range refs {
		if ref != "main" && !release(ref) {
			t.Errorf("%s: uses ghonce/ghonce@%s, which neither exists today (main) nor is a tag .github/workflows/release.yml makes (vX.Y.Z, or the major tag it moves)", strings.Join(slices.Compact(in), ", "), ref)
		}
	}
	if len(refs) > 1 {
		t.Errorf("the docs name %d refs of ghonce/ghonce (%v): name one everywhere, so that a move to a release tag moves every example", len(refs), slices.Sorted(maps.Keys(refs)))
	}
}

// releaseRefs reads .github/workflows/release.yml and returns whether it
// makes ref: a version tag that triggers it, or the major tag it moves to
// each release (its "Move the major tag" step). It also checks that the
// assets the release publishes are the ones action.yml fetches at a release
// tag, for every runner the action supports.
func releaseRefs(t *testing.T) func(ref string) bool {
	t.Helper()
	var wf struct {
		On struct {
			Push struct {
				Tags []string `yaml:"tags"`
			} `yaml:"push"`
		} `yaml:"on"`
		Jobs map[string]struct {
			Strategy struct {
				Matrix struct {
					Include []map[string]string `yaml:"include"`
				} `yaml:"matrix"`
			} `yaml:"strategy"`
			Steps []struct {
				Name string `yaml:"name"`
				Run  string `yaml:"run"`
			} `yaml:"steps"`
		} `yaml:"jobs"`
	}
	release := read(t, ".github/workflows/release.yml")
	if err := yaml.Unmarshal([]byte(release), &wf); err != nil {
		t.Fatalf("parse release.yml: %v", err)
	}
	// A tag filter (GitHub's glob: [0-9]+ is one or more digits, a dot a
	// dot) as a regular expression; release.yml uses no other special
	// characters.
	var triggers []*regexp.Regexp
	for _, g := range wf.On.Push.Tags {
		triggers = append(triggers, regexp.MustCompile("^"+strings.ReplaceAll(g, ".", `\.`)+"$"))
	}
	if len(triggers) == 0 || !slices.ContainsFunc(triggers, func(r *regexp.Regexp) bool { return r.MatchString("v1.2.3") }) {
		t.Fatalf("release.yml is not triggered by a version tag (v1.2.3): on.push.tags %q", wf.On.Push.Tags)
	}
	movesMajor := false
	var platforms []string
	for _, j := range wf.Jobs {
		for _, inc := range j.Strategy.Matrix.Include {
			platforms = append(platforms, inc["os"]+"_"+inc["arch"])
		}
		for _, st := range j.Steps {
			if strings.Contains(st.Run, `major="${TAG%%.*}"`) && strings.Contains(st.Run, `git push -f origin "refs/tags/$major"`) {
				movesMajor = true
			}
		}
	}
	if !movesMajor {
		t.Error("release.yml no longer moves the major tag (v1) to each release")
	}
	// What the release publishes and attests, and what the action fetches
	// and verifies at a tag.
	action := read(t, "action.yml")
	for _, want := range []string{`ghonce_${TAG}_${os}_${arch}.tar.gz`, "gh attestation verify", `--signer-workflow "$REPO/.github/workflows/release.yml"`} {
		if !strings.Contains(action, want) {
			t.Errorf("action.yml no longer fetches and verifies %s at a release tag", want)
		}
	}
	for _, want := range []string{`ghonce_${TAG}_${OS}_${ARCH}.tar.gz`, "actions/attest-build-provenance@", "subject-path: dist/ghonce_*.tar.gz", "attestations: write", "id-token: write"} {
		if !strings.Contains(release, want) {
			t.Errorf("release.yml no longer publishes or attests %s, which action.yml fetches and verifies", want)
		}
	}
	for _, p := range []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64"} {
		if !slices.Contains(platforms, p) {
			t.Errorf("release.yml builds no %s binary (builds %v): the action on such a runner would build from source", p, platforms)
		}
	}
	major := regexp.MustCompile(`^v[0-9]+$`)
	return func(ref string) bool {
		if movesMajor && major.MatchString(ref) {
			return true
		}
		return slices.ContainsFunc(triggers, func(r *regexp.Regexp) bool { return r.MatchString(ref) })
	}
}

var toolNameRe = regexp.MustCompile("`([a-z_]+)`")

// The README's "same names and argument schemas as github-mcp-server" is
// true of what is served: every tool it names there, and every write tool
// ghonce serves, is one `ghonce mcp` serves and one the pinned
// github-mcp-server lists (by default, or with its granular issue tools),
// with the same input schema but for ghonce's task and step. It names some
// as examples and links the MCP guide, whose generated table has them all.
func TestReadmeNamesTheToolsGitHubMCPServerServes(t *testing.T) {
	readme := read(t, "README.md")
	i := strings.Index(readme, "under the same names and argument schemas")
	j := strings.Index(readme[max(i, 0):], "through the engine")
	if i < 0 || j < 0 {
		t.Fatal("README.md no longer says which tools ghonce mcp serves under github-mcp-server's names (\"under the same names and argument schemas ... through the engine\"); update this test with it")
	}
	var named []string
	for _, m := range toolNameRe.FindAllStringSubmatch(readme[i:i+j], -1) {
		named = append(named, m[1])
	}
	served, err := mcp.ServedTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ours := map[string]*sdkTool{}
	for _, tl := range served {
		ours[tl.Name] = &sdkTool{Schema: tl.InputSchema, ReadOnly: tl.Annotations != nil && tl.Annotations.ReadOnlyHint}
	}
	for _, n := range named {
		if ours[n] == nil {
			t.Errorf("README.md names %s, which ghonce mcp does not serve", n)
		}
	}
	if !strings.Contains(readme[i:i+j], "(docs/guide/mcp.md)") {
		t.Error("README.md's sentence of the tools served under github-mcp-server's names does not link the MCP guide, whose generated table names every one")
	}
	for n, tl := range ours { // those it names, as examples, and every write tool
		if !tl.ReadOnly && !slices.Contains(named, n) {
			named = append(named, n)
		}
	}

	bin, err := harness.GitHubMCPServer()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v; CI=true, so this test must run", err)
		}
		t.Skipf("SKIPPED: %v; README.md's names were not checked against github-mcp-server's tools/list", err)
	}
	theirs := map[string]any{}
	for _, flags := range [][]string{nil, {"--features=issues_granular"}} {
		for n, s := range listGitHubMCPServer(t, bin, flags...) {
			if _, ok := theirs[n]; !ok {
				theirs[n] = s
			}
		}
	}
	for _, n := range named {
		s, ok := theirs[n]
		if !ok {
			t.Errorf("README.md names %s as github-mcp-server's, which its tools/list (%s) does not have", n, bin)
			continue
		}
		if ours[n] == nil {
			continue
		}
		var g map[string]any
		b, _ := json.Marshal(ours[n].Schema)
		_ = json.Unmarshal(b, &g)
		props, _ := g["properties"].(map[string]any)
		delete(props, "task")
		delete(props, "step")
		if gj, tj := mustJSON(t, g), mustJSON(t, s); gj != tj {
			t.Errorf("%s: ghonce's input schema (without task and step) is not github-mcp-server's:\n%s\n%s", n, gj, tj)
		}
	}
}

type sdkTool struct {
	Schema   any
	ReadOnly bool
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	_ = json.Unmarshal(b, &x)
	b, _ = json.Marshal(x) // map keys sorted
	return string(b)
}

// listGitHubMCPServer is the input schemas of the tools github-mcp-server
// lists, by name; listing needs no GitHub.
func listGitHubMCPServer(t *testing.T, bin string, flags ...string) map[string]any {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"stdio"}, flags...)...)
	cmd.Env = append(harness.CleanEnv(), "GITHUB_PERSONAL_ACCESS_TOKEN=not-a-token")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "docs", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	out := map[string]any{}
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		out[tl.Name] = tl.InputSchema
	}
	return out
}

// The MCP guide's list of a write tool's structuredContent fields is the
// served outputSchema's.
func TestMCPGuideNamesEveryOutputField(t *testing.T) {
	page := strings.Join(strings.Fields(read(t, "docs/guide/mcp.md")), " ")
	const lead = "`structuredContent` with the fields of `--json` ("
	i := strings.Index(page, lead)
	if i < 0 {
		t.Fatalf("docs/guide/mcp.md no longer lists the fields of structuredContent after %q; update this test with it", lead)
	}
	rest := page[i+len(lead):]
	named := strings.Split(rest[:strings.Index(rest, ")")], ", ")
	served, err := mcp.ServedTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range served {
		if tl.Name != "create_pull_request" {
			continue
		}
		var schema struct {
			Properties map[string]any `json:"properties"`
		}
		b, _ := json.Marshal(tl.OutputSchema)
		if err := json.Unmarshal(b, &schema); err != nil {
			t.Fatal(err)
		}
		var want []string
		for f := range schema.Properties {
			want = append(want, f)
		}
		slices.Sort(want)
		got := slices.Sorted(slices.Values(named))
		if !slices.Equal(got, want) {
			t.Errorf("docs/guide/mcp.md lists the structuredContent fields %v; the served outputSchema has %v", got, want)
		}
		return
	}
	t.Fatal("ghonce mcp serves no create_pull_request")
}

// node24Since is, per action of GitHub's own that the action, the release
// workflow or an example uses, its first major version whose action.yml
// runs on node24 (or is composite over ones that do): GitHub's runners
// dropped node20 on 2026-09-16. An action not listed here is a test error
// until its node24 major is looked up and added.
var node24Since = map[string]int{
	"actions/checkout": 5, "actions/setup-go": 6, "actions/cache": 5, "actions/upload-artifact": 6,
	"actions/download-artifact": 7, "actions/attest-build-provenance": 3,
}

// Every actions/* that action.yml, .github/workflows, the example
// workflows and the pages' snippets use is at a major that runs on node24.
func TestActionsRunOnNode24(t *testing.T) {
	re := regexp.MustCompile(`uses:\s*(actions/[A-Za-z0-9_.-]+)@v(\d+)\b`)
	files := []string{"../action.yml", "../README.md"}
	for _, glob := range []string{"../.github/workflows/*.yml", "examples/workflows/*.yml", "guide/*.md"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	uses := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			uses++
			since, ok := node24Since[m[1]]
			if !ok {
				t.Errorf("%s uses %s, whose first node24 major this test does not know: look it up (its action.yml, runs.using) and add it", f, m[1])
				continue
			}
			if v, _ := strconv.Atoi(m[2]); v < since {
				t.Errorf("%s uses %s@v%s, which runs on node20 or older: use v%d or later", f, m[1], m[2], since)
			}
		}
	}
	if uses < 8 {
		t.Fatalf("found %d uses of actions/*, want the action's, the release workflow's and the examples'", uses)
	}
}
