package guard_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/guard"
	"github.com/ghonce/ghonce/internal/fakegithub"
	"github.com/ghonce/ghonce/ledger/sqlite"
	"github.com/ghonce/ghonce/tests/testworld"
)

const (
	owner    = testworld.Owner
	name     = testworld.Name
	login    = testworld.Login
	token    = testworld.Token
	stranger = testworld.Stranger
)

// job is one go-github write, as a bot makes it: every field the kind
// needs, and a Text the rerun may reword.
type job struct {
	Kind   string // pr, issue, comment, branch, file, review-comment
	Task   string
	Text   string
	Number int    // comment: the issue; review-comment: the pull request
	SHA    string // branch: the commit; review-comment: the head
	Line   int    // review-comment: the line of changed (default 1)
}

// changed is the file newWorld's pull request adds (one line).
const changed = "change-" + login + ".txt"

// got is what go-github returned, decoded into its own types.
type got struct {
	Number  int    `json:"number"`
	ID      int64  `json:"id"`
	URL     string `json:"url"` // html_url
	SHA     string `json:"sha"`
	Outcome string `json:"outcome"` // X-Ghonce-Outcome
	Status  int    `json:"status"`
}

// send makes j's write through gh, under j's task, and reports what
// go-github decoded.
func send(ctx context.Context, gh *github.Client, j job) (got, error) {
	ctx = guard.WithStep(ctx, j.Task, "")
	var (
		g    got
		resp *github.Response
		err  error
	)
	switch j.Kind {
	case "pr":
		var pr *github.PullRequest
		pr, resp, err = gh.PullRequests.Create(ctx, owner, name, &github.NewPullRequest{
			Title: github.String("Fix #42"), Head: github.String("fix-42"), Base: github.String("main"), Body: github.String(j.Text),
		})
		g.Number, g.URL = pr.GetNumber(), pr.GetHTMLURL()
	case "issue":
		var is *github.Issue
		is, resp, err = gh.Issues.Create(ctx, owner, name, &github.IssueRequest{Title: github.String("Flaky test"), Body: github.String(j.Text)})
		g.Number, g.URL = is.GetNumber(), is.GetHTMLURL()
	case "comment":
		var c *github.IssueComment
		c, resp, err = gh.Issues.CreateComment(ctx, owner, name, j.Number, &github.IssueComment{Body: github.String(j.Text)})
		g.ID, g.URL = c.GetID(), c.GetHTMLURL()
	case "branch":
		var r *github.Reference
		r, resp, err = gh.Git.CreateRef(ctx, owner, name, &github.Reference{Ref: github.String("refs/heads/release-prep"), Object: &github.GitObject{SHA: github.String(j.SHA)}})
		g.SHA, g.URL = r.GetObject().GetSHA(), r.GetURL()
	case "file":
		var c *github.RepositoryContentResponse
		c, resp, err = gh.Repositories.CreateFile(ctx, owner, name, "docs/CHANGELOG.md", &github.RepositoryContentFileOptions{
			Message: github.String("changelog: " + j.Text), Content: []byte(fileContent), Branch: github.String("main"),
		})
		g.SHA, g.URL = c.GetContent().GetSHA(), c.GetContent().GetHTMLURL()
	case "review-comment":
		var c *github.PullRequestComment
		c, resp, err = gh.PullRequests.CreateComment(ctx, owner, name, j.Number, &github.PullRequestComment{
			Body: github.String(j.Text), CommitID: github.String(j.SHA), Path: github.String(changed), Line: github.Int(max(j.Line, 1)),
		})
		g.ID, g.URL = c.GetID(), c.GetHTMLURL()
	default:
		return g, fmt.Errorf("unknown kind %q", j.Kind)
	}
	if resp != nil {
		g.Outcome, g.Status = resp.Header.Get("X-Ghonce-Outcome"), resp.StatusCode
	}
	return g, err
}

const fileContent = "# Changelog\n\n- Fix #42\n"

