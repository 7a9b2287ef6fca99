package fakegithub

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// idSeq is a sequence of ids, named by where it starts: its first id is
// one more. Each kind has its own range, the way GitHub's do, so a client
// that confuses an issue number, an issue id and a comment id finds
// nothing; comment ids start above 2^31 like real ones, which catches int32
// truncation. Kinds that name the same start share the sequence.
type idSeq int64

const (
	commitSeq  idSeq = 0 // numbers commits, whose ids are shas
	repoIDs    idSeq = 999
	userIDs    idSeq = 9_000_000
	issueIDs   idSeq = 1_500_000_000
	commentIDs idSeq = 2_200_000_000 // reactions, events and reviews too
	labelIDs   idSeq = 5_000_000_000 // milestones too
)

// nextID hands out seq's next id. The caller holds s.mu.
func (s *Server) nextID(seq idSeq) int64 {
	n, ok := s.ids[seq]
	if !ok {
		n = int64(seq)
	}
	n++
	s.ids[seq] = n
	return n
}

// stores holds the state of the resources that keep it in their own files
// (releases, reviews, ...), one value of each type; storeOf reaches it.
type stores struct{ byType map[any]any }

// storeKey[T] is the key of T's value in a stores.
type storeKey[T any] struct{}

func (st *stores) storage() *stores { return st }

// storeOf returns h's store of type T (a repository's or a pull request's,
// which embed stores), made empty on first use. The caller holds s.mu.
func storeOf[T any](h interface{ storage() *stores }) *T {
	st := h.storage()
	if v, ok := st.byType[storeKey[T]{}]; ok {
		return v.(*T)
	}
	if st.byType == nil {
		st.byType = map[any]any{}
	}
	v := new(T)
	st.byType[storeKey[T]{}] = v
	return v
}

type user struct {
	id    int64
	login string
}

type repo struct {
	id            int64
	owner, name   string
	defaultBranch string
	created       time.Time
	commits       map[string]*commit
	refs          map[string]string // full ref name ("refs/heads/main") -> sha
	issues        []*issue          // issues[n-1].number == n; PRs included
	comments      map[int64]*comment
	labels        []*label
	stores
}

type commit struct {
	sha     string
	parents []string
	// files is the whole tree: path -> content. It is never modified after
	// the commit is made, so commits may share it.
	files   map[string][]byte
	message string
	author  string
	date    time.Time
}

type issue struct {
	id          int64
	number      int
	title       string
	body        string
	hasBody     bool
	author      string
	state       string // open, closed
	stateReason string
	labels      []*label
	comments    []*comment
	created     time.Time
	updated     time.Time
	closed      time.Time
	closedBy    string
	assignees   []string
	milestone   *milestone
	pull        *pull // nil for a plain issue
	reactions   []*reaction
	events      []*event // labeled and cross-referenced (activity.go)
}

type pull struct {
	headOwner string // login owning the head repository
	headRepo  *repo
	headRef   string
	baseRef   string
	// headSHA and baseSHA are the branch heads when the PR was made; the
	// live branch head is shown while the branch exists.
	headSHA, baseSHA string
	draft            bool
	merged           time.Time
	mergeSHA         string
	// requestedUsers and requestedTeams are the pending review requests:
	// a review by one of the users answers its request.
	requestedUsers, requestedTeams []string
	stores
}

type comment struct {
	id      int64
	issue   *issue
	body    string
	author  string
	created time.Time
	updated time.Time
	// reactions are the comment's (activity.go).
	reactions []*reaction
}

type label struct {
	id          int64
	name        string
	color       string
	description string
	isDefault   bool
}

// defaultLabels are the labels GitHub gives a new repository.
var defaultLabels = [...]struct{ name, color, description string }{
	{"bug", "d73a4a", "Something isn't working"},
	{"documentation", "0075ca", "Improvements or additions to documentation"},
	{"duplicate", "cfd3d7", "This issue or pull request already exists"},
	{"enhancement", "a2eeef", "New feature or request"},
	{"good first issue", "7057ff", "Good for newcomers"},
	{"help wanted", "008672", "Extra attention is needed"},
	{"invalid", "e4e669", "This doesn't seem right"},
	{"question", "d876e3", "Further information is requested"},
	{"wontfix", "ffffff", "This will not be worked on"},
}

// userFor returns the user called login (compared without case), creating
// it on first use. The caller holds s.mu.
func (s *Server) userFor(login string) *user {
	k := strings.ToLower(login)
	if u, ok := s.users[k]; ok {
		return u
	}
	u := &user{id: s.nextID(userIDs), login: login}
	s.users[k] = u
	return u
}

// repoLocked finds a repository by owner and name, compared without case as
// GitHub does. The caller holds s.mu.
func (s *Server) repoLocked(owner, name string) *repo {
	return s.repos[strings.ToLower(owner+"/"+name)]
}

