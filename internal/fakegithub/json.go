package fakegithub

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// This file builds the JSON representations, with the field names and
// shapes GitHub sends (and go-github v66 decodes). URLs use the fake's own
// host: API URLs under URL(), web URLs (html_url) under WebURL(), like a
// GitHub Enterprise instance. Every function here is called with s.mu held.

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func tsOrNil(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	v := stamp(t)
	return &v
}

// mapJSON is f of each of xs: a JSON array, [] (not null) when xs is empty.
func mapJSON[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, 0, len(xs))
	for _, x := range xs {
		out = append(out, f(x))
	}
	return out
}

// nodeID is a legacy global node id: base64("<len(type)>:<type><id>").
func nodeID(typ string, id any) string {
	return base64.StdEncoding.EncodeToString(fmt.Appendf(nil, "%02d:%s%v", len(typ), typ, id))
}

// api is an API URL for path (starting with "/").
func (s *Server) api(path string) string { return s.ts.url + strings.TrimSuffix(s.prefix, "/") + path }

// web is a web URL for path (starting with "/").
func (s *Server) web(path string) string { return s.ts.url + path }

func (rp *repo) path() string { return "/repos/" + rp.owner + "/" + rp.name }

type userJSON struct {
	Login             string `json:"login"`
	ID                int64  `json:"id"`
	NodeID            string `json:"node_id"`
	AvatarURL         string `json:"avatar_url"`
	GravatarID        string `json:"gravatar_id"`
	URL               string `json:"url"`
	HTMLURL           string `json:"html_url"`
	FollowersURL      string `json:"followers_url"`
	FollowingURL      string `json:"following_url"`
	GistsURL          string `json:"gists_url"`
	StarredURL        string `json:"starred_url"`
	SubscriptionsURL  string `json:"subscriptions_url"`
	OrganizationsURL  string `json:"organizations_url"`
	ReposURL          string `json:"repos_url"`
	EventsURL         string `json:"events_url"`
	ReceivedEventsURL string `json:"received_events_url"`
	Type              string `json:"type"`
	SiteAdmin         bool   `json:"site_admin"`
}

func (s *Server) userJSON(login string) *userJSON {
	u := s.userFor(login)
	typ := "User"
	if strings.HasSuffix(u.login, "[bot]") {
		typ = "Bot"
	}
	base := s.api("/users/" + url.PathEscape(u.login))
	return &userJSON{
		Login:             u.login,
		ID:                u.id,
		NodeID:            nodeID(typ, u.id),
		AvatarURL:         s.web(fmt.Sprintf("/avatars/u/%d?v=4", u.id)),
		URL:               base,
		HTMLURL:           s.web("/" + url.PathEscape(u.login)),
		FollowersURL:      base + "/followers",
		FollowingURL:      base + "/following{/other_user}",
		GistsURL:          base + "/gists{/gist_id}",
		StarredURL:        base + "/starred{/owner}{/repo}",
		SubscriptionsURL:  base + "/subscriptions",
		OrganizationsURL:  base + "/orgs",
		ReposURL:          base + "/repos",
		EventsURL:         base + "/events{/privacy}",
		ReceivedEventsURL: base + "/received_events",
		Type:              typ,
	}
}

type repoJSON struct {
	ID            int64     `json:"id"`
	NodeID        string    `json:"node_id"`
	Name          string    `json:"name"`
	FullName      string    `json:"full_name"`
	Private       bool      `json:"private"`
	Owner         *userJSON `json:"owner"`
	HTMLURL       string    `json:"html_url"`
	Description   *string   `json:"description"`
	Fork          bool      `json:"fork"`
	URL           string    `json:"url"`
	PullsURL      string    `json:"pulls_url"`
	IssuesURL     string    `json:"issues_url"`
	CreatedAt     string    `json:"created_at"`
	UpdatedAt     string    `json:"updated_at"`
	PushedAt      string    `json:"pushed_at"`
	Visibility    string    `json:"visibility"`
	DefaultBranch string    `json:"default_branch"`
	HasIssues     bool      `json:"has_issues"`
	Archived      bool      `json:"archived"`
	Disabled      bool      `json:"disabled"`
}

