package fakegithub

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Interceptor is the fake's one door for a test kit. The fake keeps
// GitHub's semantics and nothing else; faults (a 5xx, a dropped answer),
// latency and the hooks where a test kills its client live in package
// fixtures, which reaches the request path only through these four calls
// (Options.Intercept). They run without the server's lock held, in the
// request's goroutine, so they may block it and may call the server's
// inspection methods.
type Interceptor interface {
	// Arrived runs once a request's body has arrived, before anything else
	// is done with it. False abandons the request with no answer (its
	// client went away).
	Arrived(r *http.Request) bool
	// Routed runs for a request that passed authentication, routing and
	// the rate limits, before its JSON body is parsed. A nil Verdict lets
	// the fake answer.
	Routed(x *Exchange) *Verdict
	// Writing runs for a request other than GET and HEAD right before its
	// endpoint: it has fully arrived and nothing of it is stored. False
	// abandons it: the endpoint does not run, Server.Writes does not count
	// it and the connection is closed with no answer.
	Writing(w *PendingWrite) bool
	// Committed runs after a write is stored and before its answer is
	// written. Writes that fail validation store nothing and do not call
	// it.
	Committed(c *Commit)
}

// Exchange is a routed request as Interceptor.Routed sees it.
type Exchange struct {
	// Login is the authenticated user and UserID its id on the fake.
	Login  string
	UserID int64
	// RateHeader holds the X-RateLimit-* headers the fake's own answer
	// would carry (a copy).
	RateHeader http.Header
	// Now is the fake's clock (Options.Now) when the request was routed.
	Now time.Time
	// Body is the request's body as it arrived.
	Body []byte

	r    *http.Request
	segs []string
}

// Request returns a copy of the request whose URL.Path is relative to the
// API root ("/repos/o/r/pulls"; a /repositories/{id}/... path is shown as
// /repos/{owner}/{name}/...). Its Body is not set: read Exchange.Body.
func (x *Exchange) Request() *http.Request {
	fr := x.r.Clone(x.r.Context())
	esc := "/" + strings.Join(x.segs, "/")
	fr.URL.RawPath = esc
	if p, err := url.PathUnescape(esc); err == nil {
		fr.URL.Path = p
	}
	fr.Body = io.NopCloser(bytes.NewReader(nil))
	return fr
}

// Verdict is an answer an Interceptor gives instead of the fake's.
type Verdict struct {
	// Name is recorded as Request.Fault.
	Name fmt.Stringer
	// AfterCommit runs the endpoint first, so a write is stored (and
	// Interceptor.Committed runs), and then answers this instead.
	AfterCommit bool
	// Drop closes the connection with no answer.
	Drop bool
	// Status, Header and Body are the answer when Drop is false. Body is
	// sent as JSON. After a commit the rate headers are added to Header,
	// and a Status of 0 keeps the fake's own answer.
	Status int
	Header http.Header
	Body   []byte
}

func (v *Verdict) reply() *reply {
	return &reply{status: v.Status, body: v.Body, header: v.Header}
}

func (s *Server) exchange(c *call, rateHdr http.Header) *Exchange {
	s.mu.Lock()
	id := s.userFor(c.login).id
	now := s.now
	s.mu.Unlock()
	return &Exchange{Login: c.login, UserID: id, RateHeader: rateHdr.Clone(), Now: now(), Body: c.body, r: c.r, segs: c.segs}
}

// The answers below are GitHub's, for an Interceptor to give: the fake
// gives them itself when a real limit is reached.

// Error is GitHub's error answer: status and {"message", "documentation_url"},
// with the rate headers.
func (x *Exchange) Error(status int, message string) *Verdict {
	return x.verdict(errorReply(status, message))
}

// TooManyRequests is a plain 429 with the secondary limit's message (which
// go-github makes an *ErrorResponse), with Retry-After when retryAfter > 0.
func (x *Exchange) TooManyRequests(retryAfter time.Duration) *Verdict {
	rep := jsonReply(http.StatusTooManyRequests, errorBody{Message: secondaryMsg, DocumentationURL: secondaryDocURL})
	rep.header = x.RateHeader.Clone()
	if retryAfter > 0 {
		rep.header.Set("Retry-After", retryAfterHeader(retryAfter))
	}
	return &Verdict{Status: rep.status, Header: rep.header, Body: rep.body}
}

// SecondaryLimit is GitHub's 403 for a secondary rate limit (go-github:
// *AbuseRateLimitError), with Retry-After in whole seconds, rounded up,
// unless retryAfter is negative.
func (x *Exchange) SecondaryLimit(retryAfter time.Duration) *Verdict {
	return x.verdict(secondaryLimitReply(x.RateHeader, retryAfter))
}

// PrimaryLimit is GitHub's 403 for a spent primary rate limit, with
// x-ratelimit-remaining: 0 and x-ratelimit-reset: reset (go-github makes it
// a *RateLimitError and refuses requests locally until then).
func (x *Exchange) PrimaryLimit(reset time.Time) *Verdict {
	limit, _ := strconv.Atoi(x.RateHeader.Get("X-RateLimit-Limit"))
	return x.verdict(primaryLimitReply(x.UserID, rateHeader(limit, limit, reset)))
}

func (x *Exchange) verdict(rep *reply) *Verdict {
	if rep.header == nil {
		rep.header = x.RateHeader.Clone()
	}
	return &Verdict{Status: rep.status, Header: rep.header, Body: rep.body}
}
