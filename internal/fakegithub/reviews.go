package fakegithub

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

func init() {
	handle(map[string]repoEndpoint{
		"GET /pulls/{number}/reviews":              onPull((*Server).listReviews),
		"POST /pulls/{number}/reviews":             onPull((*Server).createReview),
		"GET /pulls/{number}/reviews/{id}":         (*Server).getReview,
		"POST /pulls/{number}/reviews/{id}/events": (*Server).submitReview,
	})
}

// KindReview: a pull request review was created or submitted.
const KindReview CommitKind = "review"

// review is a pull request review: seeded (SeedReview) or made through
// POST .../reviews. A PENDING review has no submitted time and is shown to
// its author only.
type review struct {
	id        int64
	author    string
	state     string // PENDING, APPROVED, CHANGES_REQUESTED, COMMENTED
	body      string
	submitted time.Time
	commitID  string
	comments  []reviewDraftComment
}

// reviewStore holds a pull request's reviews, oldest first.
type reviewStore struct{ all []*review }

// reviewDraftComment is an inline comment made with its review (the
// review's own, not one of reviewcomments.go's).
type reviewDraftComment struct {
	Path      string `json:"path"`
	Line      int    `json:"line"`
	Side      string `json:"side,omitempty"`
	StartLine int    `json:"start_line,omitempty"`
	StartSide string `json:"start_side,omitempty"`
	Body      string `json:"body"`
}

type reviewJSON struct {
	ID                int64     `json:"id"`
	NodeID            string    `json:"node_id"`
	User              *userJSON `json:"user"`
	Body              string    `json:"body"`
	State             string    `json:"state"`
	HTMLURL           string    `json:"html_url"`
	PullRequestURL    string    `json:"pull_request_url"`
	SubmittedAt       *string   `json:"submitted_at,omitempty"`
	CommitID          string    `json:"commit_id"`
	AuthorAssociation string    `json:"author_association"`
}

func (s *Server) reviewJSON(rp *repo, is *issue, rv *review) reviewJSON {
	return reviewJSON{
		ID:                rv.id,
		NodeID:            nodeID("PullRequestReview", rv.id),
		User:              s.userJSON(rv.author),
		Body:              rv.body,
		State:             rv.state,
		HTMLURL:           s.web(fmt.Sprintf("%s#pullrequestreview-%d", s.issueWebPath(rp, is), rv.id)),
		PullRequestURL:    s.api(fmt.Sprintf("%s/pulls/%d", rp.path(), is.number)),
		SubmittedAt:       tsOrNil(rv.submitted),
		CommitID:          rv.commitID,
		AuthorAssociation: association(rp, rv.author),
	}
}

// visibleTo reports whether login sees rv: a pending review is its
// author's only.
func (rv *review) visibleTo(login string) bool {
	return rv.state != "PENDING" || strings.EqualFold(rv.author, login)
}

// listReviews serves GET /repos/{owner}/{repo}/pulls/{number}/reviews,
// oldest first, paginated; an issue's number is 404, as on GitHub.
func (s *Server) listReviews(c *call, rp *repo, is *issue) *reply {
	all := storeOf[reviewStore](is.pull).all
	items := make([]reviewJSON, 0, len(all))
	for _, rv := range all {
		if rv.visibleTo(c.login) {
			items = append(items, s.reviewJSON(rp, is, rv))
		}
	}
	return pageReply(s, c, repoLinkPath(c, rp), items)
}

// reviewByParam is the review {id} of pull request {number} as the caller
// sees it, or nil.
func reviewByParam(c *call, rp *repo) (*issue, *review) {
	is := pullByNumber(c, rp)
	id, ok := intParam(c, "id")
	if is == nil || !ok {
		return nil, nil
	}
	for _, rv := range storeOf[reviewStore](is.pull).all {
		if rv.id == id && rv.visibleTo(c.login) {
			return is, rv
		}
	}
	return nil, nil
}

// getReview serves GET /repos/{owner}/{repo}/pulls/{number}/reviews/{id}.
func (s *Server) getReview(c *call, rp *repo) *reply {
	is, rv := reviewByParam(c, rp)
	if rv == nil {
		return notFound()
	}
	return jsonReply(http.StatusOK, s.reviewJSON(rp, is, rv))
}

// reviewStates maps a review event to the state it leaves.
var reviewStates = map[string]string{"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED"}

// unprocessable is GitHub's 422 whose errors are plain strings (the
// reviews API's).
func unprocessable(msg string) *reply {
	return jsonReply(http.StatusUnprocessableEntity, struct {
		Message string   `json:"message"`
		Errors  []string `json:"errors"`
		DocURL  string   `json:"documentation_url"`
	}{"Unprocessable Entity", []string{msg}, docURL})
}

// ownPullRefusal is GitHub's refusal of event on login's own pull request,
// or nil.
func ownPullRefusal(is *issue, login, event string) *reply {
	if !strings.EqualFold(is.author, login) {
		return nil
	}
	switch event {
	case "APPROVE":
		return unprocessable("Can not approve your own pull request")
	case "REQUEST_CHANGES":
		return unprocessable("Can not request changes on your own pull request")
	}
	return nil
}

