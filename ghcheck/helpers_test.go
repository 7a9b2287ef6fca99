package ghcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"github.com/migueleliasweb/go-github-mock/src/mock"

	"github.com/ghonce/ghonce/taskkey"
)

// testToken is distinctive so that tests can search every error for it.
const testToken = "ghp_TESTtoken_d0_not_leak_7Q9xZ2"

const me = "ghonce-bot"

var repo = Repo{Owner: "octo", Name: "hello"}

func keyFor(step string) string {
	return taskkey.Key(taskkey.Identity{Task: "T-1", Step: step, Kind: "test", Repo: repo.String()})
}

// sleeper records the waits a Client asks for, without waiting.
type sleeper struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeper) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeper) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// newTest returns a Client on a go-github-mock backend and its sleeper.
// Unless a test sets TrustedAuthors or its own /user, /user answers me.
func newTest(t *testing.T, opts Options, routes ...mock.MockBackendOption) (*Client, *sleeper) {
	t.Helper()
	s := &sleeper{}
	opts.Token = testToken
	opts.Sleep = s.sleep
	opts.HTTPClient = mock.NewMockedHTTPClient(append(routes,
		mock.WithRequestMatchHandler(mock.GetUser, reply(200, github.User{Login: github.String(me)})))...)
	c, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c, s
}

// reply answers status with body (JSON unless []byte) and header pairs.
func reply(status int, body any, header ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		switch b := body.(type) {
		case []byte:
			w.Write(b)
		case nil:
		default:
			json.NewEncoder(w).Encode(b)
		}
	}
}

// counter counts the requests its handlers serve.
type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// seq serves the handlers in turn, the last one for every further request.
func (c *counter) seq(hs ...http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		i := min(c.n, len(hs)-1)
		c.n++
		c.mu.Unlock()
		hs[i](w, r)
	}
}

func route(ep mock.EndpointPattern, h http.HandlerFunc) mock.MockBackendOption {
	return mock.WithRequestMatchHandler(ep, h)
}

// Patterns that go-github-mock's {param} cannot express (a "/" inside).
var (
	getRefHeads = mock.EndpointPattern{Pattern: "/repos/{owner}/{repo}/git/ref/heads/{name:.+}", Method: "GET"}
	getContents = mock.EndpointPattern{Pattern: "/repos/{owner}/{repo}/contents/{path:.+}", Method: "GET"}
	putContents = mock.EndpointPattern{Pattern: "/repos/{owner}/{repo}/contents/{path:.+}", Method: "PUT"}
	getCommit   = mock.EndpointPattern{Pattern: "/repos/{owner}/{repo}/commits/{ref:.+}", Method: "GET"}
)

// fixture reads a recorded error body from testdata/errors.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "errors", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// noToken fails if the token shows in err's text or in any error it wraps.
func noToken(t *testing.T, err error) {
	t.Helper()
	for e := err; e != nil; {
		if strings.Contains(e.Error(), testToken) {
			t.Fatalf("token leaked in error: %v", e)
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
}

func user(login string) *github.User { return &github.User{Login: github.String(login)} }

func issue(n int, author, body string, isPR bool) *github.Issue {
	is := &github.Issue{
		Number:  github.Int(n),
		User:    user(author),
		Body:    github.String(body),
		State:   github.String("open"),
		HTMLURL: github.String(fmt.Sprintf("https://github.com/octo/hello/issues/%d", n)),
	}
	if isPR {
		is.PullRequestLinks = &github.PullRequestLinks{URL: github.String(fmt.Sprintf("https://api.github.com/repos/octo/hello/pulls/%d", n))}
		is.HTMLURL = github.String(fmt.Sprintf("https://github.com/octo/hello/pull/%d", n))
	}
	return is
}

func comment(id int64, author, body string) *github.IssueComment {
	return &github.IssueComment{
		ID:      github.Int64(id),
		User:    user(author),
		Body:    github.String(body),
		HTMLURL: github.String(fmt.Sprintf("https://github.com/octo/hello/issues/7#issuecomment-%d", id)),
	}
}

func pull(n int, author, headOwner, headRef, base, body string) *github.PullRequest {
	return &github.PullRequest{
		Number:  github.Int(n),
		User:    user(author),
		Body:    github.String(body),
		State:   github.String("open"),
		HTMLURL: github.String(fmt.Sprintf("https://github.com/octo/hello/pull/%d", n)),
		Head: &github.PullRequestBranch{
			Ref:   github.String(headRef),
			Label: github.String(headOwner + ":" + headRef),
			Repo:  &github.Repository{Owner: user(headOwner)},
		},
		Base: &github.PullRequestBranch{Ref: github.String(base)},
	}
}

// classOf returns the Class of a create's error, failing if it is not a
// *CreateError.
func classOf(t *testing.T, err error) Class {
	t.Helper()
	if err == nil {
		t.Fatal("want an error, got nil")
	}
	noToken(t, err)
	ce, ok := err.(*CreateError)
	if !ok {
		t.Fatalf("want *CreateError, got %T: %v", err, err)
	}
	return ce.Class
}

func wantState(t *testing.T, res Result, want State) {
	t.Helper()
	noToken(t, res.Err)
	if res.State != want {
		t.Fatalf("state = %v (err %v), want %v", res.State, res.Err, want)
	}
}
