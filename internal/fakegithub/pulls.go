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
		"GET /pulls":                  (*Server).listPulls,
		"POST /pulls":                 (*Server).createPull,
		"GET /pulls/{number}":         onPull((*Server).getPull),
		"PATCH /pulls/{number}":       onPull((*Server).editPull),
		"GET /pulls/{number}/commits": onPull((*Server).listPullCommits),
	})
}

type branchJSON struct {
	Label string    `json:"label"`
	Ref   string    `json:"ref"`
	SHA   string    `json:"sha"`
	User  *userJSON `json:"user"`
	Repo  *repoJSON `json:"repo"`
}

type pullJSON struct {
	URL                string         `json:"url"`
	ID                 int64          `json:"id"`
	NodeID             string         `json:"node_id"`
	HTMLURL            string         `json:"html_url"`
	DiffURL            string         `json:"diff_url"`
	PatchURL           string         `json:"patch_url"`
	IssueURL           string         `json:"issue_url"`
	Number             int            `json:"number"`
	State              string         `json:"state"`
	Locked             bool           `json:"locked"`
	Title              string         `json:"title"`
	User               *userJSON      `json:"user"`
	Body               *string        `json:"body"`
	CreatedAt          string         `json:"created_at"`
	UpdatedAt          string         `json:"updated_at"`
	ClosedAt           *string        `json:"closed_at"`
	MergedAt           *string        `json:"merged_at"`
	MergeCommitSHA     *string        `json:"merge_commit_sha"`
	Assignee           *userJSON      `json:"assignee"`
	Assignees          []*userJSON    `json:"assignees"`
	RequestedReviewers []*userJSON    `json:"requested_reviewers"`
	RequestedTeams     []teamJSON     `json:"requested_teams"`
	Labels             []labelJSON    `json:"labels"`
	Milestone          *milestoneJSON `json:"milestone"`
	Draft              bool           `json:"draft"`
	CommitsURL         string         `json:"commits_url"`
	ReviewCommentsURL  string         `json:"review_comments_url"`
	ReviewCommentURL   string         `json:"review_comment_url"`
	CommentsURL        string         `json:"comments_url"`
	StatusesURL        string         `json:"statuses_url"`
	Head               branchJSON     `json:"head"`
	Base               branchJSON     `json:"base"`
	AuthorAssociation  string         `json:"author_association"`
	AutoMerge          *struct{}      `json:"auto_merge"`
	ActiveLockReason   *string        `json:"active_lock_reason"`
}

// pullFullJSON holds the fields only a single PR (GET, POST, PATCH) has.
type pullFullJSON struct {
	pullJSON
	Merged              bool      `json:"merged"`
	Mergeable           *bool     `json:"mergeable"`
	MergeableState      string    `json:"mergeable_state"`
	MergedBy            *userJSON `json:"merged_by"`
	Comments            int       `json:"comments"`
	ReviewComments      int       `json:"review_comments"`
	MaintainerCanModify bool      `json:"maintainer_can_modify"`
	Commits             int       `json:"commits"`
	Additions           int       `json:"additions"`
	Deletions           int       `json:"deletions"`
	ChangedFiles        int       `json:"changed_files"`
}

// liveHeadSHA is the PR's head: the branch's current head while the PR is
// open and the branch exists, else the head it had last.
func (s *Server) liveHeadSHA(p *pull) string {
	if p.headRepo != nil {
		if sha, ok := p.headRepo.branch(p.headRef); ok {
			return sha
		}
	}
	return p.headSHA
}

