package ghcheck

import (
	"context"
	"strings"
	"testing"

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
