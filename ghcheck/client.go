package ghcheck

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v66/github"
	"golang.org/x/oauth2"

	"github.com/ghonce/ghonce/internal/secret"
	"github.com/ghonce/ghonce/observe"
)

// Options configure a Client.
type Options struct {
	// BaseURL is the REST API root: https://api.github.com (default),
	// https://HOST/api/v3 for GitHub Enterprise, or a fake's URL. A trailing
	// slash is optional.
	BaseURL string
	// Token authenticates every request. It never appears in an error.
	Token string
	// TokenSource, if set, authenticates instead of Token: a GitHub App's
	// installation tokens, minted and refreshed as they expire. Each token
	// it gives never appears in an error either.
	TokenSource oauth2.TokenSource
	// HTTPClient, if set, is used as the transport base (tests).
	HTTPClient *http.Client
	// TrustedAuthors are logins whose artifacts count as ours besides the
	// token's own identity (e.g. "my-app[bot]"). Compared without case.
	TrustedAuthors []string
	// InstallationAuthors count as ours only when the token cannot read
	// GET /user, as an installation token cannot: inside GitHub Actions,
	// github-actions[bot] for the job's GITHUB_TOKEN. A personal token's
	// own login is then the only identity, as without this option.
	InstallationAuthors []string
	// MaxWait bounds the total time one call waits for rate limits to
	// reset before it gives up (default 2 minutes).
	MaxWait time.Duration
	// Sleep waits for d or until ctx ends (default: a timer). Tests inject it.
	Sleep func(ctx context.Context, d time.Duration) error
	// UserAgent is sent with every request.
	UserAgent string
	// Logf, if set, is told of every wait for a rate limit and of the
	// first retry of a failed read, once each, in words for a person.
	Logf func(format string, args ...any)
	// LoginCache, if set, remembers the token's login across processes
	// (keyed by TokenFingerprint, never the token), so Login asks GET /user
	// only the first time. Used only with a static Token.
	LoginCache LoginCache
	// Budget paces content-creating requests and bounds requests in flight
	// (see Budget); the zero value is GitHub's documented limits.
	Budget Budget
	// Metrics, if set, counts the requests sent (by method and status
	// code), the content-creating ones and the pacing sleeps before them.
	Metrics *observe.Metrics
	// Tracer, if set, traces each request sent as a client span, a child
	// of the span its context carries.
	Tracer *observe.Tracer
}

// Client is the GitHub layer. It is safe for concurrent use.
type Client struct {
	gh   *github.Client
	opts Options
	// web is the web root for links GitHub does not return (a branch's
	// tree), e.g. https://github.com/; empty when it cannot be derived.
	web string

	loginMu   sync.Mutex
	loginDone bool
	login     string // the token's identity; "" when /user is not readable
	// fingerprint names Token at BaseURL for the LoginCache; "" without a
	// static token.
	fingerprint string

	budget *budget
	etags  *etagCache
	stats  *stats
	clock  *githubClock

	// files holds, per "owner/name\x00branch\x00path", what FindFile
	// read of a file that is not done yet, for the PutFile that follows.
	files sync.Map

	// secrets are the tokens requests were sent with (Options.Token, each
	// one Options.TokenSource gave), scrubbed from every error.
	secrets *secret.Set
}

// NewPR is what CreatePR sends.
type NewPR struct {
	Base, Head, Title, Body string
	Draft                   bool
	Labels                  []string // user labels; the key's label is added too
	// LabelLater: CreatePR only opens the pull request (one request);
	// the caller adds the labels with MendPRLabels, off the path to its
	// answer (reconcile's engine does, after answering).
	LabelLater bool
}

// PRQuery says where FindPR looks.
type PRQuery struct {
	Key   string
	Base  string
	Heads []string // "branch" (in the repository's owner) or "owner:branch"
	// Since, if set, is when the first attempt of Key began (less clock
	// skew): the newest pull requests, one page of RecentPRs, are then read
	// first, and when they reach back to Since they answer alone.
	Since time.Time
	// SkipRecent leaves the newest-pull-requests look-up out. It exists
	// for a PR whose attempt died between creating and labelling it with
	// its ledger lost; a caller whose ledger vouches that no attempt of Key
	// was ever made from it sets it (see reconcile.Config).
	SkipRecent bool
}

