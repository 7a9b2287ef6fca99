package guard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"golang.org/x/oauth2"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/guard"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/sqlite"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/tests/harness"
)

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

// The kill story, for every kind the guard carries, through real
// processes: a bot (this test binary, re-run as the agent) makes its
// write through a plain github.NewClient(&http.Client{Transport: guard})
// and is killed with SIGKILL the moment GitHub has committed it, before
// the answer reaches it. Rerun with its text reworded, it gets the same
// artifact back (outcome found), and GitHub holds one; run once more, the
// ledger answers (skipped).
func TestKillAfterCommitRerunMakesOne(t *testing.T) {
	for _, kind := range writeKinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			runner := harness.NewRunner(w.GitHub)
			path := ledgerIn(t)
			a, err := actOf(job{Kind: kind})
			if err != nil {
				t.Fatal(err)
			}
			var stored []fixtures.Commit
			run := func(j job, kill bool) harness.Outcome {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				o, err := runner.Run(ctx, os.Args[0], nil, agentEnv(w, path, j), func(c *fixtures.Commit) bool {
					if !a.isWrite(c.Method, c.Path) {
						return false
					}
					stored = append(stored, *c)
					return kill
				})
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(o.Stdout+o.Stderr, token) {
					t.Fatalf("the token appears in the agent's output:\n%s\n%s", o.Stdout, o.Stderr)
				}
				return o
			}
			o := run(job{Kind: kind, Task: "ISSUE-42"}, true)
			if !o.Killed {
				t.Fatalf("agent not killed at the %s write's commit: exit %d\n%s%s", kind, o.Exit, o.Stdout, o.Stderr)
			}
			if n := made(w.GitHub, a); n != 1 || len(stored) != 1 {
				t.Fatalf("after the kill GitHub stored %d %s writes (%d commits), want 1 (the write committed)", n, kind, len(stored))
			}
			for _, want := range []string{"found", "skipped"} {
				o = run(job{Kind: kind, Task: "ISSUE-42", Reword: true}, false)
				if o.Exit != 0 {
					t.Fatalf("rerun: exit %d\n%s%s", o.Exit, o.Stdout, o.Stderr)
				}
				var g got
				if err := json.Unmarshal([]byte(o.Stdout), &g); err != nil {
					t.Fatalf("rerun output %q: %v", o.Stdout, err)
				}
				if n := made(w.GitHub, a); n != 1 || len(stored) != 1 {
					t.Fatalf("rerun: GitHub stored %d %s writes (%d commits), want 1", n, kind, len(stored))
				}
				if g.Outcome != want || g.Status != http.StatusCreated {
					t.Fatalf("rerun: outcome %q status %d, want %s and 201", g.Outcome, g.Status, want)
				}
				sameArtifact(t, kind, g.Body, readBack(t, w, a, stored[0]))
			}
		})
	}
}

// What go-github receives for an artifact an earlier attempt made is the
// artifact GitHub holds (its id, number or SHA, and its URL), as GitHub's
// own GETs of it answer; for one it creates, GitHub's own answer to the
// create.
func TestFoundArtifactDecodesAsGitHubsOwn(t *testing.T) {
	for _, kind := range writeKinds() {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t)
			path := ledgerIn(t)
			a, stored := w.recordWrites(t, kind)
			// The first attempt's answer is lost after GitHub stored the write.
			w.GitHub.Inject(fixtures.Fault{Kind: fixtures.DropAfterCommit, Match: func(r *http.Request) bool { return a.isWrite(r.Method, r.URL.Path) }})
			if _, err := send(context.Background(), w.client(t, path, nil), job{Kind: kind, Task: "ISSUE-42"}); err == nil {
				t.Fatal("first attempt: want the lost answer as an error")
			}
			// A reworded body is a reworded retry of a kind whose title
			// names the act (a PR, an issue); where the body is the act's
			// text, a reworded one after an answered attempt would be the
			// caller's to judge (docs/design/same-act.md).
			_, titled := a.example["title"]
			g, err := send(context.Background(), w.client(t, path, nil), job{Kind: kind, Task: "ISSUE-42", Reword: titled})
			if err != nil {
				t.Fatal(err)
			}
			if g.Outcome != "found" || g.Status != http.StatusCreated {
				t.Fatalf("outcome %q status %d, want found and 201", g.Outcome, g.Status)
			}
			if n := made(w.GitHub, a); n != 1 || len(*stored) != 1 {
				t.Fatalf("GitHub stored %d %s writes (%d commits), want 1", n, kind, len(*stored))
			}
			sameArtifact(t, kind, g.Body, readBack(t, w, a, (*stored)[0]))
		})
	}
}

