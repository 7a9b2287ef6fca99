package ghcheck

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/google/go-github/v66/github"
)

// Options configure a Client.
type Options struct {
	// BaseURL is the REST API root: https://api.github.com (default),
	// https://HOST/api/v3 for GitHub Enterprise, or a fake's URL. A trailing
	// slash is optional.
	BaseURL string
	// Token authenticates every request. It never appears in an error.
	Token string
	// HTTPClient, if set, is used as the transport base (tests).
	HTTPClient *http.Client
	// TrustedAuthors are logins whose artifacts count as ours besides the
	// token's own identity (e.g. "my-app[bot]"). Compared without case.
	TrustedAuthors []string
	// MaxWait bounds the total time one call waits for rate limits to
	// reset before it gives up (default 2 minutes).
	MaxWait time.Duration
	// Sleep waits for d or until ctx ends (default: a timer). Tests inject it.
	Sleep func(ctx context.Context, d time.Duration) error
	// UserAgent is sent with every request.
	UserAgent string
}

// Client is the GitHub layer. It is safe for concurrent use.
type Client struct {
	gh   *github.Client
	opts Options
}

// NewPR is what CreatePR sends.
type NewPR struct {
	Base, Head, Title, Body string
	Draft                   bool
	Labels                  []string // user labels; the key's label is added too
}

// PRQuery says where FindPR looks.
type PRQuery struct {
	Key   string
	Base  string
	Heads []string // "branch" (in the repository's owner) or "owner:branch"
}

// NewIssue is what CreateIssue sends.
type NewIssue struct {
	Title, Body string
	Labels      []string
}

var errTODO = errors.New("ghcheck: not implemented yet")
