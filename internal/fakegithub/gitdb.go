package fakegithub

import (
	"maps"
	"net/http"
	"slices"
	"strings"
)

func init() {
	handle(map[string]repoEndpoint{
		"POST /git/commits":      (*Server).createGitCommit,
		"GET /git/commits/{sha}": (*Server).getGitCommit,
	})
}

// The git database API's commit objects, which the repository-as-ledger
// builds on: POST /repos/{o}/{r}/git/commits makes a commit object that no
// branch reaches (GitHub keeps it while a ref points at it), GET
// .../git/commits/{sha} reads one back.

// emptyTreeSHA is git's empty tree, which exists in every repository.
const emptyTreeSHA = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// KindGitObject: a commit object was made through the git database API.
const KindGitObject CommitKind = "git-object"

// gitdbState is what SetReadOnly and RefuseRefs set. The server's lock
// guards it.
type gitdbState struct {
	readOnly map[string]bool // lower(login): may read, not write
	refused  []string        // ref prefixes createRef refuses
}

// SetReadOnly makes login's token read-only on every repository, as a
// workflow's GITHUB_TOKEN without `contents: write` (or a fine-grained
// token with Contents: read): its writes answer 403 "Resource not
// accessible by integration".
func (s *Server) SetReadOnly(login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gitdb.readOnly == nil {
		s.gitdb.readOnly = map[string]bool{}
	}
	s.gitdb.readOnly[strings.ToLower(login)] = true
}

// RefuseRefs makes creating a ref under prefix ("refs/ghonce/") answer 422
// "... is not a valid ref name.", like a host whose rules refuse the
// namespace.
func (s *Server) RefuseRefs(prefix string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gitdb.refused = append(s.gitdb.refused, prefix)
}

func (g *gitdbState) refuseWrite(c *call) *reply {
	if c.r.Method == http.MethodGet || c.r.Method == http.MethodHead || !g.readOnly[strings.ToLower(c.login)] {
		return nil
	}
	return errorReply(http.StatusForbidden, "Resource not accessible by integration")
}

func (g *gitdbState) refusedRef(ref string) bool {
	for _, p := range g.refused {
		if strings.HasPrefix(ref, p) {
			return true
		}
	}
	return false
}

// treeFiles finds the tree sha names: git's empty tree, or the root tree
// of a commit in rp. The caller holds s.mu.
func (rp *repo) treeFiles(sha string) (map[string][]byte, bool) {
	if sha == emptyTreeSHA {
		return map[string][]byte{}, true
	}
	for _, c := range rp.commits {
		if treeSHA(c.files, "") == sha {
			return c.files, true
		}
	}
	return nil, false
}

// createGitCommit serves POST /repos/{owner}/{repo}/git/commits {message,
// tree, parents}: 422 for a missing message or tree, "Tree SHA does not
// exist" and "Parent SHA does not exist or is not a commit object" for
// unknown objects. Author and committer are the token's user, dated by the
// server's clock (GitHub's, when the request leaves them out).
func (s *Server) createGitCommit(c *call, rp *repo) *reply {
	var in struct {
		Message *string  `json:"message"`
		Tree    *string  `json:"tree"`
		Parents []string `json:"parents"`
	}
	if rep := decodeBody(c, &in); rep != nil {
		return rep
	}
	if in.Message == nil {
		return invalidRequest(`"message" wasn't supplied.`)
	}
	if in.Tree == nil {
		return invalidRequest(`"tree" wasn't supplied.`)
	}
	files, ok := rp.treeFiles(strings.ToLower(*in.Tree))
	if !ok {
		return errorReply(http.StatusUnprocessableEntity, "Tree SHA does not exist")
	}
	parents := make([]string, 0, len(in.Parents))
	for _, p := range in.Parents {
		p = strings.ToLower(p)
		if _, ok := rp.commits[p]; !ok {
			return errorReply(http.StatusUnprocessableEntity, "Parent SHA does not exist or is not a commit object")
		}
		parents = append(parents, p)
	}
	cm := s.newCommit(rp, parents, files, *in.Message, c.login)
	body := s.gitCommitJSON(rp, cm)
	return created(body.URL, body, &Commit{Kind: KindGitObject, SHA: cm.sha})
}

// getGitCommit serves GET /repos/{owner}/{repo}/git/commits/{commit_sha}:
// a full sha only, 404 when no such commit exists.
func (s *Server) getGitCommit(c *call, rp *repo) *reply {
	cm, ok := rp.commits[strings.ToLower(c.params["sha"])]
	if !ok {
		return notFound()
	}
	return jsonReply(http.StatusOK, s.gitCommitJSON(rp, cm))
}

// Refs returns every ref of a repository (full names, sorted), nil for an
// unknown repository.
func (s *Server) Refs(owner, name string) []string {
	return inRepo(s, owner, name, func(rp *repo) []string {
		return sortedRefs(rp, "refs/")
	})
}

// CommitSHAs returns every commit object a repository holds, whether a
// ref reaches it or not (sorted), nil for an unknown repository: what a
// reader who knows a SHA can fetch.
func (s *Server) CommitSHAs(owner, name string) []string {
	return inRepo(s, owner, name, func(rp *repo) []string {
		return slices.Sorted(maps.Keys(rp.commits))
	})
}
