// Package fgtest holds the helpers the fake GitHub's own tests and the
// test kit's (package fixtures) share. It names neither package: it works
// on any fake through Fake, so the fake's internal tests can import it, and
// it never reaches the shipped binary.
package fgtest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/ledger/ledgertest"
)

// The user and repository Seed adds: user Owner (token Token) owns
// Owner/Name, whose default branch is main.
const (
	Owner = "octo"
	Name  = "hello"
	Token = "tok-octo"
)

// Fake is what the helpers use of a fake GitHub (fakegithub.Server and
// fixtures.Server both are one).
type Fake interface {
	URL() string
	AddUser(login, token string)
	AddRepo(owner, name, defaultBranch string) (headSHA string)
	AddCommit(owner, repo, branch string) (sha string)
	SetRef(owner, repo, branch, sha string)
}

// Seed adds user Owner (token Token) and repository Owner/Name to s, and
// returns a go-github client for Owner.
func Seed(t *testing.T, s Fake) *github.Client {
	t.Helper()
	s.AddUser(Owner, Token)
	s.AddRepo(Owner, Name, "main")
	return Client(t, s, Token)
}

// Clock is a settable clock for the fake's Options.Now.
type Clock = ledgertest.Clock

// NewClock is a Clock at 2024-05-01 12:00 UTC.
func NewClock() *Clock { return ledgertest.NewClock(time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)) }

// Client is a go-github v66 client of the fake, as ghonce builds one:
// github.NewClient with BaseURL set to the fake's URL.
func Client(t *testing.T, s Fake, tok string) *github.Client {
	t.Helper()
	c := github.NewClient(nil).WithAuthToken(tok)
	u, err := url.Parse(s.URL())
	if err != nil {
		t.Fatalf("parse fake URL: %v", err)
	}
	c.BaseURL = u
	return c
}

// FeatureBranch creates branch one commit ahead of main in Owner/Name.
func FeatureBranch(t *testing.T, s Fake, branch string) string {
	t.Helper()
	sha := s.AddCommit(Owner, Name, "main")
	if sha == "" {
		t.Fatal("AddCommit on main failed")
	}
	s.SetRef(Owner, Name, branch, sha)
	return sha
}

// Response is an answer read by Do.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON is the answer's body decoded as an object.
func (r Response) JSON(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
	return m
}

// Do sends a raw request (path relative to the API root, or an absolute
// URL) with tok and returns the answer.
func Do(t *testing.T, s Fake, tok, method, path, body string) Response {
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
	return Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// ErrorResponse asserts err is a go-github *ErrorResponse with status.
func ErrorResponse(t *testing.T, err error, status int) *github.ErrorResponse {
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

// NewPR is a pull request from head to base whose body carries a ghonce
// key marker.
func NewPR(head, base string) *github.NewPullRequest {
	return &github.NewPullRequest{Title: github.String("Fix " + head), Head: github.String(head), Base: github.String(base), Body: github.String("<!-- ghonce:key=gk1_abc -->\nbody")}
}