// withRepo runs f on owner/repo with s.mu held, when the repository exists.
func (s *Server) withRepo(owner, name string, f func(rp *repo)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rp := s.repoLocked(owner, name); rp != nil {
		f(rp)
	}
}

// inRepo is withRepo returning f's answer, or T's zero value when the
// repository does not exist.
func inRepo[T any](s *Server, owner, name string, f func(rp *repo) T) (v T) {
	s.withRepo(owner, name, func(rp *repo) { v = f(rp) })
	return v
}

// inIssue is inRepo for issue or pull request number of owner/repo: T's
// zero value when either does not exist.
func inIssue[T any](s *Server, owner, name string, number int, f func(rp *repo, is *issue) T) T {
	return inRepo(s, owner, name, func(rp *repo) (v T) {
		if is := rp.issueByNumber(int64(number)); is != nil {
			v = f(rp, is)
		}
		return v
	})
}

// inPull is inIssue for pull requests only: a plain issue's number is T's
// zero value.
func inPull[T any](s *Server, owner, name string, number int, f func(rp *repo, is *issue) T) T {
	return inIssue(s, owner, name, number, func(rp *repo, is *issue) (v T) {
		if is.pull != nil {
			v = f(rp, is)
		}
		return v
	})
}

// newCommit stores a commit in rp. The sha is unique: it hashes the
// repository, a counter, the parents and the tree. The caller holds s.mu.
func (s *Server) newCommit(rp *repo, parents []string, files map[string][]byte, message, author string) *commit {
	h := sha1.New()
	fmt.Fprintf(h, "commit %d/%d\nparents %s\nmessage %s\n", rp.id, s.nextID(commitSeq), strings.Join(parents, " "), message)
	for _, p := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(h, "%s %s\n", blobSHA(files[p]), p)
	}
	c := &commit{
		sha:     hex.EncodeToString(h.Sum(nil)),
		parents: parents,
		files:   files,
		message: message,
		author:  author,
		date:    s.now(),
	}
	rp.commits[c.sha] = c
	return c
}

// blobSHA is git's object id of a blob: sha1("blob <len>\x00" + content).
// The contents API reports it as a file's sha.
func blobSHA(content []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

// treeSHA is a stable id for a directory of a commit's tree.
func treeSHA(files map[string][]byte, dir string) string {
	h := sha1.New()
	fmt.Fprintf(h, "tree %s\n", dir)
	n := 0
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if dir == "" || strings.HasPrefix(p, dir+"/") {
			fmt.Fprintf(h, "%s %s\n", blobSHA(files[p]), p)
			n++
		}
	}
	if n == 0 && dir == "" {
		return emptyTreeSHA // git's, the same in every repository
	}
	return hex.EncodeToString(h.Sum(nil))
}

// resolve maps a ref as the API takes it (a branch name, "heads/x",
// "refs/heads/x", a tag, a full or abbreviated commit sha) to a commit. The
// caller holds s.mu.
func (rp *repo) resolve(ref string) (*commit, bool) {
	if ref == "" {
		return nil, false
	}
	if ref == "HEAD" { // as GitHub: commits/HEAD is the default branch's head
		ref = "refs/heads/" + rp.defaultBranch
	}
	for _, full := range []string{"refs/heads/" + ref, "refs/tags/" + ref, "refs/" + ref, ref} {
		if sha, ok := rp.refs[full]; ok && strings.HasPrefix(full, "refs/") {
			c, ok := rp.commits[sha]
			return c, ok
		}
	}
	if c, ok := rp.commits[strings.ToLower(ref)]; ok {
		return c, true
	}
	if len(ref) >= 7 && len(ref) < 40 && isHex(ref) {
		var found *commit
		for sha, c := range rp.commits {
			if strings.HasPrefix(sha, strings.ToLower(ref)) {
				if found != nil {
					return nil, false // ambiguous
				}
				found = c
			}
		}
		return found, found != nil
	}
	return nil, false
}

func isHex(s string) bool {
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r >= 'A' && r <= 'F') {
			return false
		}
	}
	return s != ""
}

// branch returns the head sha of a branch.
func (rp *repo) branch(name string) (string, bool) {
	sha, ok := rp.refs["refs/heads/"+name]
	return sha, ok
}

// ancestors returns every commit reachable from sha, itself included.
func (rp *repo) ancestors(sha string) map[string]bool {
	seen := map[string]bool{}
	stack := []string{sha}
	for len(stack) > 0 {
		cur := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[cur] {
			continue
		}
		c, ok := rp.commits[cur]
		if !ok {
			continue
		}
		seen[cur] = true
		stack = append(stack, c.parents...)
	}
	return seen
}

// comparison is how head relates to base.
type comparison struct {
	status            string // identical, ahead, behind, diverged
	aheadBy, behindBy int
	mergeBase         string
	ahead             []*commit // commits in head and not in base, oldest first
}

