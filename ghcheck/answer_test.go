package ghcheck

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-github/v66/github"
	"github.com/migueleliasweb/go-github-mock/src/mock"
)

// Every way a failed request leaves this package carries GitHub's answer
// as a *ResponseError, the field it named included, so no caller needs
// go-github's error types; an error GitHub never answered carries none.
func TestErrorsCarryGitHubsAnswer(t *testing.T) {
	t.Parallel()
	missingTitle := reply(422, map[string]any{"message": "Validation Failed",
		"errors": []map[string]string{{"resource": "Issue", "code": "missing_field", "field": "title"}}})
	c, _ := newTest(t, Options{},
		route(mock.PostReposIssuesByOwnerByRepo, missingTitle),
		route(mock.GetReposIssuesByOwnerByRepo, reply(http.StatusBadGateway, map[string]string{"message": "bad gateway"})),
		route(mock.PostReposGitRefsByOwnerByRepo, reply(404, map[string]string{"message": "Not Found"})),
	)
	ctx := context.Background()
	_, createErr := c.CreateIssue(ctx, repo, keyFor("s"), NewIssue{Body: "b"})
	find := c.FindIssue(ctx, repo, IssueQuery{Key: keyFor("s")})
	_, branchErr := c.CreateBranch(ctx, repo, "b", "0123456789abcdef0123456789abcdef01234567")
	_, shapeErr := c.CreateIssue(ctx, repo, "not-a-key", NewIssue{Body: "b"})
	for _, tc := range []struct {
		name   string
		err    error
		status int
		field  string
	}{
		{"a refused create names the field", createErr, 422, "title"},
		{"a failed read", find.Err, http.StatusBadGateway, ""},
		{"a 404", branchErr, 404, ""},
		{"refused before sending: no answer", shapeErr, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var re *ResponseError
			got := errors.As(tc.err, &re)
			if tc.status == 0 {
				if got {
					t.Fatalf("%v carries an answer %+v; GitHub was never asked", tc.err, re)
				}
				return
			}
			if !got || re.StatusCode != tc.status || re.Field != tc.field {
				t.Fatalf("%v: answer %+v, want status %d field %q", tc.err, re, tc.status, tc.field)
			}
			var er *github.ErrorResponse
			if !errors.As(tc.err, &er) {
				t.Fatalf("%v: go-github's error is no longer in the chain", tc.err)
			}
		})
	}
}
