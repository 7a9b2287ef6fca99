package reliability

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/fakegithub"
	registry "github.com/ghonce/ghonce/kinds"
	_ "github.com/ghonce/ghonce/offgithub" // registers exec and tool-call, which the matrix runs through the binary
	"github.com/ghonce/ghonce/taskkey"
)

// kind describes one kind of side effect to the matrix: how to ask ghonce
// for it, which request creates it, and how to count and verify what
// exists.
type kind struct {
	name string
	// step is ghonce's default step for it, spelt out rather than read
	// from the kind (reconcile.DefaultStepper): the matrix finds artifacts
	// by a key it derives itself, so a changed default step, which would
	// orphan every earlier key, shows as lost artifacts.
	step   string
	github bool // false for guarded commands
	// githubUnique: GitHub itself keeps one of it when racers have
	// separate ledgers (one open PR per head, one ref, one file content).
	githubUnique bool
	// variantOf names the registered kind a variant row runs (exec-nocheck
	// is exec without --check): variants run in the kill-point parts only.
	variantOf string
	// args is the command line of attempt i of trial t (without --ledger,
	// --repo, --task and --json, which run adds).
	args func(w *world, t *trial, i int) []string
	// stdinArgs is the same with the body (or content) read from standard
	// input, which holds the process until the matrix releases it; nil when
	// the kind reads nothing there.
	stdinArgs func(w *world, t *trial) (args []string, stdin string)
	target    func(t *trial) string
	// isCreate matches the request that makes the artifact, and isCreated
	// the commit it stores.
	isCreate  func(w *world, t *trial, method, path string) bool
	isCreated func(w *world, t *trial, c *fixtures.Commit) bool
	// count returns how many artifacts exist for t's key; commits are the
	// world's commits since the trial began.
	count func(w *world, t *trial, commits []fixtures.Commit) int
	// verify says what is wrong with the artifact a final exit 0 reported.
	verify func(w *world, t *trial, r *result) error
	// inspect, when set, notes something about a verified artifact that is
	// neither a duplicate nor a loss ("" for nothing).
	inspect func(w *world, t *trial, r *result) string
}

// trial is one key: one task, its attempts, its ledger.
type trial struct {
	k      *kind
	task   string
	ledger string
	// newHeads: each PR attempt pushes and names a new head branch, as an
	// agent that restarts with a new branch does.
	newHeads bool
	// labels are added to PRs and issues.
	labels []string
	// body, when set, is the body of every attempt (a fault's near-limit body).
	body string
	// commitMark is the world's commit count when the trial began.
	commitMark int
	// after, when set, runs after each attempt i.
	after func(i int, o *out) error
	// defaultSettle: the runs get ghonce's default --settle, not
	// matrixSettle (a row about the in-flight window itself).
	defaultSettle bool
}

func (t *trial) key() string {
	repoName := owner + "/" + repo
	if !t.k.github {
		repoName = ""
	}
	step := t.k.step
	return taskkey.Key(taskkey.Identity{Task: t.task, Step: step, Kind: kindOf(t.k), Repo: repoName, Target: t.k.target(t)})
}

func kindOf(k *kind) string {
	if k.variantOf != "" {
		return k.variantOf
	}
	return k.name
}

func (t *trial) branchName() string { return "ghonce-matrix/" + slug(t.task) }
func (t *trial) filePath() string   { return "notes/" + slug(t.task) + ".md" }
func (t *trial) content() []byte    { return []byte("Notes for " + t.task + "\n") }
func (t *trial) tag() string        { return "matrix-" + slug(t.task) }

// label is the trial's own label: its labeled events are its adds.
func (t *trial) label() string {
	l := []rune("m-" + slug(t.task))
	return string(l[:min(len(l), taskkey.MaxLabel)])
}

func (t *trial) head(w *world, i int) string {
	h := "agent/" + slug(t.task)
	if t.newHeads {
		h += "-attempt-" + strconv.Itoa(i+1)
	}
	if _, ok := w.fake.Branch(owner, repo, h); !ok {
		w.fake.SetRef(owner, repo, h, w.fake.AddCommit(owner, repo, "main"))
	}
	return h
}

