package ghcheck

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v66/github"
	"github.com/migueleliasweb/go-github-mock/src/mock"
	"golang.org/x/oauth2"
)

// Under a GitHub App (a TokenSource, no static Token) there is no secret
// to scrub: GitHub's words reach the caller as GitHub wrote them, not
// with "[REDACTED]" between every letter (an empty string matches there).
func TestTokenSourceErrorsKeepGitHubsWords(t *testing.T) {
	s := &sleeper{}
	c, err := New(Options{
		TokenSource:    oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "ghs_installation"}),
		Sleep:          s.sleep,
		TrustedAuthors: []string{me},
		HTTPClient: mock.NewMockedHTTPClient(
			route(mock.GetReposIssuesByOwnerByRepo, reply(403, map[string]string{"message": "Resource not accessible by integration"})),
			route(mock.PostReposIssuesByOwnerByRepo, reply(422, map[string]string{"message": "Validation Failed"})),
		),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, cerr := c.CreateIssue(ctx, repo, keyFor("i"), NewIssue{Title: "t"})
	for _, e := range []struct {
		err  error
		want string
	}{
		{c.FindIssue(ctx, repo, IssueQuery{Key: keyFor("i")}).Err, "Resource not accessible by integration"},
		{cerr, "Validation Failed"},
	} {
		if e.err == nil {
			t.Fatalf("no error, want GitHub's %q", e.want)
		}
		if msg := e.err.Error(); !strings.Contains(msg, e.want) || strings.Contains(msg, "REDACTED") {
			t.Errorf("error %q: want GitHub's %q, unscrubbed", msg, e.want)
		}
	}
}

// A GitHub App's installation token is scrubbed as a static token is, in
// the stateless format GitHub mints now (ghs_APPID_JWT, about 520
// characters, two dots): an answer that echoes the token, or a token a
// stranger's App minted, shows neither in the error's text nor in
// go-github's error fields, not even the part after a dot.
func TestTokenSourceTokensAreScrubbed(t *testing.T) {
	sig := strings.Repeat("c2lnbmF0dXJlX3BhcnQ", 18)
	minted := "ghs_31337_eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9." + strings.Repeat("eyJpbnN0YWxsYXRpb24iOjQ", 6) + "." + sig
	if len(minted) < 500 || strings.Count(minted, ".") != 2 {
		t.Fatalf("the test token has %d characters, %d dots", len(minted), strings.Count(minted, "."))
	}
	other := strings.Replace(minted, "31337", "4242", 1)
	echo := func(w http.ResponseWriter, r *http.Request) {
		msg := "Bad credentials: " + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ") + " (and " + other + ")"
		reply(422, map[string]any{"message": msg, "errors": []map[string]string{{"code": "custom", "message": msg}}})(w, r)
	}
	c, err := New(Options{
		TokenSource:    oauth2.StaticTokenSource(&oauth2.Token{AccessToken: minted}),
		Sleep:          (&sleeper{}).sleep,
		TrustedAuthors: []string{me},
		HTTPClient:     mock.NewMockedHTTPClient(route(mock.PostReposIssuesByOwnerByRepo, echo)),
	})
	if err != nil {
		t.Fatal(err)
	}
	_, cerr := c.CreateIssue(context.Background(), repo, keyFor("i"), NewIssue{Title: "t"})
	if cerr == nil {
		t.Fatal("no error, want GitHub's 422")
	}
	var er *github.ErrorResponse
	if !errors.As(cerr, &er) || len(er.Errors) != 1 {
		t.Fatalf("error %v: want a *github.ErrorResponse with GitHub's errors", cerr)
	}
	for _, text := range []string{cerr.Error(), er.Message, er.Errors[0].Message} {
		if strings.Contains(text, sig[:40]) || strings.Contains(text, "ghs_") || !strings.Contains(text, "Bad credentials: [REDACTED] (and [REDACTED])") {
			t.Errorf("a token shows: %q", text)
		}
	}
}