// recordWrites is kind's act, and the commits of its write GitHub stores
// from now on.
func (w *world) recordWrites(t *testing.T, kind string) (act, *[]fixtures.Commit) {
	t.Helper()
	a, err := actOf(job{Kind: kind})
	if err != nil {
		t.Fatal(err)
	}
	var stored []fixtures.Commit
	w.GitHub.OnCommit(func(c *fixtures.Commit) {
		if a.isWrite(c.Method, c.Path) {
			stored = append(stored, *c)
		}
	})
	return a, &stored
}

// A write the guard creates gets GitHub's own answer to its create, of
// the artifact GitHub stored; the same write again through the same
// Transport (claude-code-action #1405's inline comments, each posted
// twice) is that artifact, and GitHub stores one.
func TestCreatedGetsGitHubsAnswer(t *testing.T) {
	for _, kind := range writeKinds() {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t)
			a, stored := w.recordWrites(t, kind)
			gh := w.client(t, ledgerIn(t), nil)
			for _, want := range []string{"created", "skipped"} {
				g, err := send(context.Background(), gh, job{Kind: kind, Task: "ISSUE-42"})
				if err != nil {
					t.Fatal(err)
				}
				if g.Outcome != want || g.Status/100 != 2 || len(*stored) != 1 || made(w.GitHub, a) != 1 {
					t.Fatalf("outcome %q status %d, %d commits; want %s, 2xx, 1", g.Outcome, g.Status, len(*stored), want)
				}
				sameArtifact(t, kind, g.Body, readBack(t, w, a, (*stored)[0]))
			}
		})
	}
}