func (s *Server) repoJSON(rp *repo) *repoJSON {
	return &repoJSON{
		ID:            rp.id,
		NodeID:        nodeID("Repository", rp.id),
		Name:          rp.name,
		FullName:      rp.owner + "/" + rp.name,
		Owner:         s.userJSON(rp.owner),
		HTMLURL:       s.web("/" + rp.owner + "/" + rp.name),
		URL:           s.api(rp.path()),
		PullsURL:      s.api(rp.path() + "/pulls{/number}"),
		IssuesURL:     s.api(rp.path() + "/issues{/number}"),
		CreatedAt:     stamp(rp.created),
		UpdatedAt:     stamp(rp.created),
		PushedAt:      stamp(rp.created),
		Visibility:    "public",
		DefaultBranch: rp.defaultBranch,
		HasIssues:     true,
	}
}

type labelJSON struct {
	ID          int64   `json:"id"`
	NodeID      string  `json:"node_id"`
	URL         string  `json:"url"`
	Name        string  `json:"name"`
	Color       string  `json:"color"`
	Default     bool    `json:"default"`
	Description *string `json:"description"`
}

func (s *Server) labelJSON(rp *repo, l *label) labelJSON {
	var desc *string
	if l.description != "" {
		desc = &l.description
	}
	return labelJSON{
		ID:          l.id,
		NodeID:      nodeID("Label", l.id),
		URL:         s.api(rp.path() + "/labels/" + url.PathEscape(l.name)),
		Name:        l.name,
		Color:       l.color,
		Default:     l.isDefault,
		Description: desc,
	}
}

func (s *Server) labelsJSON(rp *repo, ls []*label) []labelJSON {
	return mapJSON(ls, func(l *label) labelJSON { return s.labelJSON(rp, l) })
}

type reactionsJSON struct {
	URL        string `json:"url"`
	TotalCount int    `json:"total_count"`
	PlusOne    int    `json:"+1"`
	MinusOne   int    `json:"-1"`
	Laugh      int    `json:"laugh"`
	Hooray     int    `json:"hooray"`
	Confused   int    `json:"confused"`
	Heart      int    `json:"heart"`
	Rocket     int    `json:"rocket"`
	Eyes       int    `json:"eyes"`
}

type prLinksJSON struct {
	URL      string  `json:"url"`
	HTMLURL  string  `json:"html_url"`
	DiffURL  string  `json:"diff_url"`
	PatchURL string  `json:"patch_url"`
	MergedAt *string `json:"merged_at"`
}

type issueJSON struct {
	URL                   string         `json:"url"`
	RepositoryURL         string         `json:"repository_url"`
	LabelsURL             string         `json:"labels_url"`
	CommentsURL           string         `json:"comments_url"`
	EventsURL             string         `json:"events_url"`
	HTMLURL               string         `json:"html_url"`
	ID                    int64          `json:"id"`
	NodeID                string         `json:"node_id"`
	Number                int            `json:"number"`
	Title                 string         `json:"title"`
	User                  *userJSON      `json:"user"`
	Labels                []labelJSON    `json:"labels"`
	State                 string         `json:"state"`
	Locked                bool           `json:"locked"`
	Assignee              *userJSON      `json:"assignee"`
	Assignees             []*userJSON    `json:"assignees"`
	Milestone             *milestoneJSON `json:"milestone"`
	Comments              int            `json:"comments"`
	CreatedAt             string         `json:"created_at"`
	UpdatedAt             string         `json:"updated_at"`
	ClosedAt              *string        `json:"closed_at"`
	AuthorAssociation     string         `json:"author_association"`
	ActiveLockReason      *string        `json:"active_lock_reason"`
	Draft                 *bool          `json:"draft,omitempty"`
	PullRequest           *prLinksJSON   `json:"pull_request,omitempty"`
	Body                  *string        `json:"body"`
	Reactions             *reactionsJSON `json:"reactions"`
	TimelineURL           string         `json:"timeline_url"`
	PerformedViaGithubApp *struct{}      `json:"performed_via_github_app"`
	StateReason           *string        `json:"state_reason"`
	Score                 *float64       `json:"score,omitempty"`
}

// association is author_association: OWNER for the repository owner, NONE
// for everyone else (the fake has no collaborators).
func association(rp *repo, login string) string {
	if strings.EqualFold(rp.owner, login) {
		return "OWNER"
	}
	return "NONE"
}

func (s *Server) issueWebPath(rp *repo, is *issue) string {
	kind := "issues"
	if is.pull != nil {
		kind = "pull"
	}
	return fmt.Sprintf("/%s/%s/%s/%d", rp.owner, rp.name, kind, is.number)
}

