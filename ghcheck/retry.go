package ghcheck

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/internal/human"
)

// Every request goes through run.do, the one place that waits for rate
// limits and retries. The rules:
//
//   - Rate-limit answers (a 403 primary limit, a 403 or 429 secondary
//     limit, a plain 429) and go-github's local refusals before a known
//     reset prove that nothing was created: wait (Options.Sleep) and retry,
//     as long as the waits of one operation add up to at most
//     Options.MaxWait; otherwise fail with an error that says when the
//     limit resets.
//   - Idempotent requests (reads, a close, a label's description) also
//     retry 5xx and network errors, up to maxRetries times with a short
//     backoff. Adding labels is not one: a label a person removed in
//     between would be applied, and its workflows fired, twice.
//   - Creates retry only what proves nothing was created (a rate-limit
//     answer, a request that was not sent); never a ClassMaybe.

const (
	maxRetries = 3
	// firstBackoff is the first wait before retrying a failed read; it
	// doubles on each retry.
	firstBackoff = time.Second
	// secondaryBackoff is the first wait after a secondary rate limit
	// without Retry-After, as GitHub's docs advise; it doubles.
	secondaryBackoff = time.Minute
	// minRateWait is the shortest wait for a rate limit, so a "Retry-After:
	// 0" cannot make a busy loop.
	minRateWait = time.Second
	// resetBuffer is added to a primary limit's reset time: the reset is
	// in whole seconds and clocks differ.
	resetBuffer = time.Second
	// maxPages stops a runaway pagination (100,000 items at 100 a page).
	maxPages = 1000
)

// bypassLocalLimit is go-github v66's context key (bypassRateLimitCheck,
// unexported, the iota before SleepUntilPrimaryRateLimitResetWhenRateLimited)
// that skips its local refusal before a known reset. do sets it only on the
// attempt after it has itself waited for that reset with Options.Sleep: the
// wait is done, so go-github's wall-clock bookkeeping must not refuse again
// (with an injected Sleep no wall-clock time passes). The rate-limit tests
// fail if a go-github upgrade moves this key.
const bypassLocalLimit = github.SleepUntilPrimaryRateLimitResetWhenRateLimited - 1

// sentKey is the context key of the *atomic.Bool that sendTracker sets when
// a request reaches the real transport.
type sentKey struct{}

// sendTracker sits right above the real transport. A request that never
// reached it sent nothing. It also spends the budget: it bounds requests in
// flight, paces content-creating requests (both before anything is sent,
// so a wait cut short by the context is "not sent"), and makes repeated
// reads conditional (etag.go).
type sendTracker struct {
	base   http.RoundTripper
	budget *budget
	etags  *etagCache
	stats  *stats
	clock  *githubClock
}

func (t *sendTracker) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.roundTrip(req)
	t.clock.observe(resp)
	return resp, err
}

func (t *sendTracker) roundTrip(req *http.Request) (*http.Response, error) {
	fail := func(err error) (*http.Response, error) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	if err := req.Context().Err(); err != nil {
		return fail(err)
	}
	release, err := t.budget.acquire(req.Context(), creates(req.Method))
	if err != nil {
		return fail(err)
	}
	defer release()
	if sent, ok := req.Context().Value(sentKey{}).(*atomic.Bool); ok {
		sent.Store(true)
	}
	t.stats.sent.Add(1)
	if creates(req.Method) {
		t.stats.metrics.ContentWrite()
	}
	if req.Method != http.MethodGet {
		return t.base.RoundTrip(req)
	}
	return t.etags.roundTrip(t.base, req, t.stats)
}

// policy says which failures a request may retry.
type policy int

const (
	// idempotent requests retry anything that may succeed next time.
	idempotent policy = iota + 1
	// createOnce requests retry only what proves nothing was created.
	createOnce
)

// run is one operation (one exported method call): its rate-limit waits
// share one Options.MaxWait budget.
type run struct {
	c      *Client
	waited time.Duration // on rate limits so far
	bypass bool          // waited for a limit: skip go-github's local refusal
	abuse  time.Duration // next secondary-limit backoff without Retry-After
}

func (c *Client) newRun() *run { return &run{c: c, abuse: secondaryBackoff} }

