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
		"GET /pulls/{number}/requested_reviewers":  onPull((*Server).listRequestedReviewers),
		"POST /pulls/{number}/requested_reviewers": onPull((*Server).requestReviewers),
		"POST /issues/{number}/assignees":          onIssue((*Server).addAssignees),
		"GET /milestones":                          (*Server).listMilestones,
	})
}

// An issue's or pull request's metadata besides labels: assignees, review
// requests and a milestone. Who may be assigned or asked for a review is the
// repository's owner and its collaborators (AddCollaborator); teams are the
// ones AddTeam gave access.

// milestone is a repository milestone (SeedMilestone).
type milestone struct {
	id      int64
	number  int
	title   string
	state   string // open, closed
	creator string
	created time.Time
}

// metadataStore holds a repository's milestones (milestones[n-1].number ==
// n), collaborators (logins that may be assigned and asked for reviews) and
// teams (slugs of the owner's teams with access).
type metadataStore struct {
	milestones           []*milestone
	collaborators, teams []string
}

type milestoneJSON struct {
	URL          string    `json:"url"`
	HTMLURL      string    `json:"html_url"`
	LabelsURL    string    `json:"labels_url"`
	ID           int64     `json:"id"`
	NodeID       string    `json:"node_id"`
	Number       int       `json:"number"`
	State        string    `json:"state"`
	Title        string    `json:"title"`
	Description  *string   `json:"description"`
	Creator      *userJSON `json:"creator"`
	OpenIssues   int       `json:"open_issues"`
	ClosedIssues int       `json:"closed_issues"`
	CreatedAt    string    `json:"created_at"`
	UpdatedAt    string    `json:"updated_at"`
	ClosedAt     *string   `json:"closed_at"`
	DueOn        *string   `json:"due_on"`
}

type teamJSON struct {
	ID              int64     `json:"id"`
	NodeID          string    `json:"node_id"`
	URL             string    `json:"url"`
	HTMLURL         string    `json:"html_url"`
	Name            string    `json:"name"`
	Slug            string    `json:"slug"`
	Description     *string   `json:"description"`
	Privacy         string    `json:"privacy"`
	Permission      string    `json:"permission"`
	MembersURL      string    `json:"members_url"`
	RepositoriesURL string    `json:"repositories_url"`
	Parent          *struct{} `json:"parent"`
}

func (s *Server) milestoneJSON(rp *repo, m *milestone) *milestoneJSON {
	if m == nil {
		return nil
	}
	apiURL := s.api(fmt.Sprintf("%s/milestones/%d", rp.path(), m.number))
	out := &milestoneJSON{
		URL: apiURL, HTMLURL: s.web(fmt.Sprintf("/%s/%s/milestone/%d", rp.owner, rp.name, m.number)),
		LabelsURL: apiURL + "/labels", ID: m.id, NodeID: nodeID("Milestone", m.id), Number: m.number,
		State: m.state, Title: m.title, Creator: s.userJSON(m.creator),
		CreatedAt: stamp(m.created), UpdatedAt: stamp(m.created),
	}
	for _, is := range rp.issues {
		if is.milestone == m {
			if is.state == "open" {
				out.OpenIssues++
			} else {
				out.ClosedIssues++
			}
		}
	}
	if m.state == "closed" {
		out.ClosedAt = tsOrNil(m.created)
	}
	return out
}

func (s *Server) teamJSON(rp *repo, slug string) teamJSON {
	id := int64(7_000_000 + slices.Index(storeOf[metadataStore](rp).teams, slug))
	return teamJSON{
		ID: id, NodeID: nodeID("Team", id), URL: s.api(fmt.Sprintf("/orgs/%s/teams/%s", rp.owner, slug)),
		HTMLURL: s.web(fmt.Sprintf("/orgs/%s/teams/%s", rp.owner, slug)), Name: slug, Slug: slug,
		Privacy: "closed", Permission: "push",
		MembersURL:      s.api(fmt.Sprintf("/orgs/%s/teams/%s/members{/member}", rp.owner, slug)),
		RepositoriesURL: s.api(fmt.Sprintf("/orgs/%s/teams/%s/repos", rp.owner, slug)),
	}
}

