package fakegithub

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// The primary rate limit is counted per user in fixed windows that start
// with the window's first request, as GitHub's are: the core resource's (an
// hour or Options.CoreWindow, Options.CoreLimit); ghonce uses no other.
// Unauthenticated requests (which only ever get 401 here) count against an
// anonymous window of 60 an hour. Every response carries the window's
// X-RateLimit-* headers, with the reset in epoch seconds.

type rateWindow struct {
	used  int
	reset time.Time
}

// windowLocked returns login's current core window, starting a new one
// when the last has reset. The caller holds s.mu.
func (s *Server) windowLocked(login string) (*rateWindow, int) {
	limit, length := s.coreLimit, s.coreWindow
	if login == "" {
		limit, length = 60, time.Hour
	}
	now := s.now()
	w := s.rates[login]
	if w == nil || !now.Before(w.reset) {
		w = &rateWindow{reset: now.Add(length)}
		s.rates[login] = w
	}
	return w, limit
}

// countRate adds n to the requests counted in login's window (1 for a
// request, 0 to look, -1 to give back a 304's, never below zero) and
// returns the headers to send; exceeded means a request found the limit
// already spent (it is not counted then and must be refused).
func (s *Server) countRate(login string, n int) (hdr http.Header, exceeded bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, limit := s.windowLocked(login)
	if exceeded = n > 0 && w.used >= limit; !exceeded {
		w.used = max(w.used+n, 0)
	}
	return rateHeader(limit, w.used, w.reset), exceeded
}

func epochSeconds(t time.Time) int64 {
	sec := t.Unix()
	if t.Nanosecond() > 0 {
		sec++ // never announce a reset before it happens
	}
	return sec
}

func rateHeader(limit, used int, reset time.Time) http.Header {
	h := http.Header{}
	h.Set("X-RateLimit-Limit", strconv.Itoa(limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(limit-used, 0)))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(epochSeconds(reset), 10))
	h.Set("X-RateLimit-Used", strconv.Itoa(used))
	h.Set("X-RateLimit-Resource", "core")
	return h
}

const (
	primaryDocURL   = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-primary-rate-limits"
	secondaryDocURL = "https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"
	secondaryMsg    = "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID 0000:0000:0000000:0000000:00000000."
)

// primaryRateLimitReply is GitHub's answer once a primary limit is spent:
// 403, x-ratelimit-remaining: 0 (what go-github turns into a
// *RateLimitError).
func (s *Server) primaryRateLimitReply(login string, hdr http.Header) *reply {
	s.mu.Lock()
	id := s.userFor(login).id
	s.mu.Unlock()
	return primaryLimitReply(id, hdr)
}

// primaryLimitReply is primaryRateLimitReply for the user with that id.
func primaryLimitReply(id int64, hdr http.Header) *reply {
	rep := jsonReply(http.StatusForbidden, errorBody{
		Message:          fmt.Sprintf("API rate limit exceeded for user ID %d. If you reach out to GitHub Support for help, please include the request ID 0000:0000:0000000:0000000:00000000.", id),
		DocumentationURL: primaryDocURL,
	})
	rep.header = hdr
	return rep
}

type rateJSON struct {
	Limit     int    `json:"limit"`
	Used      int    `json:"used"`
	Remaining int    `json:"remaining"`
	Reset     int64  `json:"reset"`
	Resource  string `json:"resource"`
}

// getRateLimit serves GET /rate_limit, which does not count against a limit.
func (s *Server) getRateLimit(c *call) *reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, limit := s.windowLocked(c.login)
	core := rateJSON{Limit: limit, Used: w.used, Remaining: max(limit-w.used, 0), Reset: epochSeconds(w.reset), Resource: "core"}
	return jsonReply(http.StatusOK, map[string]any{"resources": map[string]rateJSON{"core": core}, "rate": core})
}
