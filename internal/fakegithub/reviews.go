package fakegithub

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// review is a pull request review (SeedReview).
type review struct {
	id        int64
	author    string
	state     string // APPROVED, CHANGES_REQUESTED, COMMENTED
	body      string
	submitted time.Time
	commitID  string
}

type reviewJSON struct {
	ID                int64     `json:"id"`
	NodeID            string    `json:"node_id"`
	User              *userJSON `json:"user"`
	Body              string    `json:"body"`
	State             string    `json:"state"`
	HTMLURL           string    `json:"html_url"`
	PullRequestURL    string    `json:"pull_request_url"`
	SubmittedAt       string    `json:"submitted_at"`
	CommitID          string    `json:"commit_id"`
	AuthorAssociation string    `json:"author_association"`
}

// listReviews serves GET /repos/{owner}/{repo}/pulls/{number}/reviews,
// oldest first, paginated; an issue's number is 404, as on GitHub.
func (s *Server) listReviews(c *call, rp *repo) *reply {
	is := pullByNumber(c, rp)
	if is == nil {
		return notFound()
	}
	items := make([]reviewJSON, 0, len(is.pull.reviews))
	for _, rv := range is.pull.reviews {
		items = append(items, reviewJSON{
			ID:                rv.id,
			NodeID:            nodeID("PullRequestReview", rv.id),
			User:              s.userJSON(rv.author),
			Body:              rv.body,
			State:             rv.state,
			HTMLURL:           s.web(fmt.Sprintf("%s#pullrequestreview-%d", s.issueWebPath(rp, is), rv.id)),
			PullRequestURL:    s.api(fmt.Sprintf("%s/pulls/%d", rp.path(), is.number)),
			SubmittedAt:       stamp(rv.submitted),
			CommitID:          rv.commitID,
			AuthorAssociation: association(rp, rv.author),
		})
	}
	return pageReply(s, c, repoLinkPath(c, rp), items)
}

// SeedReview stores a review by login (state APPROVED, CHANGES_REQUESTED or
// COMMENTED) on pull request number and returns its id, or 0 when the
// repository or the pull request does not exist.
func (s *Server) SeedReview(owner, repo string, number int, login, state, body string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repoLocked(owner, repo)
	if rp == nil {
		return 0
	}
	is := rp.issueByNumber(int64(number))
	if is == nil || is.pull == nil {
		return 0
	}
	// Review ids share the comment counter's range, as on GitHub they are
	// large and unrelated to issue numbers.
	s.ids.comment++
	// A review answers the author's pending request, as on GitHub.
	is.pull.requestedUsers = slices.DeleteFunc(is.pull.requestedUsers, func(l string) bool { return strings.EqualFold(l, login) })
	is.pull.reviews = append(is.pull.reviews, review{id: s.ids.comment, author: s.userFor(login).login, state: state, body: body, submitted: s.now(), commitID: s.liveHeadSHA(is.pull)})
	return s.ids.comment
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
func (s *Server) AddCommitSameTree(owner, repo, sha, login string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repoLocked(owner, repo)
	if rp == nil {
		return ""
	}
	c, ok := rp.commits[sha]
	if !ok {
		return ""
	}
	return s.newCommit(rp, c.parents, c.files, c.message+" (again)", s.userFor(login).login).sha
}
