package ghcheck

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/taskkey"
)

// A 4xx answer is GitHub's final word on a request: nothing was made, and
// the same request will be refused again until its cause is fixed. The
// functions here put such an answer in words a person can act on, instead
// of go-github's text, which prints the errors array as Go structs
// ("[{Resource:PullRequest Field:base Code:invalid Message:}]").

// refusalError is a 4xx answer put in words. The go-github error stays in
// the chain for Classify and errors.As.
type refusalError struct {
	msg string
	err error
}

func (e *refusalError) Error() string { return e.msg }
func (e *refusalError) Unwrap() error { return e.err }

// refusal returns the plain *github.ErrorResponse of a 4xx answer that is
// not a rate limit (a rate limit says when to come back on its own), or nil.
func refusal(err error) *github.ErrorResponse {
	var er *github.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil || isRateLimit(err) {
		return nil
	}
	if st := er.Response.StatusCode; st < 400 || st > 499 {
		return nil
	}
	return er
}

// fieldInvalid reports whether a 422 names field as invalid or missing.
func fieldInvalid(er *github.ErrorResponse, field string) bool {
	for _, e := range er.Errors {
		if strings.EqualFold(e.Field, field) && (e.Code == "invalid" || e.Code == "missing" || e.Code == "missing_field") {
			return true
		}
	}
	return false
}

// answerText renders what GitHub said: "422 Validation Failed: base is
// invalid; No commits between main and feat".
func answerText(er *github.ErrorResponse) string {
	msg := fmt.Sprintf("%d %s", er.Response.StatusCode, strings.TrimSpace(er.Message))
	if er.Message == "" {
		msg = fmt.Sprintf("%d %s", er.Response.StatusCode, http.StatusText(er.Response.StatusCode))
	}
	var details []string
	for _, e := range er.Errors {
		switch {
		case e.Message != "":
			details = append(details, e.Message)
		case e.Field != "" && e.Code != "":
			details = append(details, fmt.Sprintf("%s is %s", e.Field, strings.ReplaceAll(e.Code, "_", " ")))
		case e.Code != "":
			details = append(details, strings.ReplaceAll(e.Code, "_", " "))
		}
	}
	if len(details) > 0 {
		msg += ": " + strings.Join(details, "; ")
	}
	// It is followed by "; what to do": no sentence stop in between.
	return strings.TrimRight(msg, ". ")
}

// worded returns err put in words when it is a 4xx answer: what was asked
// (did), what GitHub answered, and hint (what to do; empty for none). Other
// errors are returned as did: err.
func worded(err error, did, hint string) error {
	er := refusal(err)
	if er == nil {
		return fmt.Errorf("%s: %w", did, err)
	}
	msg := fmt.Sprintf("%s: GitHub answered %s", did, answerText(er))
	if hint != "" {
		msg += "; " + hint
	}
	return &refusalError{msg: msg, err: err}
}

// repoNotFoundHint is what to do about a 404 from a repository's endpoint.
func repoNotFoundHint(r Repo) string {
	return fmt.Sprintf("repository %s does not exist, or this token cannot see it: check the repository's name and the token's access", r)
}

// prCreateRefused words a refused POST /repos/{o}/{r}/pulls. For 422 "A
// pull request already exists" it names the open pull request that holds
// the head (one more read, GET /repos/{o}/{r}/pulls?head=OWNER:BRANCH&state=open):
// the engine adopts it when it is ours, and otherwise reports this text.
func (c *Client) prCreateRefused(ctx context.Context, r Repo, key string, p NewPR, err error) error {
	did := fmt.Sprintf("create pull request %s <- %s in %s", p.Base, p.Head, r)
	er := refusal(err)
	if er == nil {
		return fmt.Errorf("%s: %w", did, err)
	}
	headOwner, branch := r.Owner, p.Head
	if o, b, ok := strings.Cut(p.Head, ":"); ok {
		headOwner, branch = o, b
	}
	switch st := er.Response.StatusCode; {
	case st == http.StatusNotFound:
		return worded(err, did, repoNotFoundHint(r))
	case st == http.StatusUnprocessableEntity && alreadyExists(er):
		hint, other := c.describeOpenPR(ctx, r, key, headOwner, branch)
		if other != "" { // ghonce made it for this key, as another identity
			return &effect.AdviceError{Err: worded(err, did, hint), Option: effect.Option{Name: "trust-author", Value: other}, Set: true, Step: "if that is your bot or app, %s"}
		}
		return worded(err, did, hint)
	case st == http.StatusUnprocessableEntity && fieldInvalid(er, "head"):
		where := r.String()
		if !strings.EqualFold(headOwner, r.Owner) {
			where = headOwner + "'s fork of " + r.Name
		}
		return worded(err, did, fmt.Sprintf("head branch %s is not pushed to %s: push it first (git push origin %s), then run again", branch, where, branch))
	case st == http.StatusUnprocessableEntity && fieldInvalid(er, "base"):
		return worded(err, did, fmt.Sprintf("base branch %s does not exist in %s", p.Base, r))
	case st == http.StatusUnprocessableEntity && containsFold(answerText(er), "no commits between"):
		return worded(err, did, fmt.Sprintf("head branch %s has no commit that %s lacks: commit and push the change first", branch, p.Base))
	}
	return worded(err, did, "")
}

// describeOpenPR names the open pull request on headOwner:branch, for the
// 422 GitHub gives a second one: number, author, URL, and what to do;
// other is its author when it carries key's marker but is not ours.
func (c *Client) describeOpenPR(ctx context.Context, r Repo, key, headOwner, branch string) (hint, other string) {
	prs, err := get(ctx, c.newRun(), func(ctx context.Context) ([]*github.PullRequest, *github.Response, error) {
		return c.gh.PullRequests.List(ctx, r.Owner, r.Name, &github.PullRequestListOptions{
			State: "open", Head: headOwner + ":" + branch, ListOptions: github.ListOptions{PerPage: 100},
		})
	})
	what := fmt.Sprintf("another open pull request already uses head %s:%s", headOwner, branch)
	if err == nil {
		for _, pr := range prs {
			// The filter is not trusted (see FindPR): check the head.
			if pr.GetHead().GetRef() != branch {
				continue
			}
			login := pr.GetUser().GetLogin()
			what = fmt.Sprintf("open pull request #%d by %s (%s) already uses head %s:%s", pr.GetNumber(), login, pr.GetHTMLURL(), headOwner, branch)
			if taskkey.HasMarker(pr.GetBody(), key) {
				// ghonce made it for this key, as another identity.
				what += " and carries this key's marker, but " + login + " does not count as ours"
				other = login
			}
			break
		}
	}
	return what + "; GitHub allows one open pull request per head and base: push the change to another head branch, or close that pull request", other
}

// issueRefused words a refused POST to an issue's or a repository's
// endpoint: a 404 is the repository (or, with number, the issue), a 410
// issues switched off.
func issueRefused(err error, r Repo, number int, did string) error {
	er := refusal(err)
	switch {
	case er == nil:
		return fmt.Errorf("%s: %w", did, err)
	case er.Response.StatusCode == http.StatusNotFound && number > 0:
		return worded(err, did, fmt.Sprintf("issue or pull request #%d does not exist in %s (or the repository does not, or this token cannot see it): check the number and the repository", number, r))
	case er.Response.StatusCode == http.StatusNotFound:
		return worded(err, did, repoNotFoundHint(r))
	case er.Response.StatusCode == http.StatusGone:
		return worded(err, did, fmt.Sprintf("issues are turned off in %s: turn them on in its settings, or file elsewhere", r))
	}
	return worded(err, did, "")
}
