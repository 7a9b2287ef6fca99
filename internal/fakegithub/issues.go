package fakegithub

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

func init() {
	handle(map[string]repoEndpoint{
		"GET /issues":                           (*Server).listIssues,
		"POST /issues":                          (*Server).createIssue,
		"GET /issues/comments/{id}":             (*Server).getComment,
		"PATCH /issues/comments/{id}":           (*Server).editComment,
		"DELETE /issues/comments/{id}":          (*Server).deleteComment,
		"GET /issues/{number}":                  onIssue((*Server).getIssue),
		"PATCH /issues/{number}":                onIssue((*Server).editIssue),
		"GET /issues/{number}/comments":         onIssue((*Server).listComments),
		"POST /issues/{number}/comments":        onIssue((*Server).createComment),
		"GET /issues/{number}/labels":           onIssue((*Server).listIssueLabels),
		"POST /issues/{number}/labels":          onIssue((*Server).addIssueLabels),
		"PUT /issues/{number}/labels":           onIssue((*Server).replaceIssueLabels),
		"DELETE /issues/{number}/labels/{name}": onIssue((*Server).removeIssueLabel),
	})
}

// issueByParam returns the issue or PR named by the {number} parameter.
func issueByParam(c *call, rp *repo) *issue {
	n, ok := intParam(c, "number")
	if !ok {
		return nil
	}
	return rp.issueByNumber(n)
}