// createReview serves POST /repos/{owner}/{repo}/pulls/{number}/reviews:
// the review and its inline comments in one write. Without an event the
// review stays PENDING; a user has at most one pending review per pull
// request, and any create (pending or submitted) is refused while one is
// there. GitHub refuses APPROVE and REQUEST_CHANGES by the pull request's
// author.
func (s *Server) createReview(c *call, rp *repo, is *issue) *reply {
	var in struct {
		Body     string               `json:"body"`
		Event    string               `json:"event"`
		CommitID string               `json:"commit_id"`
		Comments []reviewDraftComment `json:"comments"`
	}
	if rep := decodeBody(c, &in); rep != nil {
		return rep
	}
	state := "PENDING"
	if in.Event != "" {
		if state = reviewStates[in.Event]; state == "" {
			return validationFailed(apiError{Resource: "PullRequestReview", Code: "invalid", Field: "event"})
		}
	}
	if tooLong(in.Body) {
		return validationFailed(apiError{Resource: "PullRequestReview", Code: "unprocessable", Field: "body", Message: fmt.Sprintf("Body is too long (maximum is %d characters)", maxBodyChars)})
	}
	for _, cm := range in.Comments {
		if cm.Path == "" || cm.Line <= 0 || strings.TrimSpace(cm.Body) == "" {
			return unprocessable("Path, line and body are required for each comment")
		}
	}
	for _, rv := range storeOf[reviewStore](is.pull).all {
		if rv.state == "PENDING" && strings.EqualFold(rv.author, c.login) {
			return unprocessable("User can only have one pending review per pull request")
		}
	}
	if rep := ownPullRefusal(is, c.login, in.Event); rep != nil {
		return rep
	}
	commitID := in.CommitID
	if commitID == "" {
		commitID = s.liveHeadSHA(is.pull)
	}
	rv := s.addReview(is, c.login, state, in.Body, commitID, in.Comments)
	return stored(http.StatusOK, s.reviewJSON(rp, is, rv), &Commit{Kind: KindReview, Number: is.number, ID: rv.id})
}

// submitReview serves POST /repos/{owner}/{repo}/pulls/{number}/reviews/{id}/events:
// it submits the caller's pending review with event (and body, when given).
func (s *Server) submitReview(c *call, rp *repo) *reply {
	is, rv := reviewByParam(c, rp)
	if rv == nil {
		return notFound()
	}
	var in struct {
		Body  string `json:"body"`
		Event string `json:"event"`
	}
	if rep := decodeBody(c, &in); rep != nil {
		return rep
	}
	state := reviewStates[in.Event]
	switch {
	case state == "":
		return validationFailed(apiError{Resource: "PullRequestReview", Code: "invalid", Field: "event"})
	case rv.state != "PENDING":
		return unprocessable("Can not submit a review that is not pending")
	}
	if rep := ownPullRefusal(is, c.login, in.Event); rep != nil {
		return rep
	}
	if in.Body != "" {
		rv.body = in.Body
	}
	rv.state = state
	s.submitted(is, rv)
	return stored(http.StatusOK, s.reviewJSON(rp, is, rv), &Commit{Kind: KindReview, Number: is.number, ID: rv.id})
}

// addReview stores a review by login on pull request is, submitted now
// unless state is PENDING.
func (s *Server) addReview(is *issue, login, state, body, commitID string, comments []reviewDraftComment) *review {
	rv := &review{id: s.nextID(commentIDs), author: s.userFor(login).login, state: state, body: body, commitID: commitID, comments: comments}
	if state != "PENDING" {
		s.submitted(is, rv)
	}
	st := storeOf[reviewStore](is.pull)
	st.all = append(st.all, rv)
	return rv
}

// submitted stamps rv as submitted now: it answers its author's pending
// review request, as on GitHub.
func (s *Server) submitted(is *issue, rv *review) {
	rv.submitted = s.now()
	is.pull.requestedUsers = slices.DeleteFunc(is.pull.requestedUsers, func(l string) bool { return strings.EqualFold(l, rv.author) })
}

// Review is a stored pull request review, pending ones included.
type Review struct {
	ID                  int64
	Author, State, Body string
	Comments            int // inline comments made with it
}

// Reviews returns pull request number's reviews, oldest first.
func (s *Server) Reviews(owner, name string, number int) []Review {
	return inPull(s, owner, name, number, func(_ *repo, is *issue) (out []Review) {
		for _, rv := range storeOf[reviewStore](is.pull).all {
			out = append(out, Review{ID: rv.id, Author: rv.author, State: rv.state, Body: rv.body, Comments: len(rv.comments)})
		}
		return out
	})
}

// SeedReview stores a review by login (state APPROVED, CHANGES_REQUESTED,
// COMMENTED or PENDING) on pull request number and returns its id, or 0 when the
// repository or the pull request does not exist.
func (s *Server) SeedReview(owner, name string, number int, login, state, body string) int64 {
	return inPull(s, owner, name, number, func(_ *repo, is *issue) int64 {
		return s.addReview(is, login, state, body, s.liveHeadSHA(is.pull), nil).id
	})
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