func (s *Server) pullJSON(rp *repo, is *issue) *pullJSON {
	p := is.pull
	apiURL := s.api(fmt.Sprintf("%s/pulls/%d", rp.path(), is.number))
	issueURL := s.api(fmt.Sprintf("%s/issues/%d", rp.path(), is.number))
	web := s.web(s.issueWebPath(rp, is))
	headSHA := p.headSHA
	baseSHA := p.baseSHA
	if is.state == "open" {
		headSHA = s.liveHeadSHA(p)
		if sha, ok := rp.branch(p.baseRef); ok {
			baseSHA = sha
		}
	}
	out := &pullJSON{
		URL:                apiURL,
		ID:                 is.id,
		NodeID:             nodeID("PullRequest", is.id),
		HTMLURL:            web,
		DiffURL:            web + ".diff",
		PatchURL:           web + ".patch",
		IssueURL:           issueURL,
		Number:             is.number,
		State:              is.state,
		Title:              is.title,
		User:               s.userJSON(is.author),
		CreatedAt:          stamp(is.created),
		UpdatedAt:          stamp(is.updated),
		ClosedAt:           tsOrNil(is.closed),
		MergedAt:           tsOrNil(p.merged),
		Assignees:          s.usersJSON(is.assignees),
		RequestedReviewers: s.usersJSON(p.requestedUsers),
		RequestedTeams:     make([]teamJSON, 0, len(p.requestedTeams)),
		Milestone:          s.milestoneJSON(rp, is.milestone),
		Labels:             s.labelsJSON(rp, is.labels),
		Draft:              p.draft,
		CommitsURL:         apiURL + "/commits",
		ReviewCommentsURL:  apiURL + "/comments",
		ReviewCommentURL:   s.api(rp.path() + "/pulls/comments{/number}"),
		CommentsURL:        issueURL + "/comments",
		StatusesURL:        s.api(rp.path() + "/statuses/" + headSHA),
		Head: branchJSON{
			Label: p.headOwner + ":" + p.headRef,
			Ref:   p.headRef,
			SHA:   headSHA,
			User:  s.userJSON(p.headOwner),
		},
		Base: branchJSON{
			Label: rp.owner + ":" + p.baseRef,
			Ref:   p.baseRef,
			SHA:   baseSHA,
			User:  s.userJSON(rp.owner),
			Repo:  s.repoJSON(rp),
		},
		AuthorAssociation: association(rp, is.author),
	}
	for _, t := range p.requestedTeams {
		out.RequestedTeams = append(out.RequestedTeams, s.teamJSON(rp, t))
	}
	if len(out.Assignees) > 0 {
		out.Assignee = out.Assignees[0]
	}
	if p.headRepo != nil {
		out.Head.Repo = s.repoJSON(p.headRepo)
	}
	if is.hasBody {
		out.Body = &is.body
	}
	if p.mergeSHA != "" {
		out.MergeCommitSHA = &p.mergeSHA
	}
	return out
}

func (s *Server) pullFullJSON(rp *repo, is *issue) *pullFullJSON {
	out := &pullFullJSON{
		pullJSON:            *s.pullJSON(rp, is),
		Merged:              !is.pull.merged.IsZero(),
		MergeableState:      "unknown",
		Comments:            len(is.comments),
		MaintainerCanModify: false,
	}
	if out.Merged {
		out.MergedBy = s.userJSON(rp.owner)
	}
	if is.pull.headRepo == rp {
		if cmp, ok := rp.compareCommits(out.Base.SHA, out.Head.SHA); ok {
			out.Commits = cmp.aheadBy
		}
	}
	return out
}

// pullByNumber returns PR n, or nil when n is not a PR.
func pullByNumber(c *call, rp *repo) *issue {
	n, ok := intParam(c, "number")
	if !ok {
		return nil
	}
	is := rp.issueByNumber(n)
	if is == nil || is.pull == nil {
		return nil
	}
	return is
}

// listPulls serves GET /repos/{owner}/{repo}/pulls.
//
// head is honoured only as "owner:branch" (the owner compared without
// case); a bare branch is ignored and every PR comes back, and
// "owner/repo:branch" matches nothing — GitHub's behaviour, traps included.
func (s *Server) listPulls(c *call, rp *repo) *reply {
	q := c.r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "open"
	}
	if state != "open" && state != "closed" && state != "all" {
		return validationFailed(apiError{Value: state, Resource: "PullRequest", Field: "state", Code: "invalid"})
	}
	headOwner, headRef, headFilter := strings.Cut(q.Get("head"), ":")
	base := q.Get("base")

	var list []*issue
	for _, is := range rp.issues {
		if is.pull == nil || (state != "all" && is.state != state) {
			continue
		}
		if headFilter && (!strings.EqualFold(is.pull.headOwner, headOwner) || is.pull.headRef != headRef) {
			continue
		}
		if base != "" && is.pull.baseRef != base {
			continue
		}
		list = append(list, is)
	}
	sortIssues(list, q.Get("sort"), q.Get("direction"))
	items := make([]*pullJSON, 0, len(list))
	for _, is := range list {
		items = append(items, s.pullJSON(rp, is))
	}
	return pageReply(s, c, repoLinkPath(c, rp), items)
}