func (s *Server) usersJSON(logins []string) []*userJSON {
	return mapJSON(logins, s.userJSON)
}

// collaborator reports whether login may be assigned or asked for a review
// on rp: its owner or a collaborator, compared without case.
func (rp *repo) collaborator(login string) bool {
	return strings.EqualFold(login, rp.owner) || slices.ContainsFunc(storeOf[metadataStore](rp).collaborators, func(c string) bool { return strings.EqualFold(c, login) })
}

// team returns the slug of rp's team slug (compared without case), or "".
func (rp *repo) team(slug string) string {
	for _, t := range storeOf[metadataStore](rp).teams {
		if strings.EqualFold(t, slug) {
			return t
		}
	}
	return ""
}

func addFold(list []string, v string) []string {
	if slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, v) }) {
		return list
	}
	return append(list, v)
}

// AddCollaborator makes login a collaborator of owner/repo: it may then be
// assigned and asked for reviews. Nothing happens when the repository does
// not exist.
func (s *Server) AddCollaborator(owner, name, login string) {
	s.withRepo(owner, name, func(rp *repo) {
		st := storeOf[metadataStore](rp)
		st.collaborators = addFold(st.collaborators, s.userFor(login).login)
	})
}

// AddTeam gives the team slug of the repository's owner (an organization)
// access to owner/repo: it may then be asked for reviews.
func (s *Server) AddTeam(owner, name, slug string) {
	s.withRepo(owner, name, func(rp *repo) {
		st := storeOf[metadataStore](rp)
		st.teams = addFold(st.teams, slug)
	})
}

// SeedMilestone stores a milestone (state "open" or "closed"; "" is open)
// and returns its number, or 0 when the repository does not exist.
func (s *Server) SeedMilestone(owner, name, title, state string) int {
	return inRepo(s, owner, name, func(rp *repo) int {
		if state == "" {
			state = "open"
		}
		st := storeOf[metadataStore](rp)
		m := &milestone{id: s.nextID(labelIDs), number: len(st.milestones) + 1, title: title, state: state, creator: rp.owner, created: s.now()}
		st.milestones = append(st.milestones, m)
		return m.number
	})
}

// listMilestones serves GET /repos/{owner}/{repo}/milestones: state open
// (default), closed or all, by number (GitHub's default sort, due_on, puts
// milestones without a due date in creation order), paginated.
func (s *Server) listMilestones(c *call, rp *repo) *reply {
	state := c.r.URL.Query().Get("state")
	if state == "" {
		state = "open"
	}
	if state != "open" && state != "closed" && state != "all" {
		return validationFailed(apiError{Value: state, Resource: "Milestone", Field: "state", Code: "invalid"})
	}
	all := storeOf[metadataStore](rp).milestones
	items := make([]*milestoneJSON, 0, len(all))
	for _, m := range all {
		if state == "all" || m.state == state {
			items = append(items, s.milestoneJSON(rp, m))
		}
	}
	if c.r.URL.Query().Get("direction") == "desc" {
		slices.Reverse(items)
	}
	return pageReply(s, c, repoLinkPath(c, rp), items)
}

// milestoneIn parses PATCH .../issues/{number}'s milestone: a number or
// null. ok is false when the request has no milestone field.
func milestoneIn(rp *repo, raw json.RawMessage) (m *milestone, ok bool, rep *reply) {
	if len(raw) == 0 {
		return nil, false, nil
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, true, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, true, invalidRequest("%s is not a number or null.", bytes.TrimSpace(raw))
	}
	all := storeOf[metadataStore](rp).milestones
	i, err := n.Int64()
	if err != nil || i < 1 || i > int64(len(all)) {
		return nil, true, validationFailed(apiError{Value: n.String(), Resource: "Issue", Field: "milestone", Code: "invalid"})
	}
	return all[i-1], true, nil
}

