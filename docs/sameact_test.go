package docs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/guard"
	"github.com/ghonce/ghonce/internal/cli"
	"github.com/ghonce/ghonce/internal/mcp"
	"github.com/ghonce/ghonce/ledger/sqlite"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/tests/testworld"
)

// actPair is one pair of reconcile/testdata/acts.json: two texts one task
// sent under one key, with the task's default step.
type actPair struct {
	Want, Kind, Why, Source string
	First, Second           actText
}

type actText struct {
	Title *string `json:"title,omitempty"`
	Body  string  `json:"body"`
}

// answer is what a front answered one run: the artifact's URL on success,
// else the message it refused with.
type answer struct {
	ok       bool
	url, msg string
}

// actFront runs one act through a front: kind and text under task, with
// step ("" the kind's default); n names the pair (a pull request's head).
type actFront struct {
	name string
	// pair starts pair n's program (an MCP session, a Transport): every
	// run of the pair goes through the one it returns.
	pair func(t *testing.T, n int) func(kind, task, step string, text actText) answer
}

// tally is one front's confusion matrix over the corpus: what each kind of
// pair was answered, and what a caller that follows the answer ends with.
type tally struct {
	retries, retrySuccess, retryAsked, retryDuplicates int
	seconds, secondLost, secondAsked, secondMade       int
	// wrong lists the pairs on the side the targets forbid.
	wrong []string
}

// TestSameActMatrix runs every pair of the corpus through the four fronts
// that take no step from an unmodified agent (the CLI without --step, the
// gh shim, the MCP tools, the go-github transport), each with a ledger and
// a fake GitHub of its own, and writes what they answered into
// docs/design/same-act.md (GHONCE_WRITE_DOCS=1) or checks that the page says it.
// It fails when a second act is answered with success and the first
// artifact's URL, or when a retry whose caller follows the answer makes a
// duplicate.
//
// A caller follows an answer as one that knows what it meant to do: told
// that its run reads as another act, it takes the step the message names;
// given the facts and both ways on, it takes the one that fits (a retry
// stops, a second act reruns with the step named).
func TestSameActMatrix(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "reconcile/testdata/acts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var corpus struct{ Pairs []actPair }
	if err := json.Unmarshal(b, &corpus); err != nil {
		t.Fatal(err)
	}
	for i, p := range corpus.Pairs {
		if p.Source == "" || (p.Want != "retry" && p.Want != "two-acts") {
			t.Fatalf("pair %d (%s): want %q, source %q: every pair is a retry or two-acts and names its source", i, p.Why, p.Want, p.Source)
		}
	}
	fronts := []actFront{cliFront(t), ghFront(t), mcpFront(t), transportFront(t)}
	tallies := make([]tally, len(fronts))
	for fi, f := range fronts {
		t.Run(f.name, func(t *testing.T) {
			tallies[fi] = runCorpus(t, f, corpus.Pairs)
			for _, w := range tallies[fi].wrong {
				t.Error(w)
			}
		})
	}
	// The waits the page sets against clients' timeouts are ghonce's.
	page := read(t, "docs/design/same-act.md")
	for _, d := range []time.Duration{reconcile.DefaultSettle, ghcheck.DefaultCreates[0].Window} {
		if want := fmt.Sprintf("%d s", int(d.Seconds())); !strings.Contains(page, want) {
			t.Errorf("docs/design/same-act.md does not give ghonce's wait of %s as %q", d, want)
		}
	}
	table := matrixTable(fronts, tallies)
	t.Logf("over %d pairs:\n%s", len(corpus.Pairs), table)
	checkSection(t, "docs/design/same-act.md", "same-act-matrix", table)
}