// wording is what a restarted model writes on attempt i: the text changes
// ("(retry)", "again"), the key does not. A run that takes over from a
// killed one is its retry whatever its words; after a run that answered,
// another text gets the facts (exit 7) under the default --on-change auto
// (docs/design/same-act.md).
func (t *trial) wording(i int) (title, body string) {
	if t.body != "" {
		return fmt.Sprintf("Fix for %s", t.task), t.body
	}
	again := [...]string{"", " (retry)", ", again", " (retrying)"}[i%4]
	return "Fix for " + t.task + again,
		"The agent's wording for " + t.task + again + ".\n\nIt fixes the bug."
}

// bodyArgs passes body as --body, or, when it is a fault's long body (too
// long for one argument), through a file as an agent would.
func (t *trial) bodyArgs(w *world, body string) []string {
	if len(body) < 32<<10 {
		return []string{"--body", body}
	}
	path := filepath.Join(w.dir, "bodies", slug(t.task)+".md")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err == nil {
		_ = os.WriteFile(path, []byte(body), 0o644)
	}
	return []string{"--body-file", path}
}

func slug(s string) string { return taskkey.Slug(s, 60) }

func repoPath(rest string) string { return "/repos/" + owner + "/" + repo + rest }

func isMethodPath(method, path string) func(string, string) bool {
	return func(m, p string) bool { return m == method && strings.EqualFold(p, path) }
}

// ours counts the items authored by the agent that carry key's marker (a
// stranger's look-alike is not ghonce's artifact).
func ours[T any](items []T, body, author func(T) string, key string) int {
	n := 0
	for _, it := range items {
		if taskkey.HasMarker(body(it), key) && author(it) == login {
			n++
		}
	}
	return n
}

