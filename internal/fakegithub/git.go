package fakegithub

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

func init() {
	handle(map[string]repoEndpoint{
		"GET /git/ref/{ref...}":           (*Server).getRef,
		"GET /git/refs/{ref...}":          (*Server).getRefsLegacy,
		"GET /git/matching-refs/{ref...}": (*Server).listMatchingRefs,
		"POST /git/refs":                  (*Server).createRef,
		"PATCH /git/refs/{ref...}":        (*Server).updateRef,
		"DELETE /git/refs/{ref...}":       (*Server).deleteRef,
		"GET /branches/{branch...}":       (*Server).getBranch,
		"GET /compare/{basehead...}":      (*Server).compare,
		"GET /commits/{ref...}":           (*Server).getCommit,
	})
}

// validRefName reports whether ref ("refs/heads/x") is a name git accepts
// (git check-ref-format): at least two slashes after "refs", no "..", no
// control characters, space, ~ ^ : ? * [ \, no component starting with "."
// or ending in ".lock", no "@{", not "@", not ending in "/" or ".".
func validRefName(ref string) bool {
	if !strings.HasPrefix(ref, "refs/") || strings.Count(ref, "/") < 2 {
		return false
	}
	if strings.Contains(ref, "..") || strings.Contains(ref, "@{") || ref == "@" ||
		strings.HasSuffix(ref, "/") || strings.HasSuffix(ref, ".") {
		return false
	}
	for _, r := range ref {
		if r < 0x20 || r == 0x7f || strings.ContainsRune(" ~^:?*[\\", r) {
			return false
		}
	}
	for _, comp := range strings.Split(ref, "/") {
		if comp == "" || strings.HasPrefix(comp, ".") || strings.HasSuffix(comp, ".lock") {
			return false
		}
	}
	return true
}

// refConflict returns an existing ref that makes ref impossible to create:
// git stores refs as files, so branch x blocks x/y and x/y blocks x.
func refConflict(rp *repo, ref string) (string, bool) {
	for have := range rp.refs {
		if strings.HasPrefix(ref, have+"/") || strings.HasPrefix(have, ref+"/") {
			return have, true
		}
	}
	return "", false
}

// sortedRefs returns the refs starting with prefix, sorted by name.
func sortedRefs(rp *repo, prefix string) []string {
	var out []string
	for ref := range rp.refs {
		if strings.HasPrefix(ref, prefix) {
			out = append(out, ref)
		}
	}
	slices.Sort(out)
	return out
}

func (s *Server) refsJSON(rp *repo, refs []string) []refJSON {
	return mapJSON(refs, func(ref string) refJSON { return s.refJSON(rp, ref, rp.refs[ref]) })
}

// getRef serves GET /repos/{owner}/{repo}/git/ref/{ref}: an exact match
// ("heads/x"), 404 when absent. It never matches a prefix.
func (s *Server) getRef(c *call, rp *repo) *reply {
	ref := "refs/" + c.params["ref"]
	sha, ok := rp.refs[ref]
	if !ok || c.params["ref"] == "" {
		return notFound()
	}
	return jsonReply(http.StatusOK, s.refJSON(rp, ref, sha))
}

// getRefsLegacy serves the undocumented GET .../git/refs/{ref}: every ref
// for an empty ref; the ref itself on an exact match; else, like old
// GitHub, an array of the refs starting with it (404 when none).
func (s *Server) getRefsLegacy(c *call, rp *repo) *reply {
	name := c.params["ref"]
	if name == "" {
		return pageReply(s, c, repoLinkPath(c, rp), s.refsJSON(rp, sortedRefs(rp, "refs/")))
	}
	ref := "refs/" + name
	if sha, ok := rp.refs[ref]; ok {
		return jsonReply(http.StatusOK, s.refJSON(rp, ref, sha))
	}
	refs := sortedRefs(rp, ref)
	if len(refs) == 0 {
		return notFound()
	}
	return pageReply(s, c, repoLinkPath(c, rp), s.refsJSON(rp, refs))
}

// listMatchingRefs serves GET .../git/matching-refs/{ref}: the refs whose
// name starts with "refs/"+ref — a prefix match, so "heads/feature" also
// matches "heads/featureA". An empty array when none. Like GitHub's, it
// documents no per_page or page: every match comes in one answer.
func (s *Server) listMatchingRefs(c *call, rp *repo) *reply {
	return jsonReply(http.StatusOK, s.refsJSON(rp, sortedRefs(rp, "refs/"+c.params["ref"])))
}