func runCorpus(t *testing.T, f actFront, pairs []actPair) tally {
	var n tally
	for i, p := range pairs {
		task := fmt.Sprintf("pair-%d", i)
		do := f.pair(t, i)
		first := do(p.Kind, task, "", p.First)
		if !first.ok {
			t.Fatalf("pair %d (%s): the first run failed: %s", i, p.Why, first.msg)
		}
		second := do(p.Kind, task, "", p.Second)
		step, judged := followed(second.msg)
		what := fmt.Sprintf("pair %d (%s, %s): %s then %s", i, p.Kind, p.Why, show(p.First), show(p.Second))
		switch p.Want {
		case "retry":
			n.retries++
			switch {
			case second.ok && second.url == first.url:
				n.retrySuccess++
			case second.ok:
				n.retryDuplicates++
				n.wrong = append(n.wrong, what+": a second artifact "+second.url)
			default:
				n.retryAsked++
				if judged && step != "" { // told it is another act: the caller takes the step
					if again := do(p.Kind, task, step, p.Second); again.ok && again.url != first.url {
						n.retryDuplicates++
						n.wrong = append(n.wrong, what+": following the answer made a duplicate "+again.url)
					}
				}
			}
		default:
			n.seconds++
			switch {
			case second.ok && second.url == first.url:
				n.secondLost++
				n.wrong = append(n.wrong, what+": answered with the first one's URL "+first.url)
			case second.ok:
				n.secondMade++
			default:
				n.secondAsked++
				if step == "" {
					n.wrong = append(n.wrong, what+": refused without a step for the second act: "+second.msg)
					break
				}
				if again := do(p.Kind, task, step, p.Second); again.ok && again.url != first.url {
					n.secondMade++
				} else {
					n.wrong = append(n.wrong, fmt.Sprintf("%s: rerun with step %q: %+v", what, step, again))
				}
			}
		}
	}
	return n
}

// stepRes find the step an answer names, in each front's words.
var stepRes = []*regexp.Regexp{
	regexp.MustCompile(`GHONCE_STEP=([A-Za-z0-9._-]+)`),
	regexp.MustCompile(`--step ([A-Za-z0-9._-]+)`),
	regexp.MustCompile(`WithStep\(ctx, "[^"]*", "([^"]+)"\)`),
	regexp.MustCompile(`step "([^"]+)"`),
}

// followed is the step a refusal names for another act, and whether it
// judged the run another act itself (the caller then takes that step
// whatever it meant).
func followed(msg string) (step string, judged bool) {
	for _, re := range stepRes {
		if m := re.FindAllStringSubmatch(msg, -1); m != nil {
			step = m[len(m)-1][1] // the last: a message names the step that made the first before the one to use
			break
		}
	}
	return step, strings.Contains(msg, "reads as another")
}

func show(a actText) string {
	if a.Title != nil {
		return fmt.Sprintf("%q", *a.Title)
	}
	return fmt.Sprintf("%q", a.Body)
}

// matrixTable is the page's table: one row per front.
func matrixTable(fronts []actFront, ts []tally) string {
	var b strings.Builder
	b.WriteString("| front | retries | answered the first artifact | asked the caller | duplicates when the caller follows | second acts | answered the first artifact (lost) | asked the caller | made when the caller follows |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for i, f := range fronts {
		n := ts[i]
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %d | %d | %d |\n", f.name, n.retries, n.retrySuccess, n.retryAsked, n.retryDuplicates,
			n.seconds, n.secondLost, n.secondAsked, n.secondMade)
	}
	return b.String()
}

