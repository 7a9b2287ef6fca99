package fakegithub

import (
	"cmp"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// route is one endpoint: a method and a path pattern whose segments are
// literals, "{name}" (one non-empty segment) or a final "{name...}" (the
// rest of the path, possibly empty).
type route struct {
	method string
	segs   []string
	// free marks an endpoint not counted against the rate limit (GET
	// /rate_limit).
	free bool
	h    func(c *call) *reply
}

// repoEndpoint serves a /repos/{owner}/{repo}/... request for an existing
// repository, with the server's lock held.
type repoEndpoint = func(s *Server, c *call, rp *repo) *reply

// repoRoutes are the endpoints under /repos/{owner}/{repo}, by "METHOD
// /rest-of-path"; each resource's file adds its own with handle.
var repoRoutes = map[string]repoEndpoint{}

// handle adds a resource's endpoints to repoRoutes (from an init); a
// pattern added twice panics.
func handle(eps map[string]repoEndpoint) {
	for p, h := range eps {
		if _, dup := repoRoutes[p]; dup {
			panic("fakegithub: two handlers for " + p)
		}
		repoRoutes[p] = h
	}
}

// onIssue and onPull adapt an endpoint of issue (or pull request) {number}
// to a repoEndpoint: an unknown number, or an issue's for onPull, is 404.
func onIssue(h func(s *Server, c *call, rp *repo, is *issue) *reply) repoEndpoint {
	return func(s *Server, c *call, rp *repo) *reply {
		if is := issueByParam(c, rp); is != nil {
			return h(s, c, rp, is)
		}
		return notFound()
	}
}

func onPull(h func(s *Server, c *call, rp *repo, is *issue) *reply) repoEndpoint {
	return func(s *Server, c *call, rp *repo) *reply {
		if is := pullByNumber(c, rp); is != nil {
			return h(s, c, rp, is)
		}
		return notFound()
	}
}

// buildRoutes lists every endpoint, the most specific first: where two
// patterns match a path, the one with a literal segment where the other
// has a wildcard wins, so the order resources are added in does not matter.
func (s *Server) buildRoutes() []route {
	r := func(pattern string, h func(*call) *reply) route {
		method, path, _ := strings.Cut(pattern, " ")
		return route{method: method, segs: strings.Split(strings.TrimPrefix(path, "/"), "/"), h: h}
	}
	rateLimit := r("GET /rate_limit", s.getRateLimit)
	rateLimit.free = true
	routes := []route{r("GET /user", s.getUser), rateLimit}
	for p, h := range repoRoutes {
		method, rest, _ := strings.Cut(p, " ")
		routes = append(routes, r(method+" /repos/{owner}/{repo}"+rest, s.repoHandler(h)))
	}
	slices.SortFunc(routes, func(a, b route) int {
		return cmp.Or(slices.CompareFunc(a.segs, b.segs, compareSeg), cmp.Compare(a.method, b.method))
	})
	return routes
}

// compareSeg orders pattern segments: literals (by text) before "{name}"
// before "{name...}"; wildcards are equal whatever their names.
func compareSeg(a, b string) int {
	rank := func(p string) int {
		switch {
		case strings.HasSuffix(p, "...}"):
			return 2
		case strings.HasPrefix(p, "{"):
			return 1
		}
		return 0
	}
	if d := rank(a) - rank(b); d != 0 || rank(a) != 0 {
		return d
	}
	return strings.Compare(a, b)
}

// repoHandler wraps a handler of a /repos/{owner}/{repo}/... endpoint: it
// holds the server's lock for the whole handler and answers 404 for an
// unknown repository.
func (s *Server) repoHandler(h repoEndpoint) func(*call) *reply {
	return func(c *call) *reply {
		s.mu.Lock()
		defer s.mu.Unlock()
		rp := s.repoLocked(c.params["owner"], c.params["repo"])
		if rp == nil {
			return notFound()
		}
		if rep := s.gitdb.refuseWrite(c); rep != nil {
			return rep
		}
		return h(s, c, rp)
	}
}

// match finds the route for method and the escaped path segments, filling
// c.params and c.segs. A /repositories/{id}/... path (what GitHub's Link
// headers point at) is served as /repos/{owner}/{name}/...
func (s *Server) match(c *call, method string, segs []string) (route, bool) {
	if len(segs) >= 2 && segs[0] == "repositories" {
		id, err := strconv.ParseInt(segs[1], 10, 64)
		if err != nil {
			return route{}, false
		}
		s.mu.Lock()
		rp := s.reposByID[id]
		s.mu.Unlock()
		if rp == nil {
			return route{}, false
		}
		segs = append([]string{"repos", url.PathEscape(rp.owner), url.PathEscape(rp.name)}, segs[2:]...)
	}
	c.segs = segs
	for _, rt := range s.routes {
		if rt.method != method {
			continue
		}
		if params, ok := matchSegs(rt.segs, segs); ok {
			c.params = params
			return rt, true
		}
	}
	return route{}, false
}

func matchSegs(pattern, segs []string) (map[string]string, bool) {
	params := map[string]string{}
	for i, p := range pattern {
		if name, ok := strings.CutPrefix(p, "{"); ok && strings.HasSuffix(name, "...}") {
			name = strings.TrimSuffix(name, "...}")
			rest := make([]string, 0, len(segs)-i)
			for _, seg := range segs[min(i, len(segs)):] {
				u, err := url.PathUnescape(seg)
				if err != nil {
					return nil, false
				}
				rest = append(rest, u)
			}
			params[name] = strings.Join(rest, "/")
			return params, true
		}
		if i >= len(segs) {
			return nil, false
		}
		if name, ok := strings.CutPrefix(p, "{"); ok {
			u, err := url.PathUnescape(segs[i])
			if err != nil || u == "" {
				return nil, false
			}
			params[strings.TrimSuffix(name, "}")] = u
			continue
		}
		if p != segs[i] {
			return nil, false
		}
	}
	return params, len(pattern) == len(segs)
}

// intParam parses a path parameter as a positive number; ok is false for
// anything else ("abc", "-1", "99999999999999999999").
func intParam(c *call, name string) (int64, bool) {
	n, err := strconv.ParseInt(c.params[name], 10, 64)
	return n, err == nil && n > 0
}
