package ghcheck

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/taskkey"
)

// hintError is a user-facing message with the error behind it.
type hintError struct {
	msg string
	err error
}

func (e *hintError) Error() string { return e.msg }
func (e *hintError) Unwrap() error { return e.err }

// credentialsError is a Login error no rerun can fix; it matches
// ErrCredentials. Other hint errors (a missing commit, a file conflict) do
// not.
type credentialsError struct{ hintError }

func (e *credentialsError) Is(target error) bool { return target == ErrCredentials }

// ErrCredentials matches Login's errors that no rerun can fix: GitHub
// rejected the token, or the token cannot tell who it is and no trusted
// author was given. Other Login errors (network, 5xx) mean GitHub could
// not be asked.
var ErrCredentials = errors.New("github credentials cannot be used")

// Login returns the login of the token's identity, read once per Client
// with GET /user (a failed read is tried again on the next call).
//
// GitHub App installation tokens and Actions' GITHUB_TOKEN cannot read
// /user (403 or 404). Then, if Options.TrustedAuthors is set, Login returns
// "" and a nil error: only the trusted logins count as ours. Otherwise it
// returns an error asking for a trusted author. A 401 means GitHub rejected
// the token.
//
// GitHub API docs: https://docs.github.com/rest/users/users#get-the-authenticated-user
func (c *Client) Login(ctx context.Context) (string, error) {
	c.loginMu.Lock()
	defer c.loginMu.Unlock()
	if c.loginDone {
		return c.login, nil
	}
	if l := c.cachedLogin(ctx); l != "" {
		c.loginDone, c.login = true, l
		return l, nil
	}
	u, err := get(ctx, c.newRun(), func(ctx context.Context) (*github.User, *github.Response, error) {
		return c.gh.Users.Get(ctx, "")
	})
	switch st := httpStatus(err); {
	case err == nil:
	case st == http.StatusUnauthorized:
		return "", c.redact(&credentialsError{hintError{msg: "token rejected by GitHub (401 Bad credentials): check GH_TOKEN", err: err}})
	case st == http.StatusForbidden || st == http.StatusNotFound:
		if len(c.opts.TrustedAuthors) > 0 || len(c.opts.InstallationAuthors) > 0 {
			c.loginDone, c.login = true, ""
			return "", nil
		}
		return "", c.redact(&effect.AdviceError{
			Err: &credentialsError{hintError{
				msg: fmt.Sprintf("read token identity: GitHub answered %d to GET /user, as it does for GitHub App installation tokens and Actions' GITHUB_TOKEN", st),
				err: err,
			}},
			Option: effect.Option{Name: "trust-author", Value: "LOGIN"}, Set: true,
			Step: "%s, the login that authors its artifacts (e.g. github-actions[bot])",
		})
	default:
		return "", c.redact(fmt.Errorf("read token identity (GET /user): %w", err))
	}
	login := u.GetLogin()
	if login == "" {
		return "", errors.New("read token identity: GET /user answered without a login")
	}
	c.loginDone, c.login = true, login
	c.storeLogin(ctx, login)
	return login, nil
}

// Ours reports whether login is the token's identity or a trusted author,
// compared without case. It calls Login and returns its error.
func (c *Client) Ours(ctx context.Context, login string) (bool, error) {
	is, err := c.oursFunc(ctx)
	if err != nil {
		return false, err
	}
	return is(login), nil
}

// oursFunc resolves the identity once and returns a predicate for the
// authors of listed artifacts.
func (c *Client) oursFunc(ctx context.Context) (func(login string) bool, error) {
	id, err := c.Login(ctx)
	if err != nil {
		return nil, err
	}
	trusted := c.opts.TrustedAuthors
	if id == "" {
		// The token cannot read /user: an installation token.
		trusted = append(slices.Clip(trusted), c.opts.InstallationAuthors...)
	}
	return func(login string) bool {
		if login == "" {
			return false
		}
		if id != "" && strings.EqualFold(login, id) {
			return true
		}
		for _, t := range trusted {
			if strings.EqualFold(login, t) {
				return true
			}
		}
		return false
	}, nil
}

// oldestOurs is the oldest (least id) of items, nil ones skipped, whose
// author (by) is ours and whose body's first lines are key's marker, or
// nil: what every marker look-up finds.
func oldestOurs[T interface {
	*E
	GetBody() string
	GetID() int64
}, E any](items []T, by func(T) *github.User, ours func(string) bool, key string) T {
	var best T
	for _, it := range items {
		if it != nil && ours(by(it).GetLogin()) && taskkey.HasMarker(it.GetBody(), key) && (best == nil || it.GetID() < best.GetID()) {
			best = it
		}
	}
	return best
}