// ours lists the artifacts of j's kind on the fake that are ours: what a
// duplicate would add to.
func ours(fake *fixtures.Server, j job) []got {
	var out []got
	switch j.Kind {
	case "pr":
		for _, p := range fake.PullRequests(owner, name) {
			if p.Author == login {
				out = append(out, got{Number: p.Number})
			}
		}
	case "issue":
		for _, is := range fake.Issues(owner, name) {
			if is.Author == login {
				out = append(out, got{Number: is.Number})
			}
		}
	case "comment":
		for _, c := range fake.Comments(owner, name, j.Number) {
			if c.Author == login {
				out = append(out, got{ID: c.ID})
			}
		}
	case "review-comment":
		for _, c := range fake.ReviewComments(owner, name, j.Number) {
			if c.Author == login {
				out = append(out, got{ID: c.ID})
			}
		}
	case "branch":
		if sha, ok := fake.Branch(owner, name, "release-prep"); ok {
			out = append(out, got{SHA: sha})
		}
	case "file":
		// One write moves main once; a second would move it again.
		n := 0
		for _, r := range fake.Requests() {
			if r.Method == http.MethodPut && (r.Status/100 == 2 || r.Fault == fixtures.DropAfterCommit) {
				n++
			}
		}
		if b, ok := fake.FileContent(owner, name, "main", "docs/CHANGELOG.md"); ok && string(b) == fileContent {
			for range n {
				out = append(out, got{})
			}
		}
	}
	return out
}

// commitKind is the fake's commit a create of kind makes.
var commitKind = map[string]fixtures.CommitKind{
	"pr": fakegithub.KindPull, "issue": fakegithub.KindIssue, "comment": fakegithub.KindComment,
	"branch": fakegithub.KindRef, "file": fakegithub.KindContent, "review-comment": fakegithub.KindReviewComment,
}

var kinds = []string{"pr", "issue", "comment", "branch", "file", "review-comment"}

// world is the shared test world (testworld) set up for every kind: a
// pushed branch fix-42, a stranger's issue to comment on and a stranger's
// pull request whose head adds changed.
type world struct {
	*testworld.World
	issue, pull int
	head        string
}

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{World: testworld.New(t)}
	w.Push("fix-42")
	w.issue = w.GitHub.SeedIssue(owner, name, stranger, fixtures.SeedIssue{Title: "It crashes", Body: "On start."})
	w.head = w.GitHub.AddCommitBy(owner, name, "main", login)
	w.GitHub.SetRef(owner, name, "review-me", w.head)
	w.pull = w.GitHub.SeedPR(owner, name, stranger, fixtures.SeedPR{Head: "review-me", Title: "Review me"})
	return w
}

func (w *world) job(kind, text string) job {
	if kind == "review-comment" {
		return job{Kind: kind, Task: "ISSUE-42", Text: text, Number: w.pull, SHA: w.head}
	}
	return job{Kind: kind, Task: "ISSUE-42", Text: text, Number: w.issue, SHA: w.Main}
}

// client is a plain go-github client over a guard on the ledger at path.
func (w *world) client(t testing.TB, path string, base http.RoundTripper) *github.Client {
	t.Helper()
	ctx := context.Background()
	l, err := sqlite.Open(ctx, path, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	tr, err := guard.New(base, guard.Options{Ledger: l, LedgerNew: l.Created(), Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	return w.gh(tr)
}

func (w *world) gh(tr http.RoundTripper) *github.Client {
	gh := github.NewClient(&http.Client{Transport: tr}).WithAuthToken(token)
	gh.BaseURL = mustURL(w.GitHub.URL())
	return gh
}

// agentEnv is what the agent process (TestMain) reads.
func agentEnv(w *world, ledgerPath string, j job) []string {
	b, _ := json.Marshal(j)
	return append(os.Environ(), "GUARD_TEST_AGENT="+string(b), "GUARD_TEST_URL="+w.GitHub.URL(), "GUARD_TEST_LEDGER="+ledgerPath)
}

func TestMain(m *testing.M) {
	if spec := os.Getenv("GUARD_TEST_AGENT"); spec != "" {
		os.Exit(agentMain(spec))
	}
	os.Exit(m.Run())
}

// agentMain is a bot's one write, in its own process so that a test can
// kill it: a plain github.NewClient over the guard, the ledger on disk.
func agentMain(spec string) int {
	var j job
	if err := json.Unmarshal([]byte(spec), &j); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx := context.Background()
	l, err := sqlite.Open(ctx, os.Getenv("GUARD_TEST_LEDGER"), sqlite.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer l.Close()
	// Settle: the fake commits a create before it answers, so once the test
	// kills a run nothing of it is in flight; the default (GitHub's 10 s
	// limit plus a margin) would only slow every takeover here.
	tr, err := guard.New(http.DefaultTransport, guard.Options{Ledger: l, LedgerNew: l.Created(), Settle: 200 * time.Millisecond})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	gh := github.NewClient(&http.Client{Transport: tr}).WithAuthToken(token)
	gh.BaseURL = mustURL(os.Getenv("GUARD_TEST_URL"))
	g, err := send(ctx, gh, j)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_ = json.NewEncoder(os.Stdout).Encode(g)
	return 0
}

func ledgerIn(t *testing.T) string { return filepath.Join(t.TempDir(), "ledger.db") }