// Writes the guard does not know, writes with a field their kind cannot
// carry and writes without a task pass through unguarded by default, and
// are refused, with nothing sent, when the options say so.
func TestUnguardedWrites(t *testing.T) {
	ctx := context.Background()
	edit := func(gh *github.Client, ctx context.Context) error {
		_, _, err := gh.Issues.Edit(ctx, owner, name, 1, &github.IssueRequest{Title: github.String("renamed")})
		return err
	}
	assign := func(gh *github.Client, ctx context.Context) error {
		_, _, err := gh.Issues.Create(ctx, owner, name, &github.IssueRequest{Title: github.String("t"), Assignees: &[]string{login}})
		return err
	}
	create := func(gh *github.Client, ctx context.Context) error {
		_, _, err := gh.Issues.Create(ctx, owner, name, &github.IssueRequest{Title: github.String("t"), Body: github.String("b")})
		return err
	}
	tagged := guard.WithStep(ctx, "ISSUE-42", "")
	for _, tc := range []struct {
		name   string
		opts   guard.Options
		ctx    context.Context
		write  func(*github.Client, context.Context) error
		refuse bool
	}{
		{"unknown write, task, pass", guard.Options{}, tagged, edit, false},
		{"unknown write, task, refuse", guard.Options{Unknown: guard.Refuse}, tagged, edit, true},
		{"unknown write, no task, refuse-unknown", guard.Options{Unknown: guard.Refuse}, ctx, edit, false},
		{"assignees, task, pass", guard.Options{}, tagged, assign, false},
		{"assignees, task, refuse", guard.Options{Unknown: guard.Refuse}, tagged, assign, true},
		{"known write, no task, pass", guard.Options{NoTask: guard.Pass}, ctx, create, false},
		{"known write, no task, nothing in the environment", guard.Options{}, ctx, create, true},
		{"known write, no task, refuse", guard.Options{NoTask: guard.Refuse}, ctx, create, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			l, err := sqlite.Open(ctx, ledgerIn(t), sqlite.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			tc.opts.Ledger = l
			tc.opts.Getenv = func(string) string { return "" }
			var logged []string
			tc.opts.Logf = func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }
			tr, err := guard.New(nil, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			before := len(w.GitHub.Requests())
			err = tc.write(w.gh(tr), tc.ctx)
			sent := len(w.GitHub.Requests()) - before
			var ue *guard.UnguardedError
			switch {
			case tc.refuse && !errors.As(err, &ue):
				t.Fatalf("want an *UnguardedError, got %v", err)
			case tc.refuse && sent != 0:
				t.Fatalf("refused, yet %d requests reached GitHub", sent)
			case !tc.refuse && err != nil:
				t.Fatalf("want it passed through, got %v", err)
			case !tc.refuse && sent != 1:
				t.Fatalf("passed through as %d requests, want exactly the caller's one", sent)
			}
			if es, _ := l.List(ctx, ledger.ListParams{}); len(es) != 0 {
				t.Fatalf("an unguarded write left %d ledger entries", len(es))
			}
			if tc.opts.NoTask == guard.Pass && (len(logged) != 1 || !strings.Contains(logged[0], "unguarded")) {
				t.Fatalf("a known write passed unguarded by Options.NoTask logged %q, want one line saying so", logged)
			}
		})
	}
}