// checkSection checks that page's generated section name holds body, or
// writes it there with GHONCE_WRITE_DOCS=1.
func checkSection(t *testing.T, page, name, body string) {
	t.Helper()
	path := filepath.Join(root, page)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	begin := []byte("<!-- generated: " + name + " (go test ./docs -run TestSameActMatrix with GHONCE_WRITE_DOCS=1; do not edit) -->\n")
	end := []byte("<!-- end generated: " + name + " -->\n")
	i, j := bytes.Index(b, begin), bytes.Index(b, end)
	if i < 0 || j < i {
		t.Fatalf("%s: no section %s between %q and %q", page, name, bytes.TrimSpace(begin), bytes.TrimSpace(end))
	}
	if string(b[i+len(begin):j]) == body {
		return
	}
	if os.Getenv("GHONCE_WRITE_DOCS") != "1" {
		t.Errorf("%s: section %s differs from what the fronts answer; run `GHONCE_WRITE_DOCS=1 go test ./docs -run TestSameActMatrix`:\n%s", page, name, body)
		return
	}
	out := append(append(append([]byte{}, b[:i+len(begin)]...), body...), b[j:]...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// actWorld is a front's own fake GitHub, with the issue comments go to.
type actWorld struct {
	*testworld.World
	issue  int
	pushed map[string]bool
}

func newActWorld(t *testing.T) *actWorld {
	w := &actWorld{World: testworld.New(t), pushed: map[string]bool{}}
	w.issue = w.GitHub.SeedIssue(testworld.Owner, testworld.Name, testworld.Stranger, fixtures.SeedIssue{Title: "Thread", Body: "Comments go here."})
	return w
}

// head is pair n's pull request head, pushed once; a run with a step of
// its own pushed another branch.
func (w *actWorld) head(n int, step string) string {
	h := fmt.Sprintf("pair-%d", n)
	if step != "" {
		h += "-" + step
	}
	if !w.pushed[h] {
		w.pushed[h] = true
		w.Push(h)
	}
	return h
}

func bodyOf(a actText) string {
	if a.Body == "" {
		return "(no body)"
	}
	return a.Body
}

func cliFront(t *testing.T) actFront {
	w := newActWorld(t)
	env := map[string]string{"GH_TOKEN": testworld.Token, "GITHUB_API_URL": w.GitHub.URL(), "GHONCE_LEDGER": w.Ledger}
	return actFront{name: "CLI", pair: func(t *testing.T, n int) func(string, string, string, actText) answer {
		return func(kind, task, step string, a actText) answer {
			args := map[string][]string{
				"issue":   {"issue", "create", "--title", deref(a.Title)},
				"pr":      {"pr", "create", "--base", testworld.Branch, "--head", w.head(n, step), "--title", deref(a.Title)},
				"comment": {"issue", "comment", fmt.Sprint(w.issue)},
			}[kind]
			args = append(args, "--task", task, "--repo", testworld.Repo, "--body", bodyOf(a))
			if step != "" {
				args = append(args, "--step", step)
			}
			return runMain(t, cli.Main, args, env)
		}
	}}
}

func ghFront(t *testing.T) actFront {
	w := newActWorld(t)
	return actFront{name: "gh shim", pair: func(t *testing.T, n int) func(string, string, string, actText) answer {
		return func(kind, task, step string, a actText) answer {
			env := map[string]string{"GH_TOKEN": testworld.Token, "GITHUB_API_URL": w.GitHub.URL(), "GHONCE_LEDGER": w.Ledger,
				"GHONCE_GH": "/nonexistent/gh", "GHONCE_TASK": task, "GHONCE_STEP": step}
			args := map[string][]string{
				"issue":   {"gh", "issue", "create", "-t", deref(a.Title)},
				"pr":      {"gh", "pr", "create", "-B", testworld.Branch, "-H", w.head(n, step), "-t", deref(a.Title)},
				"comment": {"gh", "issue", "comment", fmt.Sprint(w.issue)},
			}[kind]
			return runMain(t, cli.GhMain, append(args, "-R", testworld.Repo, "-b", bodyOf(a)), env)
		}
	}}
}

func runMain(t *testing.T, main func(context.Context, []string, cli.IO) int, args []string, env map[string]string) answer {
	t.Helper()
	var out, errb bytes.Buffer
	sys := cli.IO{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }, Now: time.Now}
	if code := main(context.Background(), args, sys); code != 0 {
		return answer{msg: fmt.Sprintf("exit %d: %s", code, errb.String())}
	}
	return answer{ok: true, url: strings.TrimSpace(out.String())}
}

// mcpFront serves each pair to a session of its own: an agent's, which
// makes both runs of the pair.
func mcpFront(t *testing.T) actFront {
	w := newActWorld(t)
	l := w.OpenLedger()
	eng := w.Engine(func(c *reconcile.Config) {
		c.Ledger, c.LedgerNew, c.AnswerBeforeTags = l, l.Created, true
		c.GitHub = w.Client(ghcheck.Options{Budget: ghcheck.Budget{NoPacing: true}})
	})
	srv, err := mcp.New(mcp.Config{Engine: eng, Ledger: l})
	if err != nil {
		t.Fatal(err)
	}
	return actFront{name: "MCP", pair: func(t *testing.T, n int) func(string, string, string, actText) answer {
		ctx := context.Background()
		ct, st := sdk.NewInMemoryTransports()
		ss, err := srv.SDK().Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ss.Close() })
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return func(kind, task, step string, a actText) answer {
			args := map[string]any{"owner": testworld.Owner, "repo": testworld.Name, "task": task, "body": bodyOf(a)}
			if step != "" {
				args["step"] = step
			}
			tool := map[string]string{"issue": "create_issue", "pr": "create_pull_request", "comment": "add_issue_comment"}[kind]
			switch kind {
			case "issue":
				args["title"] = deref(a.Title)
			case "pr":
				args["title"], args["head"], args["base"] = deref(a.Title), w.head(n, step), testworld.Branch
			default:
				args["issue_number"] = w.issue
			}
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
			if err != nil {
				t.Fatalf("%s: %v", tool, err)
			}
			var texts []string
			for _, c := range res.Content {
				if tc, ok := c.(*sdk.TextContent); ok {
					texts = append(texts, tc.Text)
				}
			}
			if res.IsError {
				return answer{msg: strings.Join(texts, "\n")}
			}
			var o mcp.Output
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &o); err != nil {
				t.Fatal(err)
			}
			return answer{ok: true, url: o.URL}
		}
	}}
}