// parseSince parses the since parameter (ISO 8601: a full timestamp or a
// date); ok is false when it is absent or malformed.
func parseSince(v string) (time.Time, bool) {
	if v == "" {
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// listIssues serves GET /repos/{owner}/{repo}/issues. Like GitHub's, the
// list includes pull requests (each with a "pull_request" key). Filters:
// state (open, closed, all; default open), labels (comma-separated, every
// one required, names compared without case), creator, since (updated at
// or after); sort (created, updated, comments) and direction.
func (s *Server) listIssues(c *call, rp *repo) *reply {
	q := c.r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	if state != "open" && state != "closed" && state != "all" {
		return validationFailed(apiError{Value: state, Resource: "Issue", Field: "state", Code: "invalid"})
	}
	var wantLabels []string
	for _, l := range strings.Split(q.Get("labels"), ",") {
		if l = strings.TrimSpace(l); l != "" {
			wantLabels = append(wantLabels, l)
		}
	}
	creator := q.Get("creator")
	since, hasSince := parseSince(q.Get("since"))

	var list []*issue
	for _, is := range rp.issues {
		if state != "all" && is.state != state {
			continue
		}
		if creator != "" && !strings.EqualFold(is.author, creator) {
			continue
		}
		if hasSince && is.updated.Before(since) {
			continue
		}
		if !hasAllLabels(is, wantLabels) {
			continue
		}
		list = append(list, is)
	}
	sortIssues(list, q.Get("sort"), q.Get("direction"))
	return pageReplyOf(s, c, repoLinkPath(c, rp), len(list), func(i int) *issueJSON { return s.issueJSON(rp, list[i]) })
}

func hasAllLabels(is *issue, names []string) bool {
	for _, n := range names {
		if !slices.ContainsFunc(is.labels, func(l *label) bool { return strings.EqualFold(l.name, n) }) {
			return false
		}
	}
	return true
}

// getIssue serves GET /repos/{owner}/{repo}/issues/{number}; a PR's number
// answers the PR's issue representation, with a "pull_request" key.
func (s *Server) getIssue(c *call, rp *repo, is *issue) *reply {
	return jsonReply(http.StatusOK, s.issueFullJSON(rp, is))
}

// labelNamesIn parses a list of labels as the API takes them: names, or
// objects with a name.
func labelNamesIn(raw []json.RawMessage) ([]string, *reply) {
	var names []string
	for _, r := range raw {
		var name string
		if err := json.Unmarshal(r, &name); err != nil {
			var obj struct {
				Name string `json:"name"`
			}
			if err := json.Unmarshal(r, &obj); err != nil {
				return nil, invalidRequest("%s is not a string.", bytes.TrimSpace(r))
			}
			name = obj.Name
		}
		if strings.TrimSpace(name) == "" {
			continue
		}
		names = append(names, name)
	}
	return names, nil
}

// checkLabelNames refuses a label name over 50 characters, the way adding
// labels to an issue does.
func checkLabelNames(names []string) *reply {
	for _, n := range names {
		if len([]rune(n)) > maxLabelName {
			return validationFailed(apiError{Value: n, Resource: "Label", Field: "name", Code: "invalid"})
		}
	}
	return nil
}

// createIssue serves POST /repos/{owner}/{repo}/issues. Unknown labels are
// created. Issues have no uniqueness: the same request twice makes two
// issues.
func (s *Server) createIssue(c *call, rp *repo) *reply {
	var in struct {
		Title  *string           `json:"title"`
		Body   *string           `json:"body"`
		Labels []json.RawMessage `json:"labels"`
	}
	if rep := decodeBody(c, &in); rep != nil {
		return rep
	}
	if in.Title == nil || strings.TrimSpace(*in.Title) == "" {
		return validationFailed(apiError{Resource: "Issue", Code: "missing_field", Field: "title"})
	}
	if in.Body != nil && tooLong(*in.Body) {
		return bodyTooLong("Issue")
	}
	names, rep := labelNamesIn(in.Labels)
	if rep != nil {
		return rep
	}
	if rep := checkLabelNames(names); rep != nil {
		return rep
	}
	body := ""
	if in.Body != nil {
		body = *in.Body
	}
	is := s.newIssue(rp, c.login, *in.Title, body, in.Body != nil, nil)
	s.addIssueLabelsLocked(rp, is, c.login, names)
	return created(s.api(fmt.Sprintf("%s/issues/%d", rp.path(), is.number)), s.issueFullJSON(rp, is), &Commit{Kind: KindIssue, Number: is.number})
}

// editIssue serves PATCH /repos/{owner}/{repo}/issues/{number} (PRs too):
// title, body, state, state_reason, labels (replacing them), milestone (a
// number or null; an unknown number is 422 invalid).
func (s *Server) editIssue(c *call, rp *repo, is *issue) *reply {
	var in struct {
		Title       *string            `json:"title"`
		Body        *string            `json:"body"`
		State       *string            `json:"state"`
		StateReason *string            `json:"state_reason"`
		Labels      *[]json.RawMessage `json:"labels"`
		Milestone   json.RawMessage    `json:"milestone"` // null clears it
	}
	if rep := decodeBody(c, &in); rep != nil {
		return rep
	}
	ms, setMilestone, rep := milestoneIn(rp, in.Milestone)
	if rep != nil {
		return rep
	}
	var names []string
	if in.Labels != nil {
		var rep *reply
		if names, rep = labelNamesIn(*in.Labels); rep != nil {
			return rep
		}
		if rep := checkLabelNames(names); rep != nil {
			return rep
		}
	}
	resource := "Issue"
	if is.pull != nil {
		resource = "PullRequest"
	}
	if rep := s.applyIssueEdit(rp, is, c.login, in.Title, in.Body, in.State, in.StateReason, resource); rep != nil {
		return rep
	}
	if in.Labels != nil {
		s.replaceIssueLabelsLocked(rp, is, c.login, names)
	}
	if setMilestone {
		is.milestone = ms
	}
	rep = stored(http.StatusOK, s.issueFullJSON(rp, is), &Commit{Kind: KindIssue, Number: is.number})
	if is.pull != nil {
		rep.commit.Kind = KindPull
	}
	return rep
}

// labelsIn parses the body of POST/PUT .../issues/{number}/labels: a bare
// array (what go-github sends) or {"labels": [...]}.
func labelsIn(c *call) ([]string, *reply) {
	var raw []json.RawMessage
	b := bytes.TrimSpace(c.body)
	if len(b) > 0 && b[0] == '[' {
		if rep := decodeBody(c, &raw); rep != nil {
			return nil, rep
		}
	} else {
		var in struct {
			Labels []json.RawMessage `json:"labels"`
		}
		if rep := decodeBody(c, &in); rep != nil {
			return nil, rep
		}
		raw = in.Labels
	}
	names, rep := labelNamesIn(raw)
	if rep != nil {
		return nil, rep
	}
	return names, checkLabelNames(names)
}

// listIssueLabels serves GET /repos/{owner}/{repo}/issues/{number}/labels.
func (s *Server) listIssueLabels(c *call, rp *repo, is *issue) *reply {
	return pageReply(s, c, repoLinkPath(c, rp), s.labelsJSON(rp, is.labels))
}

// addIssueLabels serves POST /repos/{owner}/{repo}/issues/{number}/labels
// (issues and PRs): it adds the labels, creating unknown ones, and answers
// every label the issue now has.
func (s *Server) addIssueLabels(c *call, rp *repo, is *issue) *reply {
	return s.setIssueLabels(c, rp, is, false)
}

// replaceIssueLabels serves PUT /repos/{owner}/{repo}/issues/{number}/labels.
func (s *Server) replaceIssueLabels(c *call, rp *repo, is *issue) *reply {
	return s.setIssueLabels(c, rp, is, true)
}

// setIssueLabels adds the request's labels to an issue or PR, after
// dropping its current ones when replace is set, and answers with every
// label it now has.
func (s *Server) setIssueLabels(c *call, rp *repo, is *issue, replace bool) *reply {
	names, rep := labelsIn(c)
	if rep != nil {
		return rep
	}
	if replace {
		s.replaceIssueLabelsLocked(rp, is, c.login, names)
	} else {
		s.addIssueLabelsLocked(rp, is, c.login, names)
	}
	is.updated = s.now()
	return stored(http.StatusOK, s.labelsJSON(rp, is.labels), &Commit{Kind: KindLabel, Number: is.number})
}

// removeIssueLabel serves DELETE
// /repos/{owner}/{repo}/issues/{number}/labels/{name}.
func (s *Server) removeIssueLabel(c *call, rp *repo, is *issue) *reply {
	if !s.removeIssueLabelLocked(is, c.login, c.params["name"]) {
		return errorReply(http.StatusNotFound, "Label does not exist")
	}
	return stored(http.StatusOK, s.labelsJSON(rp, is.labels), &Commit{Kind: KindLabel, Number: is.number})
}

// removeIssueLabelLocked takes label name off is as actor did, and reports
// whether it was there.
func (s *Server) removeIssueLabelLocked(is *issue, actor, name string) bool {
	i := slices.IndexFunc(is.labels, func(l *label) bool { return strings.EqualFold(l.name, name) })
	if i < 0 {
		return false
	}
	s.labelEventLocked(is, "unlabeled", actor, is.labels[i].name)
	is.labels = slices.Delete(is.labels, i, i+1)
	is.updated = s.now()
	return true
}

// replaceIssueLabelsLocked sets is's labels to names: an unlabeled event
// for each one dropped, a labeled event for each one new.
func (s *Server) replaceIssueLabelsLocked(rp *repo, is *issue, actor string, names []string) {
	for _, l := range slices.Clone(is.labels) {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, l.name) }) {
			s.removeIssueLabelLocked(is, actor, l.name)
		}
	}
	s.addIssueLabelsLocked(rp, is, actor, names)
}