// read runs an idempotent request.
func (rn *run) read(ctx context.Context, fn func(context.Context) (*github.Response, error)) error {
	_, err := rn.do(ctx, idempotent, fn)
	return err
}

// create runs a request that must not be repeated once it may have taken
// effect; it returns the failure's Class.
func (rn *run) create(ctx context.Context, fn func(context.Context) (*github.Response, error)) (Class, error) {
	return rn.do(ctx, createOnce, fn)
}

// get is rn.read for a go-github call that answers a value: it returns the
// value of the attempt that ended the run.
func get[T any](ctx context.Context, rn *run, fn func(context.Context) (T, *github.Response, error)) (T, error) {
	v, _, err := send(ctx, rn, idempotent, fn)
	return v, err
}

// send is rn.do under policy p for a go-github call that answers a value:
// it returns the value of the attempt that ended the run, and the failure's
// Class.
func send[T any](ctx context.Context, rn *run, p policy, fn func(context.Context) (T, *github.Response, error)) (T, Class, error) {
	var v T
	class, err := rn.do(ctx, p, func(ctx context.Context) (resp *github.Response, err error) {
		v, resp, err = fn(ctx)
		return resp, err
	})
	return v, class, err
}

// do runs fn until it succeeds or must stop, and returns the last error and
// its Class.
func (rn *run) do(ctx context.Context, p policy, fn func(context.Context) (*github.Response, error)) (Class, error) {
	retries := 0
	for {
		var sent atomic.Bool
		actx := context.WithValue(ctx, sentKey{}, &sent)
		if rn.bypass {
			actx = context.WithValue(actx, bypassLocalLimit, true)
		}
		_, err := fn(actx)
		if err == nil {
			return 0, nil
		}
		rn.c.scrub(err) // before anything formats its text
		if httpStatus(err) == http.StatusUnauthorized {
			rn.c.forgetLogin(ctx)
		}
		if !sent.Load() {
			err = &notSentError{err}
		}
		class := Classify(err)
		if ctx.Err() != nil {
			return class, err
		}

		if d, reset, ok := rn.rateLimitWait(err); ok {
			d = max(d, minRateWait)
			if rn.waited+d > rn.c.opts.MaxWait {
				return class, &rateLimitedError{reset: reset, maxWait: rn.c.opts.MaxWait, err: err}
			}
			rn.c.logf("GitHub rate limit: waiting %s, until %s, before trying again (nothing was created meanwhile)", human.Duration(d), reset.UTC().Format("15:04:05 MST"))
			if serr := rn.c.opts.Sleep(ctx, d); serr != nil {
				return class, fmt.Errorf("wait for github rate limit: %w (after %w)", serr, err)
			}
			rn.waited += d
			rn.bypass = true
			continue
		}

		retry := false
		switch class {
		case ClassMaybe:
			retry = p == idempotent
		case ClassNotSent:
			// Reached the transport but never left (a dial error): worth
			// another try. Not reached at all: the request could not be
			// built, and will not be next time either.
			retry = sent.Load()
		}
		if !retry || retries >= maxRetries {
			return class, err
		}
		if retries == 0 {
			rn.c.logf("GitHub did not answer a read (%v); trying again in %s", err, human.Duration(firstBackoff))
		}
		if serr := rn.c.opts.Sleep(ctx, firstBackoff<<retries); serr != nil {
			return class, fmt.Errorf("wait to retry: %w (after %w)", serr, err)
		}
		retries++
	}
}

func (c *Client) logf(format string, args ...any) {
	if c.opts.Logf != nil {
		c.opts.Logf(format, args...)
	}
}

// rateLimitWait says how long to wait if err is a rate-limit answer or
// refusal, and when the limit resets.
func (rn *run) rateLimitWait(err error) (d time.Duration, reset time.Time, ok bool) {
	now := time.Now()
	until := func(t time.Time) (time.Duration, time.Time, bool) {
		d := time.Until(t) + resetBuffer
		if d < resetBuffer {
			d = resetBuffer
		}
		return d, now.Add(d), true
	}
	backoff := func() (time.Duration, time.Time, bool) {
		d := rn.abuse
		rn.abuse *= 2
		return d, now.Add(d), true
	}

	var rl *github.RateLimitError
	if errors.As(err, &rl) {
		if rl.Rate.Reset.IsZero() {
			return backoff()
		}
		return until(rl.Rate.Reset.Time)
	}
	var ab *github.AbuseRateLimitError
	if errors.As(err, &ab) {
		if ab.RetryAfter != nil && *ab.RetryAfter > 0 {
			return *ab.RetryAfter, now.Add(*ab.RetryAfter), true
		}
		return backoff()
	}
	var er *github.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil || !isRateLimitResponse(er) {
		return 0, time.Time{}, false
	}
	h := er.Response.Header
	if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
			d := time.Duration(s) * time.Second
			return d, now.Add(d), true
		}
		if t, err := http.ParseTime(v); err == nil {
			return until(t)
		}
	}
	if h.Get("X-RateLimit-Remaining") == "0" {
		if s, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil && s > 0 {
			return until(time.Unix(s, 0))
		}
	}
	return backoff()
}