// A known write whose context carries no task takes the environment's,
// as the CLI does (GHONCE_TASK, GHONCE_STEP): a bot that forgot WithStep
// and is rerun still makes one issue, under the CLI's key.
func TestNoTaskTakesTheEnvironmentsTask(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	env := map[string]string{"GHONCE_TASK": "ISSUE-42"}
	path := ledgerIn(t)
	for run := 0; run < 2; run++ {
		l, err := sqlite.Open(ctx, path, sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := guard.New(nil, guard.Options{Ledger: l, Getenv: func(k string) string { return env[k] }})
		if err != nil {
			t.Fatal(err)
		}
		is, resp, err := w.gh(tr).Issues.Create(ctx, owner, name, &github.IssueRequest{Title: github.String("Flaky test"), Body: github.String("Seen twice.")})
		l.Close()
		if err != nil || is.GetNumber() == 0 {
			t.Fatalf("run %d: %v", run, err)
		}
		if k := resp.Header.Get("X-Ghonce-Key"); k == "" {
			t.Fatalf("run %d: no X-Ghonce-Key: the write was not guarded", run)
		}
	}
	if n := len(w.GitHub.Issues(owner, name)); n != 2 { // the seeded one and ours
		t.Fatalf("%d issues, want the seeded one and one of ours", n)
	}
}

// A second write under a done key with another text, through one
// Transport (issue 37): an error the caller sees, wrapping a
// *reconcile.SameOrAnotherError with both texts and the step to use, in
// WithStep's words; it is sent with that step. A rerun in a new process
// with the same text gets the first; with the text reworded it gets the
// facts again, and nothing is sent.
func TestSecondActThroughTheTransportIsAnError(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	path := ledgerIn(t)
	gh := w.client(t, path, nil)
	tagged := guard.WithStep(ctx, "ISSUE-42", "")
	first, _, err := gh.Issues.Create(tagged, owner, name, &github.IssueRequest{Title: github.String("Follow-up: flaky test in auth"), Body: github.String("b")})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = gh.Issues.Create(tagged, owner, name, &github.IssueRequest{Title: github.String("Follow-up: docs typo in README"), Body: github.String("b")})
	var so *reconcile.SameOrAnotherError
	for _, says := range []string{`guard.WithStep(ctx, "ISSUE-42", "issue-create-follow-up-docs-typo-in-readme")`, first.GetHTMLURL(), `"Follow-up: flaky test in auth"`, "nothing to do"} {
		if !errors.As(err, &so) || !strings.Contains(err.Error(), says) {
			t.Fatalf("second act: %v, want a *reconcile.SameOrAnotherError saying %s", err, says)
		}
	}
	second, _, err := gh.Issues.Create(guard.WithStep(ctx, "ISSUE-42", so.NewStep), owner, name, &github.IssueRequest{Title: github.String("Follow-up: docs typo in README"), Body: github.String("b")})
	if err != nil || second.GetNumber() == first.GetNumber() {
		t.Fatalf("with the new step: %v, #%d", err, second.GetNumber())
	}
	// A new process (a new Transport) retrying the first.
	again, _, err := w.client(t, path, nil).Issues.Create(tagged, owner, name, &github.IssueRequest{Title: github.String("Follow-up: flaky test in auth"), Body: github.String("b2")})
	if err != nil || again.GetNumber() != first.GetNumber() {
		t.Fatalf("retry: %v, #%d; want #%d", err, again.GetNumber(), first.GetNumber())
	}
	writes := len(w.GitHub.Issues(owner, name))
	if _, _, err := w.client(t, path, nil).Issues.Create(tagged, owner, name, &github.IssueRequest{Title: github.String("Follow-up: the auth test is flaky"), Body: github.String("b2")}); !errors.As(err, &so) {
		t.Fatalf("reworded retry: %v, want the facts", err)
	}
	if n := len(w.GitHub.Issues(owner, name)); n != writes {
		t.Fatalf("%d issues after the reworded retry, want %d", n, writes)
	}
}

// cache is what an HTTP cache below the guard does with GitHub's
// "Cache-Control: private, max-age=60": it answers a repeated GET from its
// copy for a minute, unless the request says no-cache.
type cache struct {
	base http.RoundTripper
	mu   sync.Mutex
	kept map[string][]byte
	hits int
}

func (c *cache) RoundTrip(r *http.Request) (*http.Response, error) {
	k := r.URL.String() + "\x00" + r.Header.Get("Authorization")
	if r.Method == http.MethodGet && !strings.Contains(r.Header.Get("Cache-Control"), "no-cache") {
		c.mu.Lock()
		b, ok := c.kept[k]
		if ok {
			c.hits++
		}
		c.mu.Unlock()
		if ok {
			return &http.Response{StatusCode: 200, Status: "200 OK", Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(string(b))), Request: r}, nil
		}
	}
	resp, err := c.base.RoundTrip(r)
	if err != nil || r.Method != http.MethodGet || resp.StatusCode != 200 {
		return resp, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.kept[k] = b
	c.mu.Unlock()
	resp.Body = io.NopCloser(strings.NewReader(string(b)))
	return resp, nil
}

// A cache below the guard never answers the guard's own look-ups, for
// any kind: after a create whose answer was lost, the rerun's look-ups
// (the same URLs as the first attempt's, which found nothing) reach
// GitHub and find the artifact.
func TestCacheBelowNeverAnswersLookups(t *testing.T) {
	for _, kind := range writeKinds() {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t)
			c := &cache{base: http.DefaultTransport, kept: map[string][]byte{}}
			path := ledgerIn(t)
			a, err := actOf(job{Kind: kind})
			if err != nil {
				t.Fatal(err)
			}
			w.GitHub.Inject(fixtures.Fault{Kind: fixtures.DropAfterCommit, Match: func(r *http.Request) bool { return a.isWrite(r.Method, r.URL.Path) }})
			if _, err := send(context.Background(), w.client(t, path, c), job{Kind: kind, Task: "ISSUE-42"}); err == nil {
				t.Fatal("first attempt: want the lost answer as an error")
			}
			g, err := send(context.Background(), w.client(t, path, c), job{Kind: kind, Task: "ISSUE-42"})
			if err != nil {
				t.Fatal(err)
			}
			if n := made(w.GitHub, a); n != 1 || g.Outcome != "found" {
				t.Fatalf("GitHub stored %d %s writes (outcome %q), want 1 found", n, kind, g.Outcome)
			}
			if c.hits != 0 {
				t.Fatalf("the cache answered %d of the guard's requests", c.hits)
			}
		})
	}
}