// listComments serves GET /repos/{owner}/{repo}/issues/{number}/comments,
// oldest first, paginated; since filters on updated_at.
func (s *Server) listComments(c *call, rp *repo, is *issue) *reply {
	since, hasSince := parseSince(c.r.URL.Query().Get("since"))
	items := make([]*commentJSON, 0, len(is.comments))
	for _, cm := range is.comments {
		if hasSince && cm.updated.Before(since) {
			continue
		}
		items = append(items, s.commentJSON(rp, cm))
	}
	return pageReply(s, c, repoLinkPath(c, rp), items)
}

// commentBodyIn reads a comment's body from the request, refusing a
// missing, blank or oversized one as GitHub does.
func commentBodyIn(c *call) (string, *reply) {
	var in struct {
		Body *string `json:"body"`
	}
	if rep := decodeBody(c, &in); rep != nil {
		return "", rep
	}
	if in.Body == nil || strings.TrimSpace(*in.Body) == "" {
		return "", validationFailed(apiError{Resource: "IssueComment", Code: "missing_field", Field: "body"})
	}
	if tooLong(*in.Body) {
		return "", validationFailed(apiError{Resource: "IssueComment", Code: "unprocessable", Field: "data", Message: fmt.Sprintf("Body is too long (maximum is %d characters)", maxBodyChars)})
	}
	return *in.Body, nil
}

// createComment serves POST /repos/{owner}/{repo}/issues/{number}/comments
// (issues and PRs). Comments have no uniqueness.
func (s *Server) createComment(c *call, rp *repo, is *issue) *reply {
	body, rep := commentBodyIn(c)
	if rep != nil {
		return rep
	}
	cm := s.newComment(rp, is, c.login, body)
	is.updated = cm.created
	return created(s.api(fmt.Sprintf("%s/issues/comments/%d", rp.path(), cm.id)), s.commentJSON(rp, cm),
		&Commit{Kind: KindComment, Number: is.number, ID: cm.id})
}

func commentByParam(c *call, rp *repo) *comment {
	id, ok := intParam(c, "id")
	if !ok {
		return nil
	}
	return rp.comments[id]
}

// getComment serves GET /repos/{owner}/{repo}/issues/comments/{id}.
func (s *Server) getComment(c *call, rp *repo) *reply {
	cm := commentByParam(c, rp)
	if cm == nil {
		return notFound()
	}
	return jsonReply(http.StatusOK, s.commentJSON(rp, cm))
}

// editComment serves PATCH /repos/{owner}/{repo}/issues/comments/{id}.
func (s *Server) editComment(c *call, rp *repo) *reply {
	cm := commentByParam(c, rp)
	if cm == nil {
		return notFound()
	}
	body, rep := commentBodyIn(c)
	if rep != nil {
		return rep
	}
	cm.body = body
	cm.updated = s.now()
	return stored(http.StatusOK, s.commentJSON(rp, cm), &Commit{Kind: KindComment, Number: cm.issue.number, ID: cm.id})
}

// deleteComment serves DELETE /repos/{owner}/{repo}/issues/comments/{id}.
func (s *Server) deleteComment(c *call, rp *repo) *reply {
	cm := commentByParam(c, rp)
	if cm == nil {
		return notFound()
	}
	delete(rp.comments, cm.id)
	is := cm.issue
	is.comments = slices.DeleteFunc(is.comments, func(x *comment) bool { return x == cm })
	return &reply{status: http.StatusNoContent, commit: &Commit{Kind: KindComment, Number: is.number, ID: cm.id}}
}
