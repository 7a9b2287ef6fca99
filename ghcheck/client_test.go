package ghcheck

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/migueleliasweb/go-github-mock/src/mock"
)

func TestNewBaseURL(t *testing.T) {
	for in, want := range map[string]string{
		"":                               "https://api.github.com/",
		"https://api.github.com":         "https://api.github.com/",
		"https://ghe.example.com/api/v3": "https://ghe.example.com/api/v3/",
		"http://127.0.0.1:8080":          "http://127.0.0.1:8080/",
		"http://127.0.0.1:8080/fake//":   "http://127.0.0.1:8080/fake/",
	} {
		t.Run(fmt.Sprintf("%q", in), func(t *testing.T) {
			c, err := New(Options{BaseURL: in, Token: testToken})
			if err != nil {
				t.Errorf("New(%q): %v", in, err)
				return
			}
			if got := c.gh.BaseURL.String(); got != want {
				t.Errorf("New(%q): base %s, want %s", in, got, want)
			}
		})
	}
	for in, want := range map[string]string{
		"https://api.github.com/":         "https://github.com/",
		"https://ghe.example.com/api/v3/": "https://ghe.example.com/",
		"http://127.0.0.1:8080/":          "",
	} {
		t.Run("web root of "+in, func(t *testing.T) {
			c, _ := New(Options{BaseURL: in, Token: testToken})
			if c.web != want {
				t.Errorf("web root of %s = %q, want %q", in, c.web, want)
			}
		})
	}
	for _, in := range []string{"::nope", "ftp://x", "api.github.com", "https://", "https://x:" + testToken + "@api.github.com", "https://x/?q=1"} {
		_, err := New(Options{BaseURL: in, Token: testToken})
		if err == nil || !strings.Contains(err.Error(), "base url") {
			t.Errorf("New(%q) = %v, want a base url error", in, err)
		}
		noToken(t, err)
	}
}

func TestNewToken(t *testing.T) {
	for _, tok := range []string{"", testToken + "\n", "a b"} {
		_, err := New(Options{Token: tok})
		if err == nil || !strings.Contains(err.Error(), "GH_TOKEN") {
			t.Errorf("New(token %q) = %v", tok, err)
		}
		if tok != "" && strings.Contains(err.Error(), strings.TrimSpace(tok)) {
			t.Errorf("error shows the token: %v", err)
		}
	}
}

// TestTokenNeverInErrors runs failing calls against a server that echoes
// the Authorization header in every error and checks every error text.
func TestTokenNeverInErrors(t *testing.T) {
	// Look-ups send requests concurrently: the handlers share sawToken.
	var sawToken atomic.Bool
	echo := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			auth := r.Header.Get("Authorization")
			if auth == "Bearer "+testToken {
				sawToken.Store(true)
			}
			reply(status, map[string]string{"message": "echo " + auth + " " + r.URL.String()})(w, r)
		}
	}
	c, _ := newTest(t, Options{TrustedAuthors: []string{me}},
		route(mock.GetUser, echo(401)),
		route(mock.GetReposPullsByOwnerByRepo, echo(500)),
		route(mock.GetReposIssuesByOwnerByRepo, echo(400)),
		route(mock.GetReposIssuesCommentsByOwnerByRepoByIssueNumber, echo(403)),
		route(getRefHeads, echo(500)),
		route(getContents, echo(502)),
		route(getCommit, echo(404)),
		route(mock.PostReposPullsByOwnerByRepo, echo(422)),
		route(mock.PostReposIssuesByOwnerByRepo, echo(500)),
		route(mock.PostReposIssuesCommentsByOwnerByRepoByIssueNumber, echo(401)),
		route(mock.PostReposGitRefsByOwnerByRepo, echo(422)),
	)
	ctx := context.Background()
	var errs []error
	_, err := c.Login(ctx)
	errs = append(errs, err)
	errs = append(errs,
		c.FindPR(ctx, repo, PRQuery{Key: keyFor("pr"), Base: "main", Heads: []string{"f"}}).Err,
		c.FindIssue(ctx, repo, IssueQuery{Key: keyFor("i")}).Err,
		c.FindComment(ctx, repo, 1, keyFor("c")).Err,
		c.FindBranch(ctx, repo, "b", sha1a).Err,
		c.FindFile(ctx, repo, "b", "p", nil).Err,
	)
	_, err = c.ResolveCommit(ctx, repo, "main")
	errs = append(errs, err)
	_, err = c.CreatePR(ctx, repo, keyFor("pr"), NewPR{Base: "main", Head: "f", Title: "t"})
	errs = append(errs, err)
	_, err = c.CreateIssue(ctx, repo, keyFor("i"), NewIssue{Title: "t"})
	errs = append(errs, err)
	_, err = c.CreateComment(ctx, repo, 1, keyFor("c"), "x")
	errs = append(errs, err)
	_, err = c.CreateBranch(ctx, repo, "b", sha1a)
	errs = append(errs, err)
	_, err = c.PutFile(ctx, repo, "b", "p", "m", nil, "")
	errs = append(errs, err)

	if !sawToken.Load() {
		t.Fatal("the server never saw the token: the test proves nothing")
	}
	for i, err := range errs {
		if err == nil {
			t.Errorf("call %d: no error", i)
			continue
		}
		noToken(t, err)
		var ce *CreateError
		if errors.As(err, &ce) {
			noToken(t, ce.Err)
		}
	}
}