// compareCommits compares two commits of rp; ok is false when they share
// no history.
func (rp *repo) compareCommits(base, head string) (comparison, bool) {
	if base == head {
		return comparison{status: "identical", mergeBase: base}, true
	}
	ba, ha := rp.ancestors(base), rp.ancestors(head)
	var cmp comparison
	for sha := range ha {
		if !ba[sha] {
			cmp.ahead = append(cmp.ahead, rp.commits[sha])
		}
	}
	for sha := range ba {
		if !ha[sha] {
			cmp.behindBy++
		}
	}
	cmp.aheadBy = len(cmp.ahead)
	if cmp.aheadBy == len(ha) {
		return comparison{}, false
	}
	// The merge base is the newest common ancestor: the one furthest from
	// the root (ties broken by sha, for a stable answer).
	gen := rp.generations()
	for sha := range ha {
		if ba[sha] && (cmp.mergeBase == "" || gen[sha] > gen[cmp.mergeBase] ||
			gen[sha] == gen[cmp.mergeBase] && sha < cmp.mergeBase) {
			cmp.mergeBase = sha
		}
	}
	slices.SortFunc(cmp.ahead, func(a, b *commit) int {
		if d := gen[a.sha] - gen[b.sha]; d != 0 {
			return d
		}
		return strings.Compare(a.sha, b.sha)
	})
	switch {
	case cmp.aheadBy == 0:
		cmp.status = "behind"
	case cmp.behindBy == 0:
		cmp.status = "ahead"
	default:
		cmp.status = "diverged"
	}
	return cmp, true
}

// generations numbers every commit by its distance from the root: a
// commit's number is one more than its parents' greatest, so sorting by it
// puts parents before children.
func (rp *repo) generations() map[string]int {
	gen := make(map[string]int, len(rp.commits))
	var visit func(sha string) int
	visit = func(sha string) int {
		if g, ok := gen[sha]; ok {
			return g
		}
		gen[sha] = 0 // guards against a cycle, which cannot be built here
		g := 1
		if c, ok := rp.commits[sha]; ok {
			for _, p := range c.parents {
				g = max(g, visit(p)+1)
			}
		}
		gen[sha] = g
		return g
	}
	for sha := range rp.commits {
		visit(sha)
	}
	return gen
}

// labelByName finds a repository label, comparing names without case.
func (rp *repo) labelByName(name string) *label {
	for _, l := range rp.labels {
		if strings.EqualFold(l.name, name) {
			return l
		}
	}
	return nil
}

// addLabel creates a label; the caller checked it does not exist.
func (s *Server) addLabel(rp *repo, name, color, description string, isDefault bool) *label {
	l := &label{id: s.nextID(labelIDs), name: name, color: color, description: description, isDefault: isDefault}
	rp.labels = append(rp.labels, l)
	slices.SortStableFunc(rp.labels, func(a, b *label) int {
		return strings.Compare(strings.ToLower(a.name), strings.ToLower(b.name))
	})
	return l
}

// issueByNumber returns issue or PR number n.
func (rp *repo) issueByNumber(n int64) *issue {
	if n < 1 || n > int64(len(rp.issues)) {
		return nil
	}
	return rp.issues[n-1]
}

// newIssue stores an issue (pr == nil) or a PR under the next number.
func (s *Server) newIssue(rp *repo, author, title, body string, hasBody bool, pr *pull) *issue {
	now := s.now()
	is := &issue{
		id:      s.nextID(issueIDs),
		number:  len(rp.issues) + 1,
		title:   title,
		body:    body,
		hasBody: hasBody,
		author:  s.userFor(author).login,
		state:   "open",
		created: now,
		updated: now,
		pull:    pr,
	}
	rp.issues = append(rp.issues, is)
	s.crossReferenceLocked(rp, is, author, title+"\n"+body)
	return is
}

// addIssueLabelsLocked adds names to is as actor did, creating unknown
// repository labels (color ededed) the way POST .../issues and .../labels
// do; the timeline shows a labeled event for each label is did not have.
func (s *Server) addIssueLabelsLocked(rp *repo, is *issue, actor string, names []string) {
	for _, n := range names {
		l := rp.labelByName(n)
		if l == nil {
			l = s.addLabel(rp, n, "ededed", "", false)
		}
		if !slices.Contains(is.labels, l) {
			is.labels = append(is.labels, l)
			s.labelEventLocked(is, "labeled", actor, l.name)
		}
	}
}

func (s *Server) newComment(rp *repo, is *issue, author, body string) *comment {
	now := s.now()
	cm := &comment{id: s.nextID(commentIDs), issue: is, body: body, author: s.userFor(author).login, created: now, updated: now}
	is.comments = append(is.comments, cm)
	rp.comments[cm.id] = cm
	s.crossReferenceLocked(rp, is, author, body)
	return cm
}

// tooLong reports whether a body is over GitHub's 65,536 character limit.
func tooLong(body string) bool { return len([]rune(body)) > maxBodyChars }

const (
	maxBodyChars = 65536
	maxLabelName = 50
)