// kindTable is the matrix's one list of kinds, in the order of its tables.
// Every part reads it: the kill points run every row; the randomised loop,
// the races and the repository ledger's faults every row but a variant; the
// GitHub faults every row on GitHub. A kind registered in reconcile or
// offgithub has a row here or a reason in notRun (TestEveryKindHasARow).
var kindTable = []*kind{
	{
		name: "pr", step: "pr-create", github: true, githubUnique: true,
		args: func(w *world, t *trial, i int) []string {
			title, body := t.wording(i)
			a := append([]string{"pr", "create", "--base", "main", "--head", t.head(w, i), "--title", title}, t.bodyArgs(w, body)...)
			for _, l := range t.labels {
				a = append(a, "--label", l)
			}
			return a
		},
		stdinArgs: func(w *world, t *trial) ([]string, string) {
			title, body := t.wording(0)
			return []string{"pr", "create", "--base", "main", "--head", t.head(w, 0), "--title", title, "--body-file", "-"}, body
		},
		target:   func(*trial) string { return "main" },
		isCreate: func(_ *world, _ *trial, m, p string) bool { return isMethodPath("POST", repoPath("/pulls"))(m, p) },
		isCreated: func(_ *world, _ *trial, c *fixtures.Commit) bool {
			return c.Kind == fakegithub.KindPull && c.Method == "POST"
		},
		count: func(w *world, t *trial, _ []fixtures.Commit) int {
			return ours(w.fake.PullRequests(owner, repo), func(p fakegithub.PR) string { return p.Body }, func(p fakegithub.PR) string { return p.Author }, t.key())
		},
		verify: func(w *world, t *trial, r *result) error {
			for _, p := range w.fake.PullRequests(owner, repo) {
				if p.Number == r.Number {
					if !taskkey.HasMarker(p.Body, t.key()) || p.Author != login {
						return fmt.Errorf("reported PR #%d is not ours for the key", r.Number)
					}
					return nil
				}
			}
			return fmt.Errorf("reported PR #%d does not exist", r.Number)
		},
		inspect: func(w *world, t *trial, r *result) string {
			for _, p := range w.fake.PullRequests(owner, repo) {
				if p.Number == r.Number && !slices.ContainsFunc(p.Labels, func(l string) bool { return strings.EqualFold(l, taskkey.Label(t.key())) }) {
					return "PR left without its labels"
				}
			}
			return ""
		},
	},
	{
		name: "issue", step: "issue-create", github: true,
		args: func(w *world, t *trial, i int) []string {
			title, body := t.wording(i)
			a := append([]string{"issue", "create", "--title", title}, t.bodyArgs(w, body)...)
			for _, l := range t.labels {
				a = append(a, "--label", l)
			}
			return a
		},
		stdinArgs: func(w *world, t *trial) ([]string, string) {
			title, body := t.wording(0)
			return []string{"issue", "create", "--title", title, "--body-file", "-"}, body
		},
		target:   func(*trial) string { return "" },
		isCreate: func(_ *world, _ *trial, m, p string) bool { return isMethodPath("POST", repoPath("/issues"))(m, p) },
		isCreated: func(_ *world, _ *trial, c *fixtures.Commit) bool {
			return c.Kind == fakegithub.KindIssue && c.Method == "POST"
		},
		count: func(w *world, t *trial, _ []fixtures.Commit) int {
			return ours(w.fake.Issues(owner, repo), func(i fakegithub.Issue) string { return i.Body }, func(i fakegithub.Issue) string { return i.Author }, t.key())
		},
		verify: func(w *world, t *trial, r *result) error {
			for _, is := range w.fake.Issues(owner, repo) {
				if is.Number == r.Number {
					if !taskkey.HasMarker(is.Body, t.key()) || is.Author != login {
						return fmt.Errorf("reported issue #%d is not ours for the key", r.Number)
					}
					return nil
				}
			}
			return fmt.Errorf("reported issue #%d does not exist", r.Number)
		},
	},
	{
		name: "comment", step: "issue-comment", github: true,
		args: func(w *world, t *trial, i int) []string {
			_, body := t.wording(i)
			return append([]string{"issue", "comment", strconv.Itoa(commentOn)}, t.bodyArgs(w, body)...)
		},
		stdinArgs: func(w *world, t *trial) ([]string, string) {
			_, body := t.wording(0)
			return []string{"issue", "comment", strconv.Itoa(commentOn), "--body-file", "-"}, body
		},
		target:   func(*trial) string { return strconv.Itoa(commentOn) },
		isCreate: func(_ *world, _ *trial, m, p string) bool { return isMethodPath("POST", commentsPath)(m, p) },
		isCreated: func(_ *world, _ *trial, c *fixtures.Commit) bool {
			return c.Kind == fakegithub.KindComment && c.Method == "POST"
		},
		count: func(w *world, t *trial, _ []fixtures.Commit) int {
			return ours(w.fake.Comments(owner, repo, commentOn), func(c fakegithub.Comment) string { return c.Body }, func(c fakegithub.Comment) string { return c.Author }, t.key())
		},
		verify: func(w *world, t *trial, r *result) error {
			for _, c := range w.fake.Comments(owner, repo, commentOn) {
				if c.ID == r.ID {
					if !taskkey.HasMarker(c.Body, t.key()) || c.Author != login {
						return fmt.Errorf("reported comment %d is not ours for the key", r.ID)
					}
					return nil
				}
			}
			return fmt.Errorf("reported comment %d does not exist", r.ID)
		},
	},
	{
		name: "review", step: "pr-review", github: true,
		args: func(w *world, t *trial, i int) []string {
			_, body := t.wording(i)
			return append([]string{"pr", "review", strconv.Itoa(reviewOn), "--comment"}, t.bodyArgs(w, body)...)
		},
		stdinArgs: func(w *world, t *trial) ([]string, string) {
			_, body := t.wording(0)
			return []string{"pr", "review", strconv.Itoa(reviewOn), "--comment", "--body-file", "-"}, body
		},
		target: func(*trial) string { return strconv.Itoa(reviewOn) },
		isCreate: func(_ *world, _ *trial, m, p string) bool {
			return isMethodPath("POST", repoPath(fmt.Sprintf("/pulls/%d/reviews", reviewOn)))(m, p)
		},
		isCreated: func(_ *world, _ *trial, c *fixtures.Commit) bool {
			return c.Kind == fakegithub.KindReview && c.Method == "POST"
		},
		count: func(w *world, t *trial, _ []fixtures.Commit) int {
			return ours(w.fake.Reviews(owner, repo, reviewOn), func(r fakegithub.Review) string { return r.Body }, func(r fakegithub.Review) string { return r.Author }, t.key())
		},
		verify: func(w *world, t *trial, r *result) error {
			for _, rv := range w.fake.Reviews(owner, repo, reviewOn) {
				if rv.ID == r.ID {
					if !taskkey.HasMarker(rv.Body, t.key()) || rv.Author != login || rv.State != "COMMENTED" {
						return fmt.Errorf("reported review %d is not ours for the key, submitted", r.ID)
					}
					return nil
				}
			}
			return fmt.Errorf("reported review %d does not exist", r.ID)
		},
	},
	{
		name: "branch", step: "branch-create", github: true, githubUnique: true,
		args: func(w *world, t *trial, i int) []string {
			return []string{"branch", "create", t.branchName(), "--sha", w.main}
		},
		target:    func(t *trial) string { return t.branchName() },
		isCreate:  func(_ *world, _ *trial, m, p string) bool { return isMethodPath("POST", repoPath("/git/refs"))(m, p) },
		isCreated: func(_ *world, t *trial, c *fixtures.Commit) bool { return isBranchCreate(c, t) },
		count: func(w *world, t *trial, commits []fixtures.Commit) int {
			n := 0
			for i := range commits {
				if isBranchCreate(&commits[i], t) {
					n++
				}
			}
			return n
		},
		verify: func(w *world, t *trial, r *result) error {
			sha, ok := w.fake.Branch(owner, repo, t.branchName())
			switch {
			case !ok:
				return fmt.Errorf("reported branch %s does not exist", t.branchName())
			case sha != w.main || r.SHA != w.main:
				return fmt.Errorf("branch %s is at %s, reported %s, want %s", t.branchName(), sha, r.SHA, w.main)
			}
			return nil
		},
	},
	{
		name: "file", step: "file-put", github: true, githubUnique: true,
		args: func(w *world, t *trial, i int) []string {
			return []string{"file", "put", t.filePath(), "--branch", docsBranch, "-m", fmt.Sprintf("Notes for %s (attempt %d)", t.task, i+1), "--content", string(t.content())}
		},
		stdinArgs: func(w *world, t *trial) ([]string, string) {
			return []string{"file", "put", t.filePath(), "--branch", docsBranch, "-m", "Notes for " + t.task, "--content-file", "-"}, string(t.content())
		},
		target: func(t *trial) string { return docsBranch + ":" + t.filePath() },
		isCreate: func(_ *world, t *trial, m, p string) bool {
			return isMethodPath("PUT", repoPath("/contents/"+t.filePath()))(m, p)
		},
		isCreated: func(_ *world, t *trial, c *fixtures.Commit) bool { return isFileCommit(c, t) },
		count: func(w *world, t *trial, commits []fixtures.Commit) int {
			n := 0
			for i := range commits {
				if isFileCommit(&commits[i], t) {
					n++
				}
			}
			return n
		},
		verify: func(w *world, t *trial, r *result) error {
			got, ok := w.fake.FileContent(owner, repo, docsBranch, t.filePath())
			switch {
			case !ok:
				return fmt.Errorf("reported file %s does not exist", t.filePath())
			case string(got) != string(t.content()):
				return fmt.Errorf("file %s has other content", t.filePath())
			case r.SHA != ghcheck.BlobSHA(t.content()):
				return fmt.Errorf("reported blob %s, want %s", r.SHA, ghcheck.BlobSHA(t.content()))
			}
			return nil
		},
	},
	{
		// A draft: GitHub keeps no tag unique among drafts, so only the
		// ledger and the marker in the notes stand between a retry and a
		// second release.
		name: "release", step: "release-create", github: true,
		args: func(w *world, t *trial, i int) []string {
			_, notes := t.wording(i)
			return []string{"release", "create", t.tag(), "--draft", "--title", "Release " + t.task, "--notes", notes}
		},
		stdinArgs: func(w *world, t *trial) ([]string, string) {
			_, notes := t.wording(0)
			return []string{"release", "create", t.tag(), "--draft", "--notes-file", "-"}, notes
		},
		target:    func(t *trial) string { return t.tag() },
		isCreate:  func(_ *world, _ *trial, m, p string) bool { return isMethodPath("POST", repoPath("/releases"))(m, p) },
		isCreated: func(_ *world, _ *trial, c *fixtures.Commit) bool { return c.Kind == fakegithub.KindRelease },
		count: func(w *world, t *trial, _ []fixtures.Commit) int {
			return ours(w.fake.Releases(owner, repo), func(r fakegithub.Release) string { return r.Body }, func(r fakegithub.Release) string { return r.Author }, t.key())
		},
		verify: func(w *world, t *trial, r *result) error {
			for _, rl := range w.fake.Releases(owner, repo) {
				if rl.ID == r.ID {
					if !taskkey.HasMarker(rl.Body, t.key()) || rl.Author != login || rl.Tag != t.tag() {
						return fmt.Errorf("reported release %d is not ours for the key", r.ID)
					}
					return nil
				}
			}
			return fmt.Errorf("reported release %d does not exist", r.ID)
		},
	},
	{
		// GitHub applies a label once while it is there: separate ledgers
		// racing make one labeled event, so one run of its workflows.
		name: "labels", step: "add-labels", github: true, githubUnique: true,
		args: func(w *world, t *trial, i int) []string {
			return []string{"issue", "edit", strconv.Itoa(commentOn), "--add-label", t.label()}
		},
		target: func(*trial) string { return strconv.Itoa(commentOn) },
		isCreate: func(_ *world, _ *trial, m, p string) bool {
			return isMethodPath("POST", repoPath(fmt.Sprintf("/issues/%d/labels", commentOn)))(m, p)
		},
		isCreated: func(_ *world, _ *trial, c *fixtures.Commit) bool {
			return c.Kind == fakegithub.KindLabel && c.Method == "POST" && c.Number == commentOn
		},
		count: func(w *world, t *trial, _ []fixtures.Commit) int {
			return w.fake.Labeled(owner, repo, commentOn, t.label())
		},
		verify: func(w *world, t *trial, r *result) error {
			for _, is := range w.fake.Issues(owner, repo) {
				if is.Number == commentOn && slices.ContainsFunc(is.Labels, func(l string) bool { return strings.EqualFold(l, t.label()) }) && r.Number == commentOn {
					return nil
				}
			}
			return fmt.Errorf("reported #%d, and #%d does not carry %s", r.Number, commentOn, t.label())
		},
	},
	{
		name: "review-comment", step: "review-comment", github: true,
		args: func(w *world, t *trial, i int) []string {
			_, body := t.wording(i)
			return append([]string{"pr", "comment", strconv.Itoa(reviewOn), "--path", reviewFile, "--line", "1"}, t.bodyArgs(w, body)...)
		},
		stdinArgs: func(w *world, t *trial) ([]string, string) {
			_, body := t.wording(0)
			return []string{"pr", "comment", strconv.Itoa(reviewOn), "--path", reviewFile, "--line", "1", "--body-file", "-"}, body
		},
		target:   func(*trial) string { return strconv.Itoa(reviewOn) + ":RIGHT:1:" + reviewFile },
		isCreate: func(_ *world, _ *trial, m, p string) bool { return isMethodPath("POST", reviewCommentsPath)(m, p) },
		isCreated: func(_ *world, _ *trial, c *fixtures.Commit) bool {
			return c.Kind == fakegithub.KindReviewComment && c.Method == "POST"
		},
		count: func(w *world, t *trial, _ []fixtures.Commit) int {
			return ours(w.fake.ReviewComments(owner, repo, reviewOn), func(c fakegithub.Comment) string { return c.Body }, func(c fakegithub.Comment) string { return c.Author }, t.key())
		},
		verify: func(w *world, t *trial, r *result) error {
			for _, c := range w.fake.ReviewComments(owner, repo, reviewOn) {
				if c.ID == r.ID {
					if !taskkey.HasMarker(c.Body, t.key()) || c.Author != login || c.Path != reviewFile || c.Line != 1 {
						return fmt.Errorf("reported inline comment %d is not ours for the key, on %s:1", r.ID, reviewFile)
					}
					return nil
				}
			}
			return fmt.Errorf("reported inline comment %d does not exist", r.ID)
		},
	},
	execKind("exec", true),
	execKind("exec-nocheck", false),
}