// IssueQuery says how FindIssue looks.
type IssueQuery struct {
	Key string
}

// NewIssue is what CreateIssue sends.
type NewIssue struct {
	Title, Body string
	Labels      []string
}

const (
	defaultBaseURL   = "https://api.github.com/"
	defaultMaxWait   = 2 * time.Minute
	defaultUserAgent = "ghonce"
	// defaultTimeout bounds one HTTP exchange when Options.HTTPClient is
	// nil, so a hung connection cannot stall a run forever. A timeout after
	// sending classifies as ClassMaybe, never as "not created".
	defaultTimeout = 2 * time.Minute
)

// New returns a Client for the REST API at opts.BaseURL, authenticated with
// opts.Token through a static oauth2 token source. If opts.HTTPClient is set,
// its Transport (http.DefaultTransport when nil) carries the requests.
//
// New makes no request; the token's identity is read lazily by Login.
func New(opts Options) (*Client, error) {
	if opts.Token == "" && opts.TokenSource == nil {
		return nil, errors.New("create github client: no token: set GH_TOKEN or GITHUB_TOKEN")
	}
	if strings.ContainsFunc(opts.Token, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		// Never echo the token itself.
		return nil, errors.New("create github client: token contains spaces or control characters: check GH_TOKEN (a stray newline?)")
	}
	base, err := parseBaseURL(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = defaultMaxWait
	}
	if opts.Sleep == nil {
		opts.Sleep = sleepTimer
	}
	if opts.UserAgent == "" {
		opts.UserAgent = defaultUserAgent
	}
	opts.TrustedAuthors = trimmed(opts.TrustedAuthors)
	opts.InstallationAuthors = trimmed(opts.InstallationAuthors)

	var hc http.Client
	if opts.HTTPClient != nil {
		hc = *opts.HTTPClient
	} else {
		hc.Timeout = defaultTimeout
	}
	inner := hc.Transport
	if inner == nil {
		inner = http.DefaultTransport
	}
	inner = observe.Transport(inner, opts.Tracer, opts.Metrics)
	// The tracker sits under the oauth2 transport, right above the real
	// one: if it was never reached, no byte of the request left.
	secrets := &secret.Set{}
	secrets.Add(opts.Token)
	var src oauth2.TokenSource = seenSource{opts.TokenSource, secrets}
	if opts.TokenSource == nil {
		src = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: opts.Token})
	}
	b := newBudget(opts.Budget)
	etags := newETagCache()
	st := &stats{metrics: opts.Metrics}
	b.stats = st
	clock := &githubClock{now: time.Now}
	hc.Transport = roundTripOnly{&oauth2.Transport{
		Source: src,
		Base:   &sendTracker{base: inner, budget: b, etags: etags, stats: st, clock: clock},
	}}

	gh := github.NewClient(&hc)
	// Set BaseURL directly: WithEnterpriseURLs would append "api/v3/" to a
	// fake's URL.
	gh.BaseURL = base
	gh.UserAgent = opts.UserAgent

	c := &Client{gh: gh, opts: opts, web: webRoot(base), budget: b, etags: etags, stats: st, clock: clock, secrets: secrets}
	if opts.TokenSource == nil {
		c.fingerprint = TokenFingerprint(base.String(), opts.Token)
	}
	return c, nil
}

// parseBaseURL parses an API root and gives it exactly one trailing slash.
func parseBaseURL(s string) (*url.URL, error) {
	if s == "" {
		s = defaultBaseURL
	}
	bad := func(why string) error {
		return fmt.Errorf("parse base url %q: %s: want e.g. https://api.github.com or https://HOST/api/v3", redactURL(s), why)
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return nil, bad("not a url")
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, bad("scheme must be http or https")
	case u.Host == "":
		return nil, bad("no host")
	case u.User != nil:
		return nil, bad("it must not contain credentials; pass the token separately")
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return nil, bad("it must not have a query or fragment")
	}
	u.Path = strings.TrimRight(u.Path, "/") + "/"
	u.RawPath = ""
	return u, nil
}