func (s *Server) issueJSON(rp *repo, is *issue) *issueJSON {
	apiURL := s.api(fmt.Sprintf("%s/issues/%d", rp.path(), is.number))
	out := &issueJSON{
		URL:               apiURL,
		RepositoryURL:     s.api(rp.path()),
		LabelsURL:         apiURL + "/labels{/name}",
		CommentsURL:       apiURL + "/comments",
		EventsURL:         apiURL + "/events",
		HTMLURL:           s.web(s.issueWebPath(rp, is)),
		ID:                is.id,
		NodeID:            nodeID("Issue", is.id),
		Number:            is.number,
		Title:             is.title,
		User:              s.userJSON(is.author),
		Labels:            s.labelsJSON(rp, is.labels),
		State:             is.state,
		Assignees:         s.usersJSON(is.assignees),
		Milestone:         s.milestoneJSON(rp, is.milestone),
		Comments:          len(is.comments),
		CreatedAt:         stamp(is.created),
		UpdatedAt:         stamp(is.updated),
		ClosedAt:          tsOrNil(is.closed),
		AuthorAssociation: association(rp, is.author),
		Reactions:         s.reactionsSummary(apiURL, is.reactions),
		TimelineURL:       apiURL + "/timeline",
	}
	if len(is.assignees) > 0 {
		out.Assignee = out.Assignees[0]
	}
	if is.hasBody {
		out.Body = &is.body
	}
	if is.stateReason != "" {
		out.StateReason = &is.stateReason
	}
	if p := is.pull; p != nil {
		pullURL := s.api(fmt.Sprintf("%s/pulls/%d", rp.path(), is.number))
		web := s.web(s.issueWebPath(rp, is))
		out.Draft = &p.draft
		out.PullRequest = &prLinksJSON{URL: pullURL, HTMLURL: web, DiffURL: web + ".diff", PatchURL: web + ".patch", MergedAt: tsOrNil(p.merged)}
	}
	return out
}

// issueFullJSON is a single issue (GET, POST, PATCH), which adds
// closed_by to the list representation.
type issueFullJSON struct {
	*issueJSON
	ClosedBy *userJSON `json:"closed_by"`
}

func (s *Server) issueFullJSON(rp *repo, is *issue) issueFullJSON {
	out := issueFullJSON{issueJSON: s.issueJSON(rp, is)}
	if is.state == "closed" && is.closedBy != "" {
		out.ClosedBy = s.userJSON(is.closedBy)
	}
	return out
}

type commentJSON struct {
	URL                   string         `json:"url"`
	HTMLURL               string         `json:"html_url"`
	IssueURL              string         `json:"issue_url"`
	ID                    int64          `json:"id"`
	NodeID                string         `json:"node_id"`
	User                  *userJSON      `json:"user"`
	CreatedAt             string         `json:"created_at"`
	UpdatedAt             string         `json:"updated_at"`
	AuthorAssociation     string         `json:"author_association"`
	Body                  string         `json:"body"`
	Reactions             *reactionsJSON `json:"reactions"`
	PerformedViaGithubApp *struct{}      `json:"performed_via_github_app"`
}

func (s *Server) commentJSON(rp *repo, cm *comment) *commentJSON {
	apiURL := s.api(fmt.Sprintf("%s/issues/comments/%d", rp.path(), cm.id))
	return &commentJSON{
		URL:               apiURL,
		HTMLURL:           s.web(fmt.Sprintf("%s#issuecomment-%d", s.issueWebPath(rp, cm.issue), cm.id)),
		IssueURL:          s.api(fmt.Sprintf("%s/issues/%d", rp.path(), cm.issue.number)),
		ID:                cm.id,
		NodeID:            nodeID("IssueComment", cm.id),
		User:              s.userJSON(cm.author),
		CreatedAt:         stamp(cm.created),
		UpdatedAt:         stamp(cm.updated),
		AuthorAssociation: association(rp, cm.author),
		Body:              cm.body,
		Reactions:         s.reactionsSummary(apiURL, cm.reactions),
	}
}

type refObjectJSON struct {
	SHA  string `json:"sha"`
	Type string `json:"type"`
	URL  string `json:"url"`
}

type refJSON struct {
	Ref    string        `json:"ref"`
	NodeID string        `json:"node_id"`
	URL    string        `json:"url"`
	Object refObjectJSON `json:"object"`
}

