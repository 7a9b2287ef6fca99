package fakegithub

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// AddRepo creates the repository owner/name with one initial commit (a
// README.md) on defaultBranch ("main" when empty) and GitHub's default
// labels, and returns that commit's sha. If the repository exists it
// changes nothing and returns its default branch's head.
func (s *Server) AddRepo(owner, name, defaultBranch string) (headSHA string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rp := s.repoLocked(owner, name); rp != nil {
		sha, _ := rp.branch(rp.defaultBranch)
		return sha
	}
	if defaultBranch == "" {
		defaultBranch = "main"
	}
	rp := &repo{
		id:            s.nextID(repoIDs),
		owner:         s.userFor(owner).login,
		name:          name,
		defaultBranch: defaultBranch,
		created:       s.now(),
		commits:       map[string]*commit{},
		refs:          map[string]string{},
		comments:      map[int64]*comment{},
	}
	s.repos[strings.ToLower(owner+"/"+name)] = rp
	s.reposByID[rp.id] = rp
	for _, l := range defaultLabels {
		s.addLabel(rp, l.name, l.color, l.description, true)
	}
	c := s.newCommit(rp, nil, map[string][]byte{"README.md": []byte("# " + name + "\n")}, "Initial commit", rp.owner)
	rp.refs["refs/heads/"+defaultBranch] = c.sha
	return c.sha
}

// AddCommit makes a new commit whose parent is branch's head (a
// descendant, with the same files) and returns its sha. It does not move
// branch: point a branch at the commit with SetRef, e.g. a feature branch
// one commit ahead of main (GitHub refuses a PR with no commits between
// base and head). It returns "" when the repository or the branch does not
// exist.
func (s *Server) AddCommit(owner, repo, branch string) (sha string) {
	return s.addCommit(owner, repo, branch, "")
}

// AddCommitBy is AddCommit with the commit authored by login (GitHub links
// the commit to that account): a branch someone pushed. It returns "" when
// the repository or the branch does not exist.
func (s *Server) AddCommitBy(owner, repo, branch, login string) (sha string) {
	return s.addCommit(owner, repo, branch, login)
}

// AddCommitSameTree makes a commit by login with the same parent and tree
// as commit sha but another identity (a rebase or an amended message): two
// heads with the same tree. It returns "" when the repository or the
// commit does not exist.
func (s *Server) AddCommitSameTree(owner, name, sha, login string) string {
	return inRepo(s, owner, name, func(rp *repo) string {
		c, ok := rp.commits[sha]
		if !ok {
			return ""
		}
		return s.newCommit(rp, c.parents, c.files, c.message+" (again)", s.userFor(login).login).sha
	})
}

// addCommit makes a commit whose parent is branch's head: by the
// repository's owner with the same files when login is empty, else by
// login with one file of its own added (AddCommitBy).
func (s *Server) addCommit(owner, name, branch, login string) (sha string) {
	return inRepo(s, owner, name, func(rp *repo) string {
		head, ok := rp.branch(branch)
		if !ok {
			return ""
		}
		files, msg, author := rp.commits[head].files, "Update "+branch, rp.owner
		if login != "" {
			files = maps.Clone(files)
			files["change-"+login+".txt"] = []byte(fmt.Sprintf("a change by %s (%d)\n", login, s.ids[commitSeq]))
			msg, author = "Change by "+login, s.userFor(login).login
		}
		return s.newCommit(rp, []string{head}, files, msg, author).sha
	})
}

// AddOrphanCommit makes a commit with no parent and an empty tree, unrelated
// to every other commit; point a branch at it with SetRef. It returns ""
// when the repository does not exist.
func (s *Server) AddOrphanCommit(owner, name string) (sha string) {
	return inRepo(s, owner, name, func(rp *repo) string {
		return s.newCommit(rp, nil, map[string][]byte{}, "Orphan commit", rp.owner).sha
	})
}

// SetRef creates branch at sha or moves it there. It does nothing when the
// repository or the commit is unknown.
func (s *Server) SetRef(owner, name, branch, sha string) {
	s.withRepo(owner, name, func(rp *repo) {
		if _, ok := rp.commits[sha]; ok {
			rp.refs["refs/heads/"+branch] = sha
		}
	})
}

