package fakegithub

import (
	"bytes"
	"cmp"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

func init() {
	handle(map[string]repoEndpoint{
		"GET /pulls/comments":                        (*Server).listRepoReviewComments,
		"GET /pulls/comments/{id}":                   (*Server).getReviewComment,
		"GET /pulls/{number}/comments":               onPull((*Server).listReviewComments),
		"POST /pulls/{number}/comments":              (*Server).createReviewComment,
		"POST /pulls/{number}/comments/{id}/replies": (*Server).replyToReviewComment,
	})
}

// KindReviewComment: an inline comment on a pull request was created.
const KindReviewComment CommitKind = "review-comment"

// reviewComment is an inline comment on a pull request's diff: a thread's
// first comment, or a reply (inReplyTo, the thread's first comment).
type reviewComment struct {
	id               int64
	author, body     string
	path, commitID   string
	side, startSide  string
	line, startLine  int
	inReplyTo        int64
	created, updated time.Time
	pullNumber       int
	fileLevel        bool
}

// reviewCommentStore holds a pull request's inline comments, oldest first.
type reviewCommentStore struct{ all []*reviewComment }

type reviewCommentJSON struct {
	URL               string    `json:"url"`
	ID                int64     `json:"id"`
	NodeID            string    `json:"node_id"`
	Path              string    `json:"path"`
	CommitID          string    `json:"commit_id"`
	InReplyToID       int64     `json:"in_reply_to_id,omitempty"`
	User              *userJSON `json:"user"`
	Body              string    `json:"body"`
	CreatedAt         string    `json:"created_at"`
	UpdatedAt         string    `json:"updated_at"`
	HTMLURL           string    `json:"html_url"`
	PullRequestURL    string    `json:"pull_request_url"`
	AuthorAssociation string    `json:"author_association"`
	StartLine         *int      `json:"start_line"`
	StartSide         *string   `json:"start_side"`
	Line              int       `json:"line"`
	Side              string    `json:"side"`
	SubjectType       string    `json:"subject_type"`
}

func (s *Server) reviewCommentJSON(rp *repo, is *issue, rc *reviewComment) reviewCommentJSON {
	out := reviewCommentJSON{
		URL:               s.api(fmt.Sprintf("%s/pulls/comments/%d", rp.path(), rc.id)),
		ID:                rc.id,
		NodeID:            nodeID("PullRequestReviewComment", rc.id),
		Path:              rc.path,
		CommitID:          rc.commitID,
		InReplyToID:       rc.inReplyTo,
		User:              s.userJSON(rc.author),
		Body:              rc.body,
		CreatedAt:         stamp(rc.created),
		UpdatedAt:         stamp(rc.updated),
		HTMLURL:           s.web(fmt.Sprintf("%s#discussion_r%d", s.issueWebPath(rp, is), rc.id)),
		PullRequestURL:    s.api(fmt.Sprintf("%s/pulls/%d", rp.path(), is.number)),
		AuthorAssociation: association(rp, rc.author),
		Line:              rc.line,
		Side:              rc.side,
		SubjectType:       "line",
	}
	if rc.fileLevel {
		out.SubjectType = "file"
	}
	if rc.startLine > 0 {
		out.StartLine, out.StartSide = &rc.startLine, &rc.startSide
	}
	return out
}

// listReviewComments serves GET /repos/{owner}/{repo}/pulls/{number}/comments:
// the pull request's inline comments, oldest first, paginated; since
// filters on updated_at. An issue's number is 404, as on GitHub.
func (s *Server) listReviewComments(c *call, rp *repo, is *issue) *reply {
	since, hasSince := parseSince(c.r.URL.Query().Get("since"))
	items := []reviewCommentJSON{}
	for _, rc := range storeOf[reviewCommentStore](is.pull).all {
		if !(hasSince && rc.updated.Before(since)) {
			items = append(items, s.reviewCommentJSON(rp, is, rc))
		}
	}
	return pageReply(s, c, repoLinkPath(c, rp), items)
}

// listRepoReviewComments serves GET /repos/{owner}/{repo}/pulls/comments:
// every pull request's inline comments, oldest first, paginated; since
// filters on updated_at.
func (s *Server) listRepoReviewComments(c *call, rp *repo) *reply {
	since, hasSince := parseSince(c.r.URL.Query().Get("since"))
	var items []reviewCommentJSON
	for _, is := range rp.issues {
		for _, rc := range pullComments(is) {
			if !(hasSince && rc.updated.Before(since)) {
				items = append(items, s.reviewCommentJSON(rp, is, rc))
			}
		}
	}
	slices.SortFunc(items, func(a, b reviewCommentJSON) int { return cmp.Compare(a.ID, b.ID) })
	return pageReply(s, c, repoLinkPath(c, rp), append([]reviewCommentJSON{}, items...))
}

func pullComments(is *issue) []*reviewComment {
	if is.pull == nil {
		return nil
	}
	return storeOf[reviewCommentStore](is.pull).all
}

// reviewCommentByID finds an inline comment of rp by its id.
func reviewCommentByID(rp *repo, id int64) (*issue, *reviewComment) {
	for _, is := range rp.issues {
		for _, rc := range pullComments(is) {
			if rc.id == id {
				return is, rc
			}
		}
	}
	return nil, nil
}

// getReviewComment serves GET /repos/{owner}/{repo}/pulls/comments/{id}.
func (s *Server) getReviewComment(c *call, rp *repo) *reply {
	id, _ := intParam(c, "id")
	is, rc := reviewCommentByID(rp, id)
	if rc == nil {
		return notFound()
	}
	return jsonReply(http.StatusOK, s.reviewCommentJSON(rp, is, rc))
}

// createReviewComment serves POST /repos/{owner}/{repo}/pulls/{number}/comments:
// with in_reply_to a reply (every other field but body ignored, as on
// GitHub), else a comment on a line of the diff of commit_id. A line the
// diff does not show (a path the pull request does not change, a line
// past the end of the file on that side) is 422 and nothing is made.
// Comments have no uniqueness: the same request twice makes two.
func (s *Server) createReviewComment(c *call, rp *repo) *reply {
	var in struct {
		Body        *string `json:"body"`
		CommitID    string  `json:"commit_id"`
		Path        string  `json:"path"`
		Line        int     `json:"line"`
		Side        string  `json:"side"`
		StartLine   int     `json:"start_line"`
		StartSide   string  `json:"start_side"`
		InReplyTo   int64   `json:"in_reply_to"`
		SubjectType string  `json:"subject_type"`
	}
	if rep := decodeBody(c, &in); rep != nil {
		return rep
	}
	if in.InReplyTo != 0 {
		return s.reply(c, rp, in.InReplyTo, in.Body)
	}
	is := pullByNumber(c, rp)
	if is == nil {
		return notFound()
	}
	if rep := reviewBodyIn(in.Body); rep != nil {
		return rep
	}
	for _, f := range []struct{ name, v string }{{"commit_id", in.CommitID}, {"path", in.Path}} {
		if f.v == "" {
			return invalidRequest("%q wasn't supplied.", f.name)
		}
	}
	rc := &reviewComment{author: c.login, body: *in.Body, path: in.Path, commitID: in.CommitID, side: in.Side, line: in.Line,
		startSide: in.StartSide, startLine: in.StartLine, fileLevel: in.SubjectType == "file"}
	if rc.side == "" {
		rc.side = "RIGHT"
	}
	if rc.startLine > 0 && rc.startSide == "" {
		rc.startSide = rc.side
	}
	if rep := s.onDiff(rp, is.pull, rc); rep != nil {
		return rep
	}
	return s.storeReviewComment(rp, is, rc)
}

// replyToReviewComment serves POST
// /repos/{owner}/{repo}/pulls/{number}/comments/{id}/replies.
func (s *Server) replyToReviewComment(c *call, rp *repo) *reply {
	var in struct {
		Body *string `json:"body"`
	}
	if rep := decodeBody(c, &in); rep != nil {
		return rep
	}
	id, _ := intParam(c, "id")
	return s.reply(c, rp, id, in.Body)
}

// reply answers a comment of the pull request in the path: a reply joins
// the thread of the comment it names (a reply to a reply, the thread's
// first comment), at its line. A comment on another pull request, or none,
// is 404.
func (s *Server) reply(c *call, rp *repo, to int64, body *string) *reply {
	is := pullByNumber(c, rp)
	if is == nil {
		return notFound()
	}
	on, root := reviewCommentByID(rp, to)
	if root == nil || on != is {
		return notFound()
	}
	if rep := reviewBodyIn(body); rep != nil {
		return rep
	}
	if root.inReplyTo != 0 {
		_, root = reviewCommentByID(rp, root.inReplyTo)
	}
	rc := *root
	rc.author, rc.body, rc.inReplyTo = c.login, *body, root.id
	return s.storeReviewComment(rp, is, &rc)
}

func reviewBodyIn(body *string) *reply {
	if body == nil || strings.TrimSpace(*body) == "" {
		return validationFailed(apiError{Resource: "PullRequestReviewComment", Code: "missing_field", Field: "body"})
	}
	if tooLong(*body) {
		return bodyTooLong("PullRequestReviewComment")
	}
	return nil
}

func (s *Server) storeReviewComment(rp *repo, is *issue, rc *reviewComment) *reply {
	rc.id, rc.pullNumber = s.nextID(commentIDs), is.number
	rc.author = s.userFor(rc.author).login
	rc.created, rc.updated = s.now(), s.now()
	st := storeOf[reviewCommentStore](is.pull)
	st.all = append(st.all, rc)
	is.updated = rc.created
	return created(s.api(fmt.Sprintf("%s/pulls/comments/%d", rp.path(), rc.id)), s.reviewCommentJSON(rp, is, rc),
		&Commit{Kind: KindReviewComment, Number: is.number, ID: rc.id})
}

// onDiff refuses a comment the pull request's diff at its commit cannot
// hold, as GitHub does: a commit not in the pull request, a side other
// than LEFT or RIGHT, a path the diff does not change, a line (or a start
// line) outside the file on that side. The fake's diff is whole files: a
// changed file's every line is on it.
func (s *Server) onDiff(rp *repo, p *pull, rc *reviewComment) *reply {
	in := rp
	if p.headRepo != nil {
		in = p.headRepo
	}
	base := p.baseSHA
	if sha, ok := rp.branch(p.baseRef); ok {
		base = sha
	}
	cmp, ok := in.compareCommits(base, s.liveHeadSHA(p))
	if !ok || !slices.ContainsFunc(cmp.ahead, func(cm *commit) bool { return cm.sha == rc.commitID }) {
		return validationFailed(apiError{Resource: "PullRequestReviewComment", Code: "invalid", Field: "commit_id", Message: "commit_id is not part of the pull request"})
	}
	thread := func(field, why string) *reply {
		return validationFailed(apiError{Resource: "PullRequestReviewComment", Code: "custom", Field: "pull_request_review_thread." + field, Message: "pull_request_review_thread." + field + " " + why})
	}
	for _, side := range []string{rc.side, rc.startSide} {
		if side != "" && side != "LEFT" && side != "RIGHT" {
			return thread("side", "must be LEFT or RIGHT")
		}
	}
	old, oldOK := in.commits[cmp.mergeBase].files[rc.path]
	now, nowOK := in.commits[rc.commitID].files[rc.path]
	if oldOK == nowOK && bytes.Equal(old, now) {
		return thread("path", "could not be resolved")
	}
	if rc.fileLevel {
		return nil
	}
	lines := map[string]int{"LEFT": lineCount(old), "RIGHT": lineCount(now)}
	if rc.line < 1 || rc.line > lines[rc.side] {
		return thread("line", "must be part of the diff")
	}
	if rc.startLine != 0 && (rc.startLine < 1 || rc.startLine > lines[rc.startSide] || rc.startSide == rc.side && rc.startLine >= rc.line) {
		return thread("start_line", "must precede the end line and be part of the diff")
	}
	return nil
}

func lineCount(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	return bytes.Count(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")) + 1
}

// ReviewComments returns the inline comments on pull request number, oldest
// first (Path and Line say where; InReplyTo the thread of a reply).
func (s *Server) ReviewComments(owner, name string, number int) []Comment {
	return inPull(s, owner, name, number, func(_ *repo, is *issue) (out []Comment) {
		for _, rc := range storeOf[reviewCommentStore](is.pull).all {
			out = append(out, Comment{ID: rc.id, Body: rc.body, Author: rc.author, CreatedAt: rc.created, Path: rc.path, Line: rc.line, InReplyTo: rc.inReplyTo})
		}
		return out
	})
}
