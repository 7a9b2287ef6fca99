package fakegithub

import (
	"fmt"
	"net/http"
	"strings"
)

func init() {
	handle(map[string]repoEndpoint{
		"POST /pulls/{number}/reviews":             onPull((*Server).createReview),
		"GET /pulls/{number}/reviews/{id}":         (*Server).getReview,
		"POST /pulls/{number}/reviews/{id}/events": (*Server).submitReview,
	})
}

// KindReview: a pull request review was created or submitted.
const KindReview CommitKind = "review"

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