// SeedPR describes a pull request made by someone else (Server.SeedPR).
type SeedPR struct {
	Title, Body string
	// Head is a branch of the repository, or "owner:branch" for a branch of
	// owner's fork (a repository with the same name). The branch need not
	// exist (it may have been deleted after a merge).
	Head string
	// Base is the target branch; default the repository's default branch.
	Base string
	// State is "open" (default), "closed" or "merged".
	State  string
	Draft  bool
	Labels []string
}

// SeedIssue describes an issue made by someone else (Server.SeedIssue).
type SeedIssue struct {
	Title, Body string
	Labels      []string
	// State is "open" (default) or "closed".
	State string
}

// SeedPR stores a PR authored by login without going through the API (no
// validation, no Writes, no OnCommit) and returns its number, or 0 when the
// repository does not exist. created_at is Options.Now.
func (s *Server) SeedPR(owner, name, login string, pr SeedPR) int {
	return inRepo(s, owner, name, func(rp *repo) int {
		base := pr.Base
		if base == "" {
			base = rp.defaultBranch
		}
		p := &pull{headOwner: rp.owner, headRepo: rp, headRef: pr.Head, baseRef: base, draft: pr.Draft}
		if o, b, ok := strings.Cut(pr.Head, ":"); ok {
			p.headOwner, p.headRef = s.userFor(o).login, b
			p.headRepo = s.repoLocked(o, rp.name)
		}
		p.baseSHA, _ = rp.branch(base)
		if p.headRepo != nil {
			p.headSHA, _ = p.headRepo.branch(p.headRef)
		}
		if p.headSHA == "" {
			p.headSHA = p.baseSHA
		}
		is := s.newIssue(rp, login, pr.Title, pr.Body, pr.Body != "", p)
		s.addIssueLabelsLocked(rp, is, login, pr.Labels)
		switch pr.State {
		case "closed":
			is.state, is.closed, is.closedBy = "closed", is.created, is.author
		case "merged":
			is.state, is.closed, is.closedBy = "closed", is.created, rp.owner
			p.merged, p.mergeSHA = is.created, p.headSHA
		}
		return is.number
	})
}

// SeedIssue stores an issue authored by login without going through the API
// and returns its number, or 0 when the repository does not exist.
func (s *Server) SeedIssue(owner, name, login string, is SeedIssue) int {
	return inRepo(s, owner, name, func(rp *repo) int {
		i := s.newIssue(rp, login, is.Title, is.Body, is.Body != "", nil)
		s.addIssueLabelsLocked(rp, i, login, is.Labels)
		if is.State == "closed" {
			i.state, i.stateReason, i.closed, i.closedBy = "closed", "completed", i.created, i.author
		}
		return i.number
	})
}

// SeedComment stores a comment by login on issue or PR number and returns
// its id, or 0 when the repository or the number does not exist.
func (s *Server) SeedComment(owner, name string, number int, login, body string) int64 {
	return inIssue(s, owner, name, number, func(rp *repo, is *issue) int64 {
		return s.newComment(rp, is, login, body).id
	})
}

// PR is a pull request as Server.PullRequests reports it.
type PR struct {
	Number      int
	Title, Body string
	// Head is the head branch, HeadOwner the login owning its repository.
	Head, HeadOwner string
	HeadSHA         string
	Base            string
	// State is "open" or "closed"; a merged PR is closed with Merged set.
	State     string
	Merged    bool
	Author    string
	Labels    []string
	Draft     bool
	CreatedAt time.Time
	// Assignees, Reviewers (pending review requests: logins, and
	// OWNER/SLUG for teams) and Milestone (its title, "" for none).
	Assignees, Reviewers []string
	Milestone            string
}

// Issue is an issue as Server.Issues reports it.
type Issue struct {
	Number      int
	Title, Body string
	State       string
	Author      string
	Labels      []string
	CreatedAt   time.Time
	Assignees   []string
	Milestone   string // its title, "" for none
}

// Comment is an issue or PR comment as Server.Comments reports it.
type Comment struct {
	ID        int64
	Body      string
	Author    string
	CreatedAt time.Time
	// Path, Line and InReplyTo are an inline comment's (ReviewComments).
	Path      string
	Line      int
	InReplyTo int64
}