// transportFront sends each pair through a Transport of its own: one
// program's, which makes both writes of the pair.
func transportFront(t *testing.T) actFront {
	w := newActWorld(t)
	l, err := sqlite.Open(context.Background(), filepath.Join(w.Dir, "guard.db"), sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	u, err := url.Parse(w.GitHub.URL())
	if err != nil {
		t.Fatal(err)
	}
	return actFront{name: "go-github transport", pair: func(t *testing.T, n int) func(string, string, string, actText) answer {
		tr, err := guard.New(nil, guard.Options{Ledger: l, Getenv: func(string) string { return "" }})
		if err != nil {
			t.Fatal(err)
		}
		gh := github.NewClient(&http.Client{Transport: tr}).WithAuthToken(testworld.Token)
		gh.BaseURL = u
		return func(kind, task, step string, a actText) answer {
			ctx := guard.WithStep(context.Background(), task, step)
			body := github.String(bodyOf(a))
			var (
				u   string
				err error
			)
			switch kind {
			case "issue":
				var is *github.Issue
				is, _, err = gh.Issues.Create(ctx, testworld.Owner, testworld.Name, &github.IssueRequest{Title: a.Title, Body: body})
				u = is.GetHTMLURL()
			case "pr":
				var pr *github.PullRequest
				pr, _, err = gh.PullRequests.Create(ctx, testworld.Owner, testworld.Name, &github.NewPullRequest{Title: a.Title, Body: body, Head: github.String(w.head(n, step)), Base: github.String(testworld.Branch)})
				u = pr.GetHTMLURL()
			default:
				var cm *github.IssueComment
				cm, _, err = gh.Issues.CreateComment(ctx, testworld.Owner, testworld.Name, w.issue, &github.IssueComment{Body: body})
				u = cm.GetHTMLURL()
			}
			if err != nil {
				return answer{msg: err.Error()}
			}
			return answer{ok: true, url: u}
		}
	}}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