// A create GitHub refuses reaches go-github as GitHub answered it: an
// *github.ErrorResponse with GitHub's status and message, nothing created.
func TestRefusedCreateGetsGitHubsAnswer(t *testing.T) {
	w := newWorld(t)
	gh := w.client(t, ledgerIn(t), nil)
	before := len(w.GitHub.PullRequests(owner, name))
	_, resp, err := gh.PullRequests.Create(guard.WithStep(context.Background(), "ISSUE-42", ""), owner, name, &github.NewPullRequest{
		Title: github.String("Fix"), Head: github.String("no-such-branch"), Base: github.String("main"), Body: github.String("b"),
	})
	var er *github.ErrorResponse
	if !errors.As(err, &er) || er.Response.StatusCode != http.StatusUnprocessableEntity {
		t.Fatalf("want GitHub's 422 as an *github.ErrorResponse, got %v", err)
	}
	if resp.Header.Get("X-Ghonce-Outcome") != "refused" {
		t.Fatalf("X-Ghonce-Outcome = %q, want refused", resp.Header.Get("X-Ghonce-Outcome"))
	}
	if n := len(w.GitHub.PullRequests(owner, name)) - before; n != 0 {
		t.Fatalf("GitHub holds %d new pull requests", n)
	}
}

// authBase authenticates below the guard, as oauth2.Transport and
// ghinstallation do: go-github's requests then carry no token.
type authBase struct{ token string }

func (a authBase) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "token "+a.token)
	return http.DefaultTransport.RoundTrip(r)
}

// With authentication below the guard, Options.TokenSource gives the
// engine the same identity; without it the write is refused, nothing sent.
func TestAuthenticationBelowTheGuard(t *testing.T) {
	ctx := context.Background()
	for _, withSource := range []bool{true, false} {
		w := newWorld(t)
		l, err := sqlite.Open(ctx, ledgerIn(t), sqlite.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		opts := guard.Options{Ledger: l}
		if withSource {
			opts.TokenSource = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: token})
		}
		tr, err := guard.New(authBase{token}, opts)
		if err != nil {
			t.Fatal(err)
		}
		gh := github.NewClient(&http.Client{Transport: tr}) // no WithAuthToken
		gh.BaseURL = mustURL(w.GitHub.URL())
		_, resp, err := gh.Issues.Create(guard.WithStep(ctx, "ISSUE-42", ""), owner, name, &github.IssueRequest{Title: github.String("Flaky test"), Body: github.String("b")})
		var outcome string
		if resp != nil {
			outcome = resp.Header.Get("X-Ghonce-Outcome")
		}
		switch {
		case withSource && (err != nil || outcome != "created"):
			t.Fatalf("with a TokenSource: %q, %v", outcome, err)
		case !withSource && (err == nil || !strings.Contains(err.Error(), "Options.TokenSource")):
			t.Fatalf("without a TokenSource: want a refusal naming Options.TokenSource, got %q, %v", outcome, err)
		case !withSource && len(w.GitHub.Requests()) != 0:
			t.Fatalf("without a TokenSource, %d requests reached GitHub", len(w.GitHub.Requests()))
		}
	}
}

