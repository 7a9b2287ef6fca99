package fakegithub

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

func init() {
	handle(map[string]repoEndpoint{
		"GET /issues/comments": (*Server).listRepoComments,
	})
}

// ContentLimit is a secondary rate limit on content creation: at most N
// writes (POST, PATCH, PUT, DELETE) per user in any Window. GitHub
// documents 80 a minute and 500 an hour; the fake enforces none unless
// Options.ContentLimits lists them (tests scale them down to run fast).
type ContentLimit struct {
	N      int
	Window time.Duration
}

// contentLimitedLocked reports whether one more write by login would
// exceed a content limit, and otherwise records it. A refused write is
// not recorded. The caller holds s.mu.
func (s *Server) contentLimitedLocked(login string) (retryAfter time.Duration, limited bool) {
	if len(s.contentLimits) == 0 {
		return 0, false
	}
	now := s.now()
	times := s.writesBy[login]
	longest := time.Duration(0)
	for _, l := range s.contentLimits {
		longest = max(longest, l.Window)
		in := 0
		var oldest time.Time
		for i := len(times) - 1; i >= 0 && now.Sub(times[i]) < l.Window; i-- {
			in++
			oldest = times[i]
		}
		if in >= l.N {
			retryAfter = max(retryAfter, oldest.Add(l.Window).Sub(now))
			limited = true
		}
	}
	if limited {
		s.secondaryHits++
		return retryAfter, true
	}
	// Forget what no window can see any more.
	cut := 0
	for cut < len(times) && now.Sub(times[cut]) >= longest {
		cut++
	}
	s.writesBy[login] = append(slices.Clip(times[cut:]), now)
	return 0, false
}

// SecondaryLimited returns how many writes the fake refused with a
// secondary (content-creation) rate limit.
func (s *Server) SecondaryLimited() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.secondaryHits
}

// RateUsed returns how many requests login has spent in the current
// primary (core) window. 304 Not Modified answers are not counted, as on
// GitHub.
func (s *Server) RateUsed(login string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	w, _ := s.windowLocked(login)
	return w.used
}

// etagOf is the fake's entity tag of a body: weak, as GitHub's list
// answers are.
func etagOf(body []byte) string {
	sum := sha256.Sum256(body)
	return `W/"` + hex.EncodeToString(sum[:16]) + `"`
}

// conditional turns a 200 GET answer into 304 Not Modified when the
// request's If-None-Match names its entity tag, and tags it otherwise.
// It reports whether it answered 304.
func conditional(r *http.Request, rep *reply) bool {
	if r.Method != http.MethodGet || rep.status != http.StatusOK {
		return false
	}
	tag := etagOf(rep.body)
	if rep.header == nil {
		rep.header = http.Header{}
	}
	rep.header.Set("ETag", tag)
	for _, v := range strings.Split(r.Header.Get("If-None-Match"), ",") {
		if v = strings.TrimSpace(v); v == tag || v == "*" || strings.TrimPrefix(v, "W/") == strings.TrimPrefix(tag, "W/") {
			rep.status, rep.body = http.StatusNotModified, nil
			return true
		}
	}
	return false
}

// secondaryLimitReply is GitHub's answer to a request over a secondary
// limit: 403 with the rate headers and, unless retryAfter is negative,
// Retry-After in whole seconds, rounded up.
func secondaryLimitReply(rateHdr http.Header, retryAfter time.Duration) *reply {
	rep := jsonReply(http.StatusForbidden, errorBody{Message: secondaryMsg, DocumentationURL: secondaryDocURL})
	rep.header = rateHdr.Clone()
	if rep.header == nil {
		rep.header = http.Header{}
	}
	if retryAfter >= 0 {
		rep.header.Set("Retry-After", retryAfterHeader(retryAfter))
	}
	return rep
}

// listRepoComments serves GET /repos/{owner}/{repo}/issues/comments: every
// comment of the repository's issues and pull requests, sorted by created
// (default) or updated, ascending unless direction=desc; since keeps those
// updated at or after it. Paginated like every list.
func (s *Server) listRepoComments(c *call, rp *repo) *reply {
	q := c.r.URL.Query()
	since, hasSince := parseSince(q.Get("since"))
	var list []*comment
	for _, cm := range rp.comments {
		if hasSince && cm.updated.Before(since) {
			continue
		}
		list = append(list, cm)
	}
	byUpdated := q.Get("sort") == "updated"
	desc := q.Get("direction") == "desc"
	slices.SortFunc(list, func(a, b *comment) int {
		ta, tb := a.created, b.created
		if byUpdated {
			ta, tb = a.updated, b.updated
		}
		r := cmp.Or(ta.Compare(tb), cmp.Compare(a.id, b.id))
		if desc {
			r = -r
		}
		return r
	})
	return pageReplyOf(s, c, repoLinkPath(c, rp), len(list), func(i int) *commentJSON { return s.commentJSON(rp, list[i]) })
}

// retryAfterHeader is d as a Retry-After value: whole seconds, rounded up.
func retryAfterHeader(d time.Duration) string {
	return strconv.FormatInt(int64(math.Ceil(d.Seconds())), 10)
}
