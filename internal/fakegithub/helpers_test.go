package fakegithub

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
)

const (
	owner = "octo"
	name  = "hello"
	token = "tok-octo"
)

// fakeClock is a settable clock for Options.Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *fakeClock { return &fakeClock{t: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// newTest starts a fake with user octo (token tok-octo) and repository
// octo/hello, and a go-github client for octo.
func newTest(t *testing.T, opts Options) (*Server, *github.Client) {
	t.Helper()
	s := NewServer(opts)
	t.Cleanup(s.Close)
	s.AddUser(owner, token)
	s.AddRepo(owner, name, "main")
	return s, clientFor(t, s, token)
}

// clientFor is a go-github v66 client of the fake, as ghonce builds one:
// github.NewClient with BaseURL set to the fake's URL.
func clientFor(t *testing.T, s *Server, tok string) *github.Client {
	t.Helper()
	c := github.NewClient(nil).WithAuthToken(tok)
	u, err := url.Parse(s.URL())
	if err != nil {
		t.Fatalf("parse fake URL: %v", err)
	}
	c.BaseURL = u
	return c
}

// featureBranch creates branch one commit ahead of main.
func featureBranch(t *testing.T, s *Server, branch string) string {
	t.Helper()
	sha := s.AddCommit(owner, name, "main")
	if sha == "" {
		t.Fatal("AddCommit on main failed")
	}
	s.SetRef(owner, name, branch, sha)
	return sha
}

// rawResponse is an answer read by do.
type rawResponse struct {
	status int
	header http.Header
	body   []byte
}

func (r rawResponse) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	return m
}

// do sends a raw request (path relative to the API root, or an absolute
// URL) with tok and returns the answer.
func do(t *testing.T, s *Server, tok, method, path, body string) rawResponse {
	t.Helper()
	u := path
	if !strings.HasPrefix(path, "http") {
		u = strings.TrimSuffix(s.URL(), "/") + path
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, u, rd)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "token "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return rawResponse{status: resp.StatusCode, header: resp.Header, body: b}
}

// errorResponse asserts err is a go-github *ErrorResponse with status.
func errorResponse(t *testing.T, err error, status int) *github.ErrorResponse {
	t.Helper()
	var er *github.ErrorResponse
	if !errors.As(err, &er) {
		t.Fatalf("error = %T %v, want *github.ErrorResponse", err, err)
	}
	if er.Response.StatusCode != status {
		t.Fatalf("status = %d, want %d (%v)", er.Response.StatusCode, status, err)
	}
	return er
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