// The guard's key is the CLI's and the MCP server's for the same task,
// step and target, for every kind: the one `ghonce key` derives from the
// target alone (kinds.KeyOfTarget; a pull request's is its base, whatever
// its head and title), the kind's default step for a WithStep without one.
func TestGuardKeyIsTheCLIs(t *testing.T) {
	for _, kind := range writeKinds() {
		t.Run(kind, func(t *testing.T) {
			w := newWorld(t)
			g, err := send(context.Background(), w.client(t, ledgerIn(t), nil), job{Kind: kind, Task: "ISSUE-42"})
			if err != nil {
				t.Fatal(err)
			}
			f, _ := kinds.FaceOf(kind)
			spec, err := reconcile.DecodeSpec(kind, []byte(f.Example))
			if err != nil {
				t.Fatal(err)
			}
			want, err := kinds.KeyOfTarget(kind, spec.Target(), "ISSUE-42", "", owner+"/"+name)
			if err != nil {
				t.Fatal(err)
			}
			if g.Key != want {
				t.Fatalf("X-Ghonce-Key %q, want the CLI's %q", g.Key, want)
			}
		})
	}
}

// A go-github caller that leaves a field empty is told its JSON field, as
// the request names it, never a CLI flag; the error is a
// *reconcile.InvalidError, and nothing reaches GitHub.
func TestBadInputNamesTheRequestsField(t *testing.T) {
	w := newWorld(t)
	gh := w.client(t, ledgerIn(t), nil)
	before := len(w.GitHub.Requests())
	_, _, err := gh.PullRequests.Create(guard.WithStep(context.Background(), "ISSUE-42", ""), owner, name, &github.NewPullRequest{
		Title: github.String("Fix"), Head: github.String("fix-42"), Body: github.String("b"),
	})
	var inv *reconcile.InvalidError
	if !errors.As(err, &inv) || inv.Field != "base" || !strings.Contains(err.Error(), "base is empty") || strings.Contains(err.Error(), "--") {
		t.Fatalf("a pull request without base: %v; want an *InvalidError naming base, and no flag", err)
	}
	_, _, err = gh.Issues.Create(guard.WithStep(context.Background(), "ISSUE-42", "a\nb"), owner, name, &github.IssueRequest{Title: github.String("T")})
	if err == nil || !strings.Contains(err.Error(), `the step (guard.WithStep) "a\nb" holds a control character`) {
		t.Fatalf("a step with a newline: %v; want it named as guard.WithStep's", err)
	}
	if n := len(w.GitHub.Requests()) - before; n != 0 {
		t.Fatalf("%d requests reached GitHub, want 0", n)
	}
}

// A file written to no branch goes to the default branch, as GitHub
// writes it (reconcile.Complete): its key names that branch, so the same
// write naming main is the same act.
func TestFileOnNoBranchIsTheDefaultBranchs(t *testing.T) {
	w := newWorld(t)
	gh := w.client(t, ledgerIn(t), nil)
	ctx := guard.WithStep(context.Background(), "ISSUE-42", "")
	_, resp, err := gh.Repositories.CreateFile(ctx, owner, name, "docs/NOTES.md", &github.RepositoryContentFileOptions{
		Message: github.String("notes"), Content: []byte("hello\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := reconcile.Prepare(reconcile.Action{Task: "ISSUE-42", Repo: owner + "/" + name, Spec: reconcile.File{Branch: "main", Path: "docs/NOTES.md", Message: "notes"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.Header.Get("X-Ghonce-Key"); got != p.Key() || resp.Header.Get("X-Ghonce-Outcome") != "created" {
		t.Fatalf("X-Ghonce-Key %q (%s), want main's %q, created", got, resp.Header.Get("X-Ghonce-Outcome"), p.Key())
	}
	_, again, err := gh.Repositories.CreateFile(ctx, owner, name, "docs/NOTES.md", &github.RepositoryContentFileOptions{
		Message: github.String("notes"), Content: []byte("hello\n"), Branch: github.String("main"),
	})
	if err != nil || again.Header.Get("X-Ghonce-Outcome") != "skipped" {
		t.Fatalf("the same write naming main: %v, outcome %q; want skipped", err, again.Header.Get("X-Ghonce-Outcome"))
	}
}