// getPull serves GET /repos/{owner}/{repo}/pulls/{number}; an issue's
// number is 404 here.
func (s *Server) getPull(c *call, rp *repo, is *issue) *reply {
	return jsonReply(http.StatusOK, s.pullFullJSON(rp, is))
}

// listPullCommits serves GET /repos/{owner}/{repo}/pulls/{number}/commits:
// the commits of the head that its base branch lacks, oldest first, each
// with the logins of its author and committer. A head whose commit is
// forgotten lists none.
func (s *Server) listPullCommits(c *call, rp *repo, is *issue) *reply {
	p, in := is.pull, rp
	if p.headRepo != nil {
		in = p.headRepo
	}
	base := p.baseSHA
	if sha, ok := rp.branch(p.baseRef); ok {
		base = sha
	}
	var items []*repoCommitJSON
	if cmp, ok := in.compareCommits(base, s.liveHeadSHA(p)); ok {
		for _, cm := range cmp.ahead {
			items = append(items, s.repoCommitJSON(in, cm))
		}
	}
	if items == nil {
		items = []*repoCommitJSON{}
	}
	return pageReply(s, c, repoLinkPath(c, rp), items)
}

// openDuplicate returns an open PR other than except with the same head and
// base.
func openDuplicate(rp *repo, headOwner, headRef, base string, except *issue) *issue {
	for _, is := range rp.issues {
		p := is.pull
		if p == nil || is == except || is.state != "open" {
			continue
		}
		if strings.EqualFold(p.headOwner, headOwner) && p.headRef == headRef && p.baseRef == base {
			return is
		}
	}
	return nil
}

func alreadyExists(headOwner, headRef string) *reply {
	return validationFailed(apiError{Resource: "PullRequest", Code: "custom", Message: "A pull request already exists for " + headOwner + ":" + headRef + "."})
}

func bodyTooLong(resource string) *reply {
	return validationFailed(apiError{Resource: resource, Code: "custom", Field: "body", Message: fmt.Sprintf("body is too long (maximum is %d characters)", maxBodyChars)})
}

// createPull serves POST /repos/{owner}/{repo}/pulls.
//
// It refuses (422) a missing title, head or base, a base or head branch
// that does not exist, a body over 65,536 characters, a head with no commit
// that base lacks ("No commits between ...") or no history in common with
// base, and — GitHub's only duplicate guard for PRs — an open PR with the
// same head and base. A closed PR does not block a new one.
func (s *Server) createPull(c *call, rp *repo) *reply {
	var in struct {
		Title *string `json:"title"`
		Head  *string `json:"head"`
		Base  *string `json:"base"`
		Body  *string `json:"body"`
		Draft *bool   `json:"draft"`
	}
	if rep := decodeBody(c, &in); rep != nil {
		return rep
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"title", in.Title}, {"head", in.Head}, {"base", in.Base}} {
		if f.v == nil || strings.TrimSpace(*f.v) == "" {
			return validationFailed(apiError{Resource: "PullRequest", Code: "missing_field", Field: f.name})
		}
	}
	base := *in.Base
	baseSHA, ok := rp.branch(base)
	if !ok {
		return validationFailed(apiError{Resource: "PullRequest", Field: "base", Code: "invalid"})
	}
	headOwner, headRef, headRepo := rp.owner, *in.Head, rp
	if o, b, ok := strings.Cut(*in.Head, ":"); ok {
		headRef = b
		if !strings.EqualFold(o, rp.owner) {
			headRepo = s.repoLocked(o, rp.name)
		}
		if headRepo != nil {
			headOwner = headRepo.owner
		}
	}
	if headRepo == nil {
		return validationFailed(apiError{Resource: "PullRequest", Field: "head", Code: "invalid"})
	}
	headSHA, ok := headRepo.branch(headRef)
	if !ok {
		return validationFailed(apiError{Resource: "PullRequest", Field: "head", Code: "invalid"})
	}
	if in.Body != nil && tooLong(*in.Body) {
		return bodyTooLong("PullRequest")
	}
	if openDuplicate(rp, headOwner, headRef, base, nil) != nil {
		return alreadyExists(headOwner, headRef)
	}
	if headRepo == rp {
		cmp, ok := rp.compareCommits(baseSHA, headSHA)
		if !ok {
			return validationFailed(apiError{Resource: "PullRequest", Code: "custom", Message: fmt.Sprintf("The %s branch has no history in common with %s", headRef, base)})
		}
		if cmp.aheadBy == 0 {
			return validationFailed(apiError{Resource: "PullRequest", Code: "custom", Message: fmt.Sprintf("No commits between %s and %s", base, headRef)})
		}
	}
	p := &pull{headOwner: headOwner, headRepo: headRepo, headRef: headRef, baseRef: base, headSHA: headSHA, baseSHA: baseSHA}
	if in.Draft != nil {
		p.draft = *in.Draft
	}
	body := ""
	if in.Body != nil {
		body = *in.Body
	}
	is := s.newIssue(rp, c.login, *in.Title, body, in.Body != nil, p)
	return created(s.api(fmt.Sprintf("%s/pulls/%d", rp.path(), is.number)), s.pullFullJSON(rp, is), &Commit{Kind: KindPull, Number: is.number})
}