// addAssignees serves POST /repos/{owner}/{repo}/issues/{number}/assignees
// (issues and PRs): it adds the logins that may be assigned and, as GitHub
// does, silently drops the others; it answers 201 and the issue.
func (s *Server) addAssignees(c *call, rp *repo, is *issue) *reply {
	var in struct {
		Assignees []string `json:"assignees"`
	}
	if rep := decodeBody(c, &in); rep != nil {
		return rep
	}
	for _, l := range in.Assignees {
		if rp.collaborator(l) && len(is.assignees) < 10 {
			is.assignees = addFold(is.assignees, s.userFor(l).login)
		}
	}
	is.updated = s.now()
	rep := stored(http.StatusCreated, s.issueFullJSON(rp, is), &Commit{Kind: KindIssue, Number: is.number})
	if is.pull != nil {
		rep.commit.Kind = KindPull
	}
	return rep
}

// requestReviewers serves POST
// /repos/{owner}/{repo}/pulls/{number}/requested_reviewers: reviewers
// (logins) and team_reviewers (slugs). GitHub refuses the whole request
// (422, a message and no errors array) when one of them is not a
// collaborator or team of the repository, or is the PR's author; it answers
// 201 and the pull request.
func (s *Server) requestReviewers(c *call, rp *repo, is *issue) *reply {
	var in struct {
		Reviewers     []string `json:"reviewers"`
		TeamReviewers []string `json:"team_reviewers"`
	}
	if rep := decodeBody(c, &in); rep != nil {
		return rep
	}
	for _, l := range in.Reviewers {
		if strings.EqualFold(l, is.author) {
			return errorReply(http.StatusUnprocessableEntity, "Review cannot be requested from pull request author.")
		}
	}
	var teams []string
	for _, t := range in.TeamReviewers {
		slug := rp.team(t)
		if slug == "" {
			return notCollaborator(rp)
		}
		teams = append(teams, slug)
	}
	for _, l := range in.Reviewers {
		if !rp.collaborator(l) {
			return notCollaborator(rp)
		}
	}
	p := is.pull
	for _, l := range in.Reviewers {
		p.requestedUsers = addFold(p.requestedUsers, s.userFor(l).login)
	}
	for _, t := range teams {
		p.requestedTeams = addFold(p.requestedTeams, t)
	}
	is.updated = s.now()
	return stored(http.StatusCreated, s.pullJSON(rp, is), &Commit{Kind: KindPull, Number: is.number})
}

func notCollaborator(rp *repo) *reply {
	return errorReply(http.StatusUnprocessableEntity, fmt.Sprintf("Reviews may only be requested from collaborators. One or more of the users or teams you specified is not a collaborator of the %s/%s repository.", rp.owner, rp.name))
}

// listRequestedReviewers serves GET
// /repos/{owner}/{repo}/pulls/{number}/requested_reviewers: {users, teams}.
func (s *Server) listRequestedReviewers(c *call, rp *repo, is *issue) *reply {
	teams := make([]teamJSON, 0, len(is.pull.requestedTeams))
	for _, t := range is.pull.requestedTeams {
		teams = append(teams, s.teamJSON(rp, t))
	}
	return jsonReply(http.StatusOK, map[string]any{"users": s.usersJSON(is.pull.requestedUsers), "teams": teams})
}

// A pull request's reviews, as the review requests above read them: a
// review answers its author's request. Making one is the review kind's
// (reviews.go); listing, seeding and storing them is every pull request's.

func init() {
	handle(map[string]repoEndpoint{"GET /pulls/{number}/reviews": onPull((*Server).listReviews)})
}

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

// SeedReview stores a review by login (state APPROVED, CHANGES_REQUESTED,
// COMMENTED or PENDING) on pull request number and returns its id, or 0 when the
// repository or the pull request does not exist.
func (s *Server) SeedReview(owner, name string, number int, login, state, body string) int64 {
	return inPull(s, owner, name, number, func(_ *repo, is *issue) int64 {
		return s.addReview(is, login, state, body, s.liveHeadSHA(is.pull), nil).id
	})
}