func (s *Server) refJSON(rp *repo, ref, sha string) refJSON {
	return refJSON{
		Ref:    ref,
		NodeID: nodeID("Ref", rp.id),
		URL:    s.api(rp.path() + "/git/" + escapeRef(ref)),
		Object: refObjectJSON{SHA: sha, Type: "commit", URL: s.api(rp.path() + "/git/commits/" + sha)},
	}
}

// escapeRef escapes each segment of a ref, keeping the slashes.
func escapeRef(ref string) string {
	parts := strings.Split(ref, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

type gitActorJSON struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Date  string `json:"date"`
}

type treeRefJSON struct {
	SHA string `json:"sha"`
	URL string `json:"url"`
}

type parentJSON struct {
	SHA     string `json:"sha"`
	URL     string `json:"url"`
	HTMLURL string `json:"html_url"`
}

type verificationJSON struct {
	Verified  bool    `json:"verified"`
	Reason    string  `json:"reason"`
	Signature *string `json:"signature"`
	Payload   *string `json:"payload"`
}

// gitCommitJSON is a commit as the git data API and the contents API show
// it.
type gitCommitJSON struct {
	SHA          string           `json:"sha,omitempty"`
	NodeID       string           `json:"node_id,omitempty"`
	URL          string           `json:"url"`
	HTMLURL      string           `json:"html_url,omitempty"`
	Author       gitActorJSON     `json:"author"`
	Committer    gitActorJSON     `json:"committer"`
	Tree         treeRefJSON      `json:"tree"`
	Message      string           `json:"message"`
	Parents      []parentJSON     `json:"parents,omitempty"`
	CommentCount *int             `json:"comment_count,omitempty"`
	Verification verificationJSON `json:"verification"`
}

func (s *Server) actor(login string, t time.Time) gitActorJSON {
	u := s.userFor(login)
	return gitActorJSON{Name: u.login, Email: fmt.Sprintf("%d+%s@users.noreply.github.com", u.id, u.login), Date: stamp(t)}
}

func (s *Server) parentsJSON(rp *repo, c *commit) []parentJSON {
	return mapJSON(c.parents, func(p string) parentJSON {
		return parentJSON{SHA: p, URL: s.api(rp.path() + "/git/commits/" + p), HTMLURL: s.web("/" + rp.owner + "/" + rp.name + "/commit/" + p)}
	})
}

func (s *Server) gitCommitJSON(rp *repo, c *commit) *gitCommitJSON {
	tree := treeSHA(c.files, "")
	return &gitCommitJSON{
		SHA:          c.sha,
		NodeID:       nodeID("Commit", c.sha[:12]),
		URL:          s.api(rp.path() + "/git/commits/" + c.sha),
		HTMLURL:      s.web("/" + rp.owner + "/" + rp.name + "/commit/" + c.sha),
		Author:       s.actor(c.author, c.date),
		Committer:    s.actor(c.author, c.date),
		Tree:         treeRefJSON{SHA: tree, URL: s.api(rp.path() + "/git/trees/" + tree)},
		Message:      c.message,
		Parents:      s.parentsJSON(rp, c),
		Verification: verificationJSON{Reason: "unsigned"},
	}
}

// repoCommitJSON is a commit as GET .../commits/{ref} and compare show it.
type repoCommitJSON struct {
	SHA         string         `json:"sha"`
	NodeID      string         `json:"node_id"`
	Commit      *gitCommitJSON `json:"commit"`
	URL         string         `json:"url"`
	HTMLURL     string         `json:"html_url"`
	CommentsURL string         `json:"comments_url"`
	Author      *userJSON      `json:"author"`
	Committer   *userJSON      `json:"committer"`
	Parents     []parentJSON   `json:"parents"`
}

func (s *Server) repoCommitJSON(rp *repo, c *commit) *repoCommitJSON {
	gc := s.gitCommitJSON(rp, c)
	zero := 0
	inner := &gitCommitJSON{
		URL: gc.URL, Author: gc.Author, Committer: gc.Committer, Tree: gc.Tree,
		Message: gc.Message, CommentCount: &zero, Verification: gc.Verification,
	}
	apiURL := s.api(rp.path() + "/commits/" + c.sha)
	return &repoCommitJSON{
		SHA:         c.sha,
		NodeID:      gc.NodeID,
		Commit:      inner,
		URL:         apiURL,
		HTMLURL:     gc.HTMLURL,
		CommentsURL: apiURL + "/comments",
		Author:      s.userJSON(c.author),
		Committer:   s.userJSON(c.author),
		Parents:     s.parentsJSON(rp, c),
	}
}