// isRateLimit reports whether err is any kind of rate-limit answer.
func isRateLimit(err error) bool {
	var rl *github.RateLimitError
	var ab *github.AbuseRateLimitError
	var er *github.ErrorResponse
	return errors.As(err, &rl) || errors.As(err, &ab) ||
		errors.As(err, &er) && er.Response != nil && isRateLimitResponse(er)
}

// isRateLimitResponse recognises the rate-limit answers go-github v66 does
// not type: a 429 (always a plain *ErrorResponse in v66) and a 403 that
// says "rate limit" but lacks the documentation URL go-github looks for.
func isRateLimitResponse(er *github.ErrorResponse) bool {
	switch er.Response.StatusCode {
	case http.StatusTooManyRequests:
		return true
	case http.StatusForbidden:
		return containsFold(er.Message, "rate limit")
	}
	return false
}

// rateLimitedError is a rate limit that outlasts Options.MaxWait.
type rateLimitedError struct {
	reset   time.Time
	maxWait time.Duration
	err     error
}

func (e *rateLimitedError) Error() string {
	return fmt.Sprintf("github rate limit: it resets at %s (in %s), later than this command waits (%s): rerun after that: %v",
		e.reset.UTC().Format("15:04:05 MST"), human.Duration(time.Until(e.reset)), human.Duration(e.maxWait), e.err)
}
func (e *rateLimitedError) Unwrap() error { return e.err }

// pages reads every page of a list: fetch is called with page 0 (the
// first), then with each Response.NextPage, which go-github takes from
// the Link header, until there is no next page. fetch must use the items
// only when its request succeeded.
func (rn *run) pages(ctx context.Context, fetch func(ctx context.Context, page int) (*github.Response, error)) error {
	page := 0
	for n := 0; n < maxPages; n++ {
		var resp *github.Response
		err := rn.read(ctx, func(ctx context.Context) (*github.Response, error) {
			var err error
			resp, err = fetch(ctx, page)
			return resp, err
		})
		if err != nil {
			return err
		}
		if resp == nil {
			return nil
		}
		if resp.NextPage == 0 {
			if resp.Response != nil && strings.Contains(resp.Header.Get("Link"), `rel="next"`) {
				// A next page that is not a page number (a cursor): stopping
				// here would silently skip pages.
				return fmt.Errorf("follow pagination: cannot follow Link %q", resp.Header.Get("Link"))
			}
			return nil
		}
		if resp.NextPage <= page {
			return fmt.Errorf("follow pagination: next page %d after page %d", resp.NextPage, page)
		}
		page = resp.NextPage
	}
	return fmt.Errorf("follow pagination: stopped after %d pages", maxPages)
}

// every reads every page of a list, 100 items a page, and returns all
// their items: list reads the page opts names.
func every[T any](ctx context.Context, rn *run, list func(ctx context.Context, opts github.ListOptions) ([]T, *github.Response, error)) ([]T, error) {
	var all []T
	err := rn.pages(ctx, func(ctx context.Context, page int) (*github.Response, error) {
		items, resp, err := list(ctx, github.ListOptions{Page: page, PerPage: 100})
		all = append(all, items...)
		return resp, err
	})
	return all, err
}

// IsRateLimit reports whether err is a rate-limit answer of any kind (a
// primary or secondary limit, a 429), or a limit that outlasted the wait:
// not a refusal of the token's permissions, whatever its status.
func IsRateLimit(err error) bool {
	var rl *rateLimitedError
	return errors.As(err, &rl) || isRateLimit(err)
}