// Label is a repository label as Server.Labels reports it.
type Label struct {
	Name, Color, Description string
}

// PullRequests returns the repository's PRs by number.
func (s *Server) PullRequests(owner, name string) []PR {
	return inRepo(s, owner, name, func(rp *repo) (out []PR) {
		for _, is := range rp.issues {
			if is.pull == nil {
				continue
			}
			p := is.pull
			out = append(out, PR{
				Number: is.number, Title: is.title, Body: is.body,
				Head: p.headRef, HeadOwner: p.headOwner, HeadSHA: s.liveHeadSHA(p), Base: p.baseRef,
				State: is.state, Merged: !p.merged.IsZero(), Author: is.author,
				Labels: labelNames(is.labels), Draft: p.draft, CreatedAt: is.created,
				Assignees: slices.Clone(is.assignees), Reviewers: reviewerNames(rp, p), Milestone: milestoneTitle(is),
			})
		}
		return out
	})
}

// Issues returns the repository's real issues (not PRs) by number.
func (s *Server) Issues(owner, name string) []Issue {
	return inRepo(s, owner, name, func(rp *repo) (out []Issue) {
		for _, is := range rp.issues {
			if is.pull != nil {
				continue
			}
			out = append(out, Issue{
				Number: is.number, Title: is.title, Body: is.body, State: is.state,
				Author: is.author, Labels: labelNames(is.labels), CreatedAt: is.created,
				Assignees: slices.Clone(is.assignees), Milestone: milestoneTitle(is),
			})
		}
		return out
	})
}

// Comments returns the comments on issue or PR number, oldest first.
func (s *Server) Comments(owner, name string, number int) []Comment {
	return inIssue(s, owner, name, number, func(_ *repo, is *issue) (out []Comment) {
		for _, cm := range is.comments {
			out = append(out, Comment{ID: cm.id, Body: cm.body, Author: cm.author, CreatedAt: cm.created})
		}
		return out
	})
}

// Labels returns the repository's labels, sorted by name.
func (s *Server) Labels(owner, name string) []Label {
	return inRepo(s, owner, name, func(rp *repo) (out []Label) {
		for _, l := range rp.labels {
			out = append(out, Label{Name: l.name, Color: l.color, Description: l.description})
		}
		return out
	})
}

// Branch returns the head sha of branch.
func (s *Server) Branch(owner, name, branch string) (sha string, ok bool) {
	s.withRepo(owner, name, func(rp *repo) { sha, ok = rp.branch(branch) })
	return sha, ok
}

// Branches returns every branch and its head sha.
func (s *Server) Branches(owner, name string) map[string]string {
	return inRepo(s, owner, name, func(rp *repo) map[string]string {
		out := map[string]string{}
		for ref, sha := range maps.All(rp.refs) {
			if b, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
				out[b] = sha
			}
		}
		return out
	})
}

// FileContent returns the content of path at the head of branch.
func (s *Server) FileContent(owner, name, branch, path string) (b []byte, ok bool) {
	s.withRepo(owner, name, func(rp *repo) {
		if sha, found := rp.branch(branch); found {
			b, ok = rp.commits[sha].files[strings.Trim(path, "/")]
		}
	})
	return append([]byte(nil), b...), ok
}

// Files lists the paths of every file at the head of branch, sorted.
func (s *Server) Files(owner, name, branch string) []string {
	return inRepo(s, owner, name, func(rp *repo) []string {
		sha, ok := rp.branch(branch)
		if !ok {
			return nil
		}
		return slices.Sorted(maps.Keys(rp.commits[sha].files))
	})
}

func labelNames(ls []*label) []string {
	var out []string
	for _, l := range ls {
		out = append(out, l.name)
	}
	return out
}

func reviewerNames(rp *repo, p *pull) []string {
	out := slices.Clone(p.requestedUsers)
	for _, t := range p.requestedTeams {
		out = append(out, rp.owner+"/"+t)
	}
	return out
}

func milestoneTitle(is *issue) string {
	if is.milestone == nil {
		return ""
	}
	return is.milestone.title
}