// reviewFile is the file reviewOn's head adds: review-comment trials
// comment on its line 1.
const reviewFile = "change-someone.txt"

var reviewCommentsPath = repoPath("/pulls/" + strconv.Itoa(reviewOn) + "/comments")

// notRun are the registered kinds without a row, and why.
var notRun = map[string]string{
	"close":          "acted only by `ghonce audit --apply`: the audit part runs it",
	"branch-delete":  "acted only by `ghonce audit --apply`: the audit part runs it",
	"comment-delete": "acted only by `ghonce audit --apply`: the audit part runs it",
	"tool-call":      "acted only by `ghonce mcp --upstream`, not a CLI verb: internal/mcp's TestProxyGenericGuard runs it",
}

// kinds finds a row by name.
var kinds = func() map[string]*kind {
	m := map[string]*kind{}
	for _, k := range kindTable {
		m[k.name] = k
	}
	return m
}()

// kindNames names the rows keep accepts, in the table's order.
func kindNames(keep func(*kind) bool) []string {
	var out []string
	for _, k := range kindTable {
		if keep(k) {
			out = append(out, k.name)
		}
	}
	return out
}

func everyKind(*kind) bool    { return true }
func registered(k *kind) bool { return k.variantOf == "" }
func onGitHub(k *kind) bool   { return k.github }