// createRef serves POST /repos/{owner}/{repo}/git/refs {ref, sha}. A ref
// that exists is 422 {"message":"Reference already exists"} with no errors
// array; an unknown sha is 422 "Object does not exist"; a ref that clashes
// with an existing one (x vs x/y) is 422 "Reference update failed".
func (s *Server) createRef(c *call, rp *repo) *reply {
	var in struct {
		Ref *string `json:"ref"`
		SHA *string `json:"sha"`
	}
	if rep := decodeBody(c, &in); rep != nil {
		return rep
	}
	if in.Ref == nil {
		return invalidRequest(`"ref" wasn't supplied.`)
	}
	if in.SHA == nil {
		return invalidRequest(`"sha" wasn't supplied.`)
	}
	ref, sha := *in.Ref, strings.ToLower(*in.SHA)
	if !validRefName(ref) || s.gitdb.refusedRef(ref) {
		return errorReply(http.StatusUnprocessableEntity, ref+" is not a valid ref name.")
	}
	if _, ok := rp.commits[sha]; !ok {
		return errorReply(http.StatusUnprocessableEntity, "Object does not exist")
	}
	if _, ok := rp.refs[ref]; ok {
		return errorReply(http.StatusUnprocessableEntity, "Reference already exists")
	}
	if _, ok := refConflict(rp, ref); ok {
		return errorReply(http.StatusUnprocessableEntity, "Reference update failed")
	}
	rp.refs[ref] = sha
	body := s.refJSON(rp, ref, sha)
	return created(body.URL, body, &Commit{Kind: KindRef, Ref: ref, SHA: sha})
}

// updateRef serves PATCH .../git/refs/{ref} {sha, force}: 422 "Reference
// does not exist" for an unknown ref, "Update is not a fast forward" when
// sha does not descend from the ref's head and force is not set.
func (s *Server) updateRef(c *call, rp *repo) *reply {
	ref := "refs/" + c.params["ref"]
	old, exists := rp.refs[ref]
	var in struct {
		SHA   *string `json:"sha"`
		Force bool    `json:"force"`
	}
	if rep := decodeBody(c, &in); rep != nil {
		return rep
	}
	if in.SHA == nil {
		return invalidRequest(`"sha" wasn't supplied.`)
	}
	if !exists {
		return errorReply(http.StatusUnprocessableEntity, "Reference does not exist")
	}
	sha := strings.ToLower(*in.SHA)
	if _, ok := rp.commits[sha]; !ok {
		return errorReply(http.StatusUnprocessableEntity, "Object does not exist")
	}
	forward := rp.ancestors(sha)[old]
	if !in.Force && !forward {
		return errorReply(http.StatusUnprocessableEntity, "Update is not a fast forward")
	}
	rp.refs[ref] = sha
	if branch, ok := strings.CutPrefix(ref, "refs/heads/"); ok && !forward {
		s.forcePushedLocked(rp, branch, c.login)
	}
	return stored(http.StatusOK, s.refJSON(rp, ref, sha), &Commit{Kind: KindRef, Ref: ref, SHA: sha})
}

// deleteRef serves DELETE .../git/refs/{ref}. Deleting a branch closes the
// open PRs whose head it is, as GitHub does.
func (s *Server) deleteRef(c *call, rp *repo) *reply {
	ref := "refs/" + c.params["ref"]
	sha, ok := rp.refs[ref]
	if !ok {
		return errorReply(http.StatusUnprocessableEntity, "Reference does not exist")
	}
	if branch, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
		now := s.now()
		for _, r := range s.repos {
			for _, is := range r.issues {
				if p := is.pull; p != nil && is.state == "open" && p.headRepo == rp && p.headRef == branch {
					p.headSHA = sha
					is.state, is.closed, is.updated = "closed", now, now
				}
			}
		}
	}
	delete(rp.refs, ref)
	return &reply{status: http.StatusNoContent, commit: &Commit{Kind: KindRef, Ref: ref}}
}

