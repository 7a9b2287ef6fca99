package fakegithub

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

func init() {
	handle(map[string]repoEndpoint{
		"GET /issues/comments/{id}/reactions": (*Server).listCommentReactions,
		"GET /issues/{number}/reactions":      onIssue((*Server).listIssueReactions),
		"GET /issues/{number}/timeline":       onIssue((*Server).listTimeline),
		"GET /issues/{number}/events":         onIssue((*Server).listIssueEvents),
	})
}

// What people do to an issue, a pull request or a comment besides
// commenting: reactions (with who reacted), labels added (with who added
// them) and references from other issues and pull requests, as GitHub's
// reactions and timeline endpoints report them.

// reaction is one reaction on an issue, a pull request or a comment.
type reaction struct {
	id      int64
	user    string
	content string
	created time.Time
}

// event is one timeline event other than a comment or a review: labeled
// (label, by actor) or cross-referenced (from source, by actor).
type event struct {
	id      int64
	kind    string
	actor   string
	label   string
	source  *issue
	created time.Time
}

// reactionContents are the contents GitHub accepts.
var reactionContents = []string{"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}

func (s *Server) reactionsSummary(apiURL string, rs []*reaction) *reactionsJSON {
	out := &reactionsJSON{URL: apiURL + "/reactions", TotalCount: len(rs)}
	for _, r := range rs {
		switch r.content {
		case "+1":
			out.PlusOne++
		case "-1":
			out.MinusOne++
		case "laugh":
			out.Laugh++
		case "hooray":
			out.Hooray++
		case "confused":
			out.Confused++
		case "heart":
			out.Heart++
		case "rocket":
			out.Rocket++
		case "eyes":
			out.Eyes++
		}
	}
	return out
}

type reactionJSON struct {
	ID        int64     `json:"id"`
	NodeID    string    `json:"node_id"`
	User      *userJSON `json:"user"`
	Content   string    `json:"content"`
	CreatedAt string    `json:"created_at"`
}

func (s *Server) reactionsList(c *call, rp *repo, rs []*reaction) *reply {
	want := c.r.URL.Query().Get("content")
	items := make([]reactionJSON, 0, len(rs))
	for _, r := range rs {
		if want != "" && r.content != want {
			continue
		}
		items = append(items, reactionJSON{ID: r.id, NodeID: nodeID("Reaction", r.id), User: s.userJSON(r.user), Content: r.content, CreatedAt: stamp(r.created)})
	}
	return pageReply(s, c, repoLinkPath(c, rp), items)
}

// listIssueReactions serves GET /repos/{owner}/{repo}/issues/{number}/reactions.
func (s *Server) listIssueReactions(c *call, rp *repo, is *issue) *reply {
	return s.reactionsList(c, rp, is.reactions)
}

// listCommentReactions serves GET
// /repos/{owner}/{repo}/issues/comments/{id}/reactions.
func (s *Server) listCommentReactions(c *call, rp *repo) *reply {
	cm := commentByParam(c, rp)
	if cm == nil {
		return notFound()
	}
	return s.reactionsList(c, rp, cm.reactions)
}

// SeedReaction stores a reaction (content +1, heart, ...) by login on issue
// or pull request number, or on comment commentID when it is not 0, and
// returns its id (0 when the repository, the issue or the comment does not
// exist, or content is not one GitHub accepts). A login reacts once per
// content, as on GitHub.
func (s *Server) SeedReaction(owner, name string, number int, commentID int64, login, content string) int64 {
	return inRepo(s, owner, name, func(rp *repo) int64 {
		if !slices.Contains(reactionContents, content) {
			return 0
		}
		var list *[]*reaction
		switch cm, is := rp.comments[commentID], rp.issueByNumber(int64(number)); {
		case commentID != 0 && cm != nil:
			list = &cm.reactions
		case commentID == 0 && is != nil:
			list = &is.reactions
		default:
			return 0
		}
		login = s.userFor(login).login
		for _, r := range *list {
			if r.user == login && r.content == content {
				return r.id
			}
		}
		r := &reaction{id: s.nextID(commentIDs), user: login, content: content, created: s.now()}
		*list = append(*list, r)
		return r.id
	})
}

// SeedLabel adds label (made when the repository has none of that name)
// to issue or pull request number as login did: the timeline shows a
// labeled event by login.
func (s *Server) SeedLabel(owner, name string, number int, login, label string) {
	s.withRepo(owner, name, func(rp *repo) {
		if is := rp.issueByNumber(int64(number)); is != nil {
			s.addIssueLabelsLocked(rp, is, login, []string{label})
			is.updated = s.now()
		}
	})
}

// ForgetCommit drops commit sha of owner/repo and every branch at it, as
// GitHub forgets a commit no ref reaches after a force-push: a pull
// request whose head it was keeps the SHA, and GET .../commits/{sha}
// answers 422.
func (s *Server) ForgetCommit(owner, name, sha string) {
	s.withRepo(owner, name, func(rp *repo) {
		delete(rp.commits, sha)
		for ref, at := range rp.refs {
			if at == sha {
				delete(rp.refs, ref)
			}
		}
	})
}

// labelEventLocked records a labeled or unlabeled event, as GitHub does
// for each label an add newly applies and each one removed.
func (s *Server) labelEventLocked(is *issue, kind, actor, name string) {
	is.events = append(is.events, &event{id: s.nextID(commentIDs), kind: kind, actor: s.userFor(actor).login, label: name, created: s.now()})
}

// RemoveLabel takes label off issue or pull request number as login did
// (a person undoing an add): the events show an unlabeled event by login.
func (s *Server) RemoveLabel(owner, name string, number int, login, label string) {
	s.withRepo(owner, name, func(rp *repo) {
		if is := rp.issueByNumber(int64(number)); is != nil {
			s.removeIssueLabelLocked(is, login, label)
		}
	})
}

// Labeled counts the labeled events of issue or pull request number for
// label (without case): how often its labeled workflows would have run.
func (s *Server) Labeled(owner, name string, number int, label string) int {
	return inIssue(s, owner, name, number, func(_ *repo, is *issue) (n int) {
		for _, ev := range is.events {
			if ev.kind == "labeled" && strings.EqualFold(ev.label, label) {
				n++
			}
		}
		return n
	})
}

// listIssueEvents serves GET /repos/{owner}/{repo}/issues/{number}/events:
// the labeled and unlabeled events, with their actor, oldest first,
// paginated (mentions are the timeline's only).
func (s *Server) listIssueEvents(c *call, rp *repo, is *issue) *reply {
	items := []timelineJSON{}
	for _, ev := range is.events {
		if ev.kind == "labeled" || ev.kind == "unlabeled" {
			items = append(items, s.labelEventJSON(rp, ev))
		}
	}
	return pageReply(s, c, repoLinkPath(c, rp), items)
}

func (s *Server) labelEventJSON(rp *repo, ev *event) timelineJSON {
	t := timelineJSON{Event: ev.kind, ID: ev.id, Actor: s.userJSON(ev.actor), CreatedAt: stamp(ev.created), at: ev.created}
	t.NodeID = nodeID(map[string]string{"labeled": "LabeledEvent", "unlabeled": "UnlabeledEvent"}[ev.kind], ev.id)
	t.URL = s.api(fmt.Sprintf("%s/issues/events/%d", rp.path(), ev.id))
	color := "ededed"
	if l := rp.labelByName(ev.label); l != nil {
		color = l.color
	}
	t.Label = &struct {
		Name  string `json:"name"`
		Color string `json:"color"`
	}{ev.label, color}
	return t
}

// forcePushedLocked records, on every open pull request whose head is
// branch of rp, a head_ref_force_pushed event by actor, as GitHub does.
func (s *Server) forcePushedLocked(rp *repo, branch, actor string) {
	for _, r := range s.repos {
		for _, is := range r.issues {
			if p := is.pull; p != nil && is.state == "open" && p.headRepo == rp && p.headRef == branch {
				is.events = append(is.events, &event{id: s.nextID(commentIDs), kind: "head_ref_force_pushed", actor: s.userFor(actor).login, created: s.now()})
			}
		}
	}
}

var mention = regexp.MustCompile(`(?:^|[^\w/])#([0-9]+)\b`)

// crossReferenceLocked records, on every other issue or pull request of
// rp that body mentions as #N, a cross-referenced event from is by actor,
// as GitHub does for a mention in an issue, a pull request or a comment.
func (s *Server) crossReferenceLocked(rp *repo, is *issue, actor, body string) {
	seen := map[int64]bool{}
	for _, m := range mention.FindAllStringSubmatch(body, -1) {
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil || seen[n] || n == int64(is.number) {
			continue
		}
		seen[n] = true
		if to := rp.issueByNumber(n); to != nil {
			to.events = append(to.events, &event{id: s.nextID(commentIDs), kind: "cross-referenced", actor: s.userFor(actor).login, source: is, created: s.now()})
		}
	}
}

// timelineJSON is one item of an issue's timeline; the fields that do not
// apply to an event are left out, as GitHub leaves them out.
type timelineJSON struct {
	Event     string    `json:"event"`
	ID        int64     `json:"id,omitempty"`
	NodeID    string    `json:"node_id,omitempty"`
	URL       string    `json:"url,omitempty"`
	Actor     *userJSON `json:"actor,omitempty"`
	User      *userJSON `json:"user,omitempty"`
	CreatedAt string    `json:"created_at,omitempty"`
	UpdatedAt string    `json:"updated_at,omitempty"`
	// commented
	HTMLURL           string         `json:"html_url,omitempty"`
	IssueURL          string         `json:"issue_url,omitempty"`
	Body              *string        `json:"body,omitempty"`
	AuthorAssociation string         `json:"author_association,omitempty"`
	Reactions         *reactionsJSON `json:"reactions,omitempty"`
	// labeled
	Label *struct {
		Name  string `json:"name"`
		Color string `json:"color"`
	} `json:"label,omitempty"`
	// cross-referenced
	Source *struct {
		Type  string     `json:"type"`
		Issue *issueJSON `json:"issue"`
	} `json:"source,omitempty"`
	// reviewed
	State       string `json:"state,omitempty"`
	SubmittedAt string `json:"submitted_at,omitempty"`
	at          time.Time
}

// listTimeline serves GET /repos/{owner}/{repo}/issues/{number}/timeline:
// comments (commented), reviews (reviewed), labels added (labeled) and
// mentions from other issues and pull requests (cross-referenced), oldest
// first, paginated.
func (s *Server) listTimeline(c *call, rp *repo, is *issue) *reply {
	var items []timelineJSON
	for _, cm := range is.comments {
		j := s.commentJSON(rp, cm)
		body := cm.body
		items = append(items, timelineJSON{Event: "commented", ID: cm.id, NodeID: j.NodeID, URL: j.URL, Actor: j.User, User: j.User,
			CreatedAt: j.CreatedAt, UpdatedAt: j.UpdatedAt, HTMLURL: j.HTMLURL, IssueURL: j.IssueURL, Body: &body,
			AuthorAssociation: j.AuthorAssociation, Reactions: j.Reactions, at: cm.created})
	}
	if is.pull != nil {
		for _, rv := range storeOf[reviewStore](is.pull).all {
			if rv.state == "PENDING" {
				continue // not on the timeline until submitted
			}
			body := rv.body
			items = append(items, timelineJSON{Event: "reviewed", ID: rv.id, NodeID: nodeID("PullRequestReview", rv.id), User: s.userJSON(rv.author),
				Body: &body, State: rv.state, SubmittedAt: stamp(rv.submitted), HTMLURL: s.web(fmt.Sprintf("%s#pullrequestreview-%d", s.issueWebPath(rp, is), rv.id)),
				AuthorAssociation: association(rp, rv.author), at: rv.submitted})
		}
	}
	for _, ev := range is.events {
		t := timelineJSON{Event: ev.kind, Actor: s.userJSON(ev.actor), CreatedAt: stamp(ev.created), at: ev.created}
		switch ev.kind {
		case "labeled", "unlabeled":
			t = s.labelEventJSON(rp, ev)
		case "cross-referenced":
			t.UpdatedAt = t.CreatedAt
			t.Source = &struct {
				Type  string     `json:"type"`
				Issue *issueJSON `json:"issue"`
			}{"issue", s.issueJSON(rp, ev.source)}
		}
		items = append(items, t)
	}
	slices.SortStableFunc(items, func(a, b timelineJSON) int { return a.at.Compare(b.at) })
	if items == nil {
		items = []timelineJSON{}
	}
	return pageReply(s, c, repoLinkPath(c, rp), items)
}