var commentsPath = repoPath("/issues/" + strconv.Itoa(commentOn) + "/comments")

func execArgs(check bool) func(w *world, t *trial, i int) []string {
	return func(w *world, t *trial, i int) []string {
		a := []string{"exec", "--step", "notify"}
		if check {
			a = append(a, "--check", shellQuote(w.m.helper)+" "+helperArg+" check")
		}
		return append(a, "--", w.m.helper, helperArg, "post")
	}
}

// execKind is a guarded command's row: exec, and exec-nocheck, a variant
// without --check.
func execKind(name string, check bool) *kind {
	variantOf := ""
	if !check {
		variantOf = "exec"
	}
	return &kind{
		name: name, step: "notify", variantOf: variantOf,
		args:   execArgs(check),
		target: func(*trial) string { return "" },
		count:  func(w *world, t *trial, _ []fixtures.Commit) int { return w.fx.count(t.key()) },
		verify: func(w *world, t *trial, r *result) error {
			if w.fx.count(t.key()) == 0 {
				return fmt.Errorf("reported effect for %s was never recorded", t.key())
			}
			return nil
		},
	}
}

func isBranchCreate(c *fixtures.Commit, t *trial) bool {
	return c.Kind == fakegithub.KindRef && c.Method == "POST" && c.Ref == "refs/heads/"+t.branchName()
}

