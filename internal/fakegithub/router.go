package fakegithub

import (
	"net/url"
	"strconv"
	"strings"
)

// route is one endpoint: a method and a path pattern whose segments are
// literals, "{name}" (one non-empty segment) or a final "{name...}" (the
// rest of the path, possibly empty).
type route struct {
	method string
	segs   []string
	// resource is the rate-limit resource: "" (core) or "none"
	// (not counted, like GET /rate_limit).
	resource string
	h        func(c *call) *reply
}

// buildRoutes lists every endpoint. The first matching route wins, so
// literal segments come before wildcards in the same position.
func (s *Server) buildRoutes() []route {
	r := func(pattern string, h func(*call) *reply) route {
		method, path, _ := strings.Cut(pattern, " ")
		return route{method: method, segs: strings.Split(strings.TrimPrefix(path, "/"), "/"), h: h}
	}
	rp := s.repoHandler
	rateLimit := r("GET /rate_limit", s.getRateLimit)
	rateLimit.resource = "none"
	return []route{
		r("GET /user", s.getUser),
		rateLimit,
		r("GET /repos/{owner}/{repo}", rp(s.getRepo)),

		r("GET /repos/{owner}/{repo}/pulls", rp(s.listPulls)),
		r("POST /repos/{owner}/{repo}/pulls", rp(s.createPull)),
		r("GET /repos/{owner}/{repo}/pulls/comments", rp(s.listRepoReviewComments)),
		r("GET /repos/{owner}/{repo}/pulls/comments/{id}", rp(s.getReviewComment)),
		r("GET /repos/{owner}/{repo}/pulls/{number}", rp(s.getPull)),
		r("PATCH /repos/{owner}/{repo}/pulls/{number}", rp(s.editPull)),
		r("GET /repos/{owner}/{repo}/pulls/{number}/commits", rp(s.listPullCommits)),
		r("GET /repos/{owner}/{repo}/pulls/{number}/reviews", rp(s.listReviews)),
		r("POST /repos/{owner}/{repo}/pulls/{number}/reviews", rp(s.createReview)),
		r("GET /repos/{owner}/{repo}/pulls/{number}/reviews/{id}", rp(s.getReview)),
		r("POST /repos/{owner}/{repo}/pulls/{number}/reviews/{id}/events", rp(s.submitReview)),
		r("GET /repos/{owner}/{repo}/pulls/{number}/comments", rp(s.listReviewComments)),
		r("POST /repos/{owner}/{repo}/pulls/{number}/comments", rp(s.createReviewComment)),
		r("POST /repos/{owner}/{repo}/pulls/{number}/comments/{id}/replies", rp(s.replyToReviewComment)),
		r("GET /repos/{owner}/{repo}/pulls/{number}/requested_reviewers", rp(s.listRequestedReviewers)),
		r("POST /repos/{owner}/{repo}/pulls/{number}/requested_reviewers", rp(s.requestReviewers)),

		r("GET /repos/{owner}/{repo}/issues", rp(s.listIssues)),
		r("POST /repos/{owner}/{repo}/issues", rp(s.createIssue)),
		r("GET /repos/{owner}/{repo}/issues/comments", rp(s.listRepoComments)),
		r("GET /repos/{owner}/{repo}/issues/comments/{id}", rp(s.getComment)),
		r("PATCH /repos/{owner}/{repo}/issues/comments/{id}", rp(s.editComment)),
		r("DELETE /repos/{owner}/{repo}/issues/comments/{id}", rp(s.deleteComment)),
		r("GET /repos/{owner}/{repo}/issues/comments/{id}/reactions", rp(s.listCommentReactions)),
		r("GET /repos/{owner}/{repo}/issues/{number}", rp(s.getIssue)),
		r("PATCH /repos/{owner}/{repo}/issues/{number}", rp(s.editIssue)),
		r("GET /repos/{owner}/{repo}/issues/{number}/comments", rp(s.listComments)),
		r("POST /repos/{owner}/{repo}/issues/{number}/comments", rp(s.createComment)),
		r("GET /repos/{owner}/{repo}/issues/{number}/labels", rp(s.listIssueLabels)),
		r("POST /repos/{owner}/{repo}/issues/{number}/labels", rp(s.addIssueLabels)),
		r("PUT /repos/{owner}/{repo}/issues/{number}/labels", rp(s.replaceIssueLabels)),
		r("DELETE /repos/{owner}/{repo}/issues/{number}/labels/{name}", rp(s.removeIssueLabel)),
		r("POST /repos/{owner}/{repo}/issues/{number}/assignees", rp(s.addAssignees)),
		r("GET /repos/{owner}/{repo}/issues/{number}/reactions", rp(s.listIssueReactions)),
		r("GET /repos/{owner}/{repo}/issues/{number}/timeline", rp(s.listTimeline)),
		r("GET /repos/{owner}/{repo}/issues/{number}/events", rp(s.listIssueEvents)),

		r("GET /repos/{owner}/{repo}/milestones", rp(s.listMilestones)),
		r("GET /repos/{owner}/{repo}/actions/runs/{id}/attempts/{n}", rp(s.getRunAttempt)),

		r("GET /repos/{owner}/{repo}/labels", rp(s.listLabels)),
		r("POST /repos/{owner}/{repo}/labels", rp(s.createLabel)),
		r("GET /repos/{owner}/{repo}/labels/{name}", rp(s.getLabel)),
		r("PATCH /repos/{owner}/{repo}/labels/{name}", rp(s.editLabel)),
		r("DELETE /repos/{owner}/{repo}/labels/{name}", rp(s.deleteLabel)),

		r("GET /repos/{owner}/{repo}/git/ref/{ref...}", rp(s.getRef)),
		r("GET /repos/{owner}/{repo}/git/refs/{ref...}", rp(s.getRefsLegacy)),
		r("GET /repos/{owner}/{repo}/git/matching-refs/{ref...}", rp(s.listMatchingRefs)),
		r("POST /repos/{owner}/{repo}/git/refs", rp(s.createRef)),
		r("POST /repos/{owner}/{repo}/git/commits", rp(s.createGitCommit)),
		r("GET /repos/{owner}/{repo}/git/commits/{sha}", rp(s.getGitCommit)),
		r("PATCH /repos/{owner}/{repo}/git/refs/{ref...}", rp(s.updateRef)),
		r("DELETE /repos/{owner}/{repo}/git/refs/{ref...}", rp(s.deleteRef)),
		r("GET /repos/{owner}/{repo}/branches/{branch...}", rp(s.getBranch)),
		r("GET /repos/{owner}/{repo}/compare/{basehead...}", rp(s.compare)),
		r("GET /repos/{owner}/{repo}/commits/{ref...}", rp(s.getCommit)),

		r("GET /repos/{owner}/{repo}/releases", rp(s.listReleases)),
		r("POST /repos/{owner}/{repo}/releases", rp(s.createRelease)),
		r("GET /repos/{owner}/{repo}/releases/tags/{tag...}", rp(s.getReleaseByTag)),
		r("GET /repos/{owner}/{repo}/releases/{id}", rp(s.getRelease)),

		r("GET /repos/{owner}/{repo}/contents/{path...}", rp(s.getContents)),
		r("PUT /repos/{owner}/{repo}/contents/{path...}", rp(s.putContents)),
	}
}

// repoHandler wraps a handler of a /repos/{owner}/{repo}/... endpoint: it
// holds the server's lock for the whole handler and answers 404 for an
// unknown repository.
func (s *Server) repoHandler(h func(c *call, rp *repo) *reply) func(*call) *reply {
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
		return h(c, rp)
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