// getBranch serves GET /repos/{owner}/{repo}/branches/{branch}.
func (s *Server) getBranch(c *call, rp *repo) *reply {
	name := c.params["branch"]
	sha, ok := rp.branch(name)
	if !ok {
		return errorReply(http.StatusNotFound, "Branch not found")
	}
	apiURL := s.api(rp.path() + "/branches/" + escapeRef(name))
	return jsonReply(http.StatusOK, map[string]any{
		"name":   name,
		"commit": s.repoCommitJSON(rp, rp.commits[sha]),
		"_links": map[string]string{
			"self": apiURL,
			"html": s.web("/" + rp.owner + "/" + rp.name + "/tree/" + escapeRef(name)),
		},
		"protected":      false,
		"protection":     map[string]any{"enabled": false, "required_status_checks": map[string]any{"enforcement_level": "off", "contexts": []string{}, "checks": []string{}}},
		"protection_url": apiURL + "/protection",
	})
}

// resolveCompareSide resolves one side of base...head: a branch, tag or
// sha, optionally as "owner:ref" with the repository's owner.
func resolveCompareSide(rp *repo, side string) (*commit, bool) {
	if owner, ref, ok := strings.Cut(side, ":"); ok {
		if !strings.EqualFold(owner, rp.owner) {
			return nil, false
		}
		side = ref
	}
	return rp.resolve(side)
}

// compare serves GET /repos/{owner}/{repo}/compare/{base}...{head}: status
// identical, ahead, behind or diverged, ahead_by and behind_by, and the
// commits head has that base lacks (oldest first). Commits with no history
// in common are 404 "No common ancestor between ...".
func (s *Server) compare(c *call, rp *repo) *reply {
	baseName, headName, ok := strings.Cut(c.params["basehead"], "...")
	if !ok {
		return notFound()
	}
	base, ok1 := resolveCompareSide(rp, baseName)
	head, ok2 := resolveCompareSide(rp, headName)
	if !ok1 || !ok2 {
		return notFound()
	}
	cmp, ok := rp.compareCommits(base.sha, head.sha)
	if !ok {
		return errorReply(http.StatusNotFound, fmt.Sprintf("No common ancestor between %s and %s.", baseName, headName))
	}
	commits := make([]*repoCommitJSON, 0, len(cmp.ahead))
	for _, cm := range cmp.ahead {
		commits = append(commits, s.repoCommitJSON(rp, cm))
	}
	web := s.web(fmt.Sprintf("/%s/%s/compare/%s...%s", rp.owner, rp.name, baseName, headName))
	return jsonReply(http.StatusOK, map[string]any{
		"url":               s.api(fmt.Sprintf("%s/compare/%s...%s", rp.path(), baseName, headName)),
		"html_url":          web,
		"permalink_url":     s.web(fmt.Sprintf("/%s/%s/compare/%s:%s...%s:%s", rp.owner, rp.name, rp.owner, base.sha[:7], rp.owner, head.sha[:7])),
		"diff_url":          web + ".diff",
		"patch_url":         web + ".patch",
		"base_commit":       s.repoCommitJSON(rp, base),
		"merge_base_commit": s.repoCommitJSON(rp, rp.commits[cmp.mergeBase]),
		"status":            cmp.status,
		"ahead_by":          cmp.aheadBy,
		"behind_by":         cmp.behindBy,
		"total_commits":     cmp.aheadBy,
		"commits":           commits,
		"files":             []any{},
	})
}

// getCommit serves GET /repos/{owner}/{repo}/commits/{ref}: 422 "No commit
// found for SHA: ..." when ref names nothing. With Accept:
// application/vnd.github.sha (or .v3.sha) the answer is the bare SHA, as
// GitHub's.
func (s *Server) getCommit(c *call, rp *repo) *reply {
	cm, ok := rp.resolve(c.params["ref"])
	if !ok {
		return errorReply(http.StatusUnprocessableEntity, "No commit found for SHA: "+c.params["ref"])
	}
	if a := c.r.Header.Get("Accept"); strings.HasSuffix(a, ".sha") {
		return &reply{status: http.StatusOK, body: []byte(cm.sha), raw: true, header: http.Header{"Content-Type": {a + "; charset=utf-8"}}}
	}
	return jsonReply(http.StatusOK, s.repoCommitJSON(rp, cm))
}