// editPull serves PATCH /repos/{owner}/{repo}/pulls/{number}: title, body,
// state (open, closed) and base.
func (s *Server) editPull(c *call, rp *repo, is *issue) *reply {
	var in struct {
		Title *string `json:"title"`
		Body  *string `json:"body"`
		State *string `json:"state"`
		Base  *string `json:"base"`
	}
	if rep := decodeBody(c, &in); rep != nil {
		return rep
	}
	p := is.pull
	if in.Base != nil {
		if _, ok := rp.branch(*in.Base); !ok {
			return validationFailed(apiError{Resource: "PullRequest", Field: "base", Code: "invalid"})
		}
	}
	if rep := s.applyIssueEdit(rp, is, c.login, in.Title, in.Body, in.State, nil, "PullRequest"); rep != nil {
		return rep
	}
	if in.Base != nil {
		p.baseRef = *in.Base
	}
	return stored(http.StatusOK, s.pullFullJSON(rp, is), &Commit{Kind: KindPull, Number: is.number})
}

// applyIssueEdit validates and applies an edit of an issue or PR. It
// stores nothing when it refuses.
func (s *Server) applyIssueEdit(rp *repo, is *issue, login string, title, body, state, stateReason *string, resource string) *reply {
	if title != nil && strings.TrimSpace(*title) == "" {
		return validationFailed(apiError{Resource: resource, Code: "missing_field", Field: "title"})
	}
	if body != nil && tooLong(*body) {
		return bodyTooLong(resource)
	}
	if state != nil && *state != "open" && *state != "closed" {
		return validationFailed(apiError{Value: *state, Resource: resource, Field: "state", Code: "invalid"})
	}
	if p := is.pull; p != nil && state != nil && *state == "open" && is.state == "closed" {
		if !p.merged.IsZero() {
			return validationFailed(apiError{Resource: "PullRequest", Code: "custom", Field: "state", Message: "state cannot be changed. The pull request has been merged."})
		}
		if openDuplicate(rp, p.headOwner, p.headRef, p.baseRef, is) != nil {
			return alreadyExists(p.headOwner, p.headRef)
		}
	}
	now := s.now()
	if title != nil {
		is.title = *title
	}
	if body != nil {
		is.body, is.hasBody = *body, true
	}
	if state != nil && *state != is.state {
		is.state = *state
		switch *state {
		case "closed":
			is.closed, is.closedBy = now, login
			is.stateReason = "completed"
			if p := is.pull; p != nil {
				is.stateReason = ""
				p.headSHA = s.liveHeadSHA(p)
				p.baseSHA, _ = rp.branch(p.baseRef)
			}
		case "open":
			is.closed = time.Time{}
			is.stateReason = ""
			if is.pull == nil {
				is.stateReason = "reopened"
			}
		}
	}
	if stateReason != nil && is.pull == nil && is.state == "closed" {
		is.stateReason = *stateReason
	}
	is.updated = now
	return nil
}

// sortIssues orders issues or PRs by sort (created, updated, comments;
// default created) and direction (asc, desc; default desc).
func sortIssues(list []*issue, sortBy, direction string) {
	slices.SortStableFunc(list, func(a, b *issue) int {
		var d int
		switch sortBy {
		case "updated":
			d = a.updated.Compare(b.updated)
		case "comments":
			d = len(a.comments) - len(b.comments)
		default:
			d = a.created.Compare(b.created)
		}
		if d == 0 {
			d = a.number - b.number
		}
		if direction == "asc" {
			return d
		}
		return -d
	})
}