// redactURL hides any userinfo in a URL that did not parse as wanted.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		u.User = url.User("REDACTED")
		return u.String()
	}
	if i := strings.Index(s, "@"); i >= 0 {
		return "REDACTED" + s[i:]
	}
	return s
}

// webRoot derives the web root from the API root: api.github.com serves
// github.com; https://HOST/api/v3/ serves https://HOST/. Anything else (a
// fake) has no known web root.
func webRoot(api *url.URL) string {
	switch {
	case strings.EqualFold(api.Host, "api.github.com"):
		return "https://github.com/"
	case strings.HasSuffix(api.Path, "/api/v3/"):
		return api.Scheme + "://" + api.Host + strings.TrimSuffix(api.Path, "api/v3/")
	}
	return ""
}

func trimmed(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// sleepTimer waits for d or until ctx ends.
func sleepTimer(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// seenSource records each token src gives in set, before it is used.
type seenSource struct {
	src oauth2.TokenSource
	set *secret.Set
}

func (s seenSource) Token() (*oauth2.Token, error) {
	t, err := s.src.Token()
	if t != nil {
		s.set.Add(t.AccessToken)
	}
	return t, err
}

// redactedError hides the tokens in the text of an error. go-github's
// errors carry URLs and GitHub's message, not headers, so a token should
// never be there; this makes sure even if a server echoes one: each token
// the client sent, as it was minted by the time the text is read, and
// anything shaped like a GitHub token. Unwrap keeps errors.As working.
type redactedError struct {
	err     error
	secrets *secret.Set
}

func (e *redactedError) Error() string { return e.secrets.Scrub(e.err.Error()) }
func (e *redactedError) Unwrap() error { return e.err }

// redact wraps err so that its text never shows a token, and scrubs the
// tokens from the go-github errors it wraps, whose fields a caller may
// print on their own. Every error this package returns passes here, and
// leaves with GitHub's answer, if any, as a *ResponseError.
func (c *Client) redact(err error) error {
	if err == nil {
		return nil
	}
	err = withResponse(err)
	c.scrub(err)
	if _, ok := err.(*redactedError); ok {
		return err
	}
	return &redactedError{err: err, secrets: c.secrets}
}

// scrub replaces the tokens in the text fields of the errors in err's
// chain that carry what a server sent. It is the one scrubbing path.
func (c *Client) scrub(err error) { scrubChain(err, c.secrets) }

func scrubChain(err error, secrets *secret.Set) {
	clean := func(s *string) { *s = secrets.Scrub(*s) }
	for e := err; e != nil; {
		switch v := e.(type) {
		case *github.ErrorResponse:
			clean(&v.Message)
			clean(&v.DocumentationURL)
			for i := range v.Errors {
				clean(&v.Errors[i].Message)
			}
		case *github.RateLimitError:
			clean(&v.Message)
		case *github.AbuseRateLimitError:
			clean(&v.Message)
		case *github.TwoFactorAuthError:
			clean(&v.Message)
		case *url.Error:
			clean(&v.URL)
		}
		switch u := e.(type) {
		case interface{ Unwrap() error }:
			e = u.Unwrap()
		case interface{ Unwrap() []error }:
			for _, w := range u.Unwrap() {
				scrubChain(w, secrets)
			}
			e = nil
		default:
			e = nil
		}
	}
}

// unknown is the Result of a read that failed.
func (c *Client) unknown(err error) Result {
	return Result{State: Unknown, Err: c.redact(err)}
}

// createErr is the error of a create that failed with class cl.
func (c *Client) createErr(cl Class, err error) error {
	return &CreateError{Class: cl, Err: c.redact(err)}
}

// roundTripOnly hides every method but RoundTrip. net/http calls a
// transport's legacy CancelRequest when Timeout fires, and oauth2.Transport
// answers that by logging a deprecation notice to the standard logger,
// which would land on a user's stderr; cancellation goes by context anyway.
type roundTripOnly struct{ rt http.RoundTripper }

func (t roundTripOnly) RoundTrip(r *http.Request) (*http.Response, error) { return t.rt.RoundTrip(r) }