func isFileCommit(c *fixtures.Commit, t *trial) bool {
	return c.Kind == fakegithub.KindContent && strings.EqualFold(c.Path, repoPath("/contents/"+t.filePath()))
}

// matrixSettle is the --settle every run gets: how long a rerun waits, from
// a killed attempt's sending mark, for that attempt's request in flight to
// land. Here requests travel over loopback to in-process servers that
// commit at once, so a fraction of ghonce's default (15s, sized for
// GitHub's 10-second request limit) is ample, and it keeps the thousands of
// reruns within the matrix's time budget; slowCommitRow runs with the
// default against a fake that commits late.
const matrixSettle = 200 * time.Millisecond

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// fullArgs adds the flags every invocation gets, before a guarded
// command's "--".
func (t *trial) fullArgs(args []string) []string {
	var g []string
	if t.k.github {
		g = append(g, "--repo", owner+"/"+repo)
	}
	g = append(g, "--task", t.task, "--ledger", t.ledger, "--json")
	if !t.defaultSettle {
		g = append(g, "--settle", matrixSettle.String())
	}
	for i, a := range args {
		if a == "--" {
			return append(append(append([]string(nil), args[:i]...), g...), args[i:]...)
		}
	}
	return append(append([]string(nil), args...), g...)
}

func ledgerPath(w *world, parts ...string) string {
	p := filepath.Join(append([]string{w.dir, "ledgers"}, parts...)...)
	_ = os.MkdirAll(filepath.Dir(p), 0o755)
	return p
}

// TestEveryKindHasARow holds kindTable to the kinds ghonce registers: a new
// kind gets a row (or a reason in notRun), so the matrix cannot forget it.
func TestEveryKindHasARow(t *testing.T) {
	for _, name := range registry.All() {
		_, skipped := notRun[name]
		k, ok := kinds[name]
		switch {
		case ok && skipped:
			t.Errorf("kind %q has a row and a reason in notRun: keep one", name)
		case !ok && !skipped:
			t.Errorf("kind %q is registered but has no row in kindTable (kinds_test.go) and no reason in notRun", name)
		case ok && k.variantOf != "":
			t.Errorf("row %q is a variant of %q, but %q is itself a registered kind", name, k.variantOf, name)
		}
	}
	for name := range notRun {
		if !slices.Contains(registry.All(), name) {
			t.Errorf("notRun names %q, which no engine registers", name)
		}
	}
	for _, k := range kindTable {
		if !slices.Contains(registry.All(), kindOf(k)) {
			t.Errorf("row %q runs kind %q, which no engine registers", k.name, kindOf(k))
		}
	}
}
