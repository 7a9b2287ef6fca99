package fakegithub

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// Pagination follows GitHub: page and per_page query parameters, 30 items a
// page by default and at most 100, and an RFC 5988 Link header with the
// rels prev, next, last and first (in that order, each only where it
// applies). Like GitHub's, the Link URLs of a repository's lists use the
// repository's id (/repositories/{id}/issues?...), which the server also
// serves; the query is the request's own with page replaced.

const (
	defaultPerPage = 30
	maxPerPage     = 100
)

type pager struct{ page, perPage int }

func parsePager(q url.Values) pager {
	p := pager{page: 1, perPage: defaultPerPage}
	if v, err := strconv.Atoi(q.Get("per_page")); err == nil && v > 0 {
		p.perPage = min(v, maxPerPage)
	}
	if v, err := strconv.Atoi(q.Get("page")); err == nil && v > 0 {
		p.page = v
	}
	return p
}

// paginate returns the bounds [lo, hi) of the requested page of n items and
// the Link header value ("" when everything fits on page one). linkPath is
// the path (relative to the prefix, starting with "/") the links point at.
func (s *Server) paginate(c *call, linkPath string, n int) (lo, hi int, link string) {
	p := parsePager(c.r.URL.Query())
	last := max((n+p.perPage-1)/p.perPage, 1)
	lo = min((p.page-1)*p.perPage, n)
	hi = min(lo+p.perPage, n)
	if last == 1 && p.page == 1 {
		return lo, hi, ""
	}
	base := s.api(linkPath) + "?" + queryWithoutPage(c.r.URL.RawQuery)
	var rels []string
	add := func(page int, rel string) {
		rels = append(rels, fmt.Sprintf(`<%spage=%d>; rel="%s"`, base, page, rel))
	}
	if p.page > 1 {
		add(p.page-1, "prev")
	}
	if p.page < last {
		add(p.page+1, "next")
		add(last, "last")
	}
	if p.page > 1 {
		add(1, "first")
	}
	return lo, hi, strings.Join(rels, ", ")
}

// queryWithoutPage is raw with every page parameter removed, in its order,
// ending in "&" when anything is left.
func queryWithoutPage(raw string) string {
	var b strings.Builder
	for _, pair := range strings.Split(raw, "&") {
		if pair == "" {
			continue
		}
		k, _, _ := strings.Cut(pair, "=")
		if uk, err := url.QueryUnescape(k); err == nil && uk == "page" {
			continue
		}
		b.WriteString(pair)
		b.WriteByte('&')
	}
	return b.String()
}

// repoLinkPath is the /repositories/{id}/... form of a repository-scoped
// request path, which GitHub's Link headers use.
func repoLinkPath(c *call, rp *repo) string {
	if len(c.segs) < 3 {
		return "/repositories/" + strconv.FormatInt(rp.id, 10)
	}
	return "/repositories/" + strconv.FormatInt(rp.id, 10) + "/" + strings.Join(c.segs[3:], "/")
}

// pageReply answers one page of items with its Link header.
func pageReply[T any](s *Server, c *call, linkPath string, items []T) *reply {
	lo, hi, link := s.paginate(c, linkPath, len(items))
	rep := jsonReply(200, items[lo:hi])
	if link != "" {
		rep.header = map[string][]string{"Link": {link}}
	}
	return rep
}
