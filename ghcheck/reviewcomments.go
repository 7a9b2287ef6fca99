package ghcheck

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/taskkey"
)

// NewReviewComment is an inline comment on a pull request's diff, or, with
// InReplyTo, a reply in the thread of an inline comment (GitHub then takes
// nothing but the body).
type NewReviewComment struct {
	Body string
	// CommitID is the commit whose diff the comment is on.
	CommitID string
	Path     string
	// Line is the file's line on Side ("LEFT", the base's; "RIGHT", the
	// head's, and "" means RIGHT); StartLine, on StartSide (default Side),
	// begins a comment on several lines.
	Line      int
	Side      string
	StartLine int
	StartSide string
	InReplyTo int64
}

// FindReviewComment looks for our inline comment for key on pull request
// number: GET /repos/{o}/{r}/pulls/{number}/comments?per_page=100, every
// page. The list is consistent right after a write. A comment counts only
// if its author is ours and its tags are key's (taskkey.HasMarker).
//
// Found: the oldest such comment. Absent: none, or no such pull request (the
// create is refused with a 404 itself). Unknown: a read failed.
//
// GitHub API docs: https://docs.github.com/rest/pulls/comments#list-review-comments-on-a-pull-request
func (c *Client) FindReviewComment(ctx context.Context, r Repo, number int, key string) Result {
	if err := checkKey(key); err != nil {
		return c.unknown(fmt.Errorf("find review comment: %w", err))
	}
	if err := CheckIssueNumber(number); err != nil {
		return c.unknown(fmt.Errorf("find review comment: %w", err))
	}
	ours, err := c.oursFunc(ctx)
	if err != nil {
		return c.unknown(fmt.Errorf("find review comment: %w", err))
	}
	var best *github.PullRequestComment
	err = c.newRun().pages(ctx, func(ctx context.Context, page int) (*github.Response, error) {
		cs, resp, err := c.gh.PullRequests.ListComments(ctx, r.Owner, r.Name, number,
			&github.PullRequestListCommentsOptions{ListOptions: github.ListOptions{Page: page, PerPage: 100}})
		best = oldestOurs(append(cs, best), (*github.PullRequestComment).GetUser, ours, key)
		return resp, err
	})
	switch {
	case notFound(err):
		return Result{State: Absent}
	case err != nil:
		return c.unknown(fmt.Errorf("list review comments of %s#%d: %w", r, number, err))
	case best == nil:
		return Result{State: Absent}
	}
	return Result{State: Found, Artifact: reviewCommentArtifact(best, number)}
}

// FindReviewCommentAtHead is FindReviewComment reading, in the same round
// trip, the pull request's head commit (GET /repos/{o}/{r}/pulls/{number}):
// the commit a comment that names none is made on. A pull request that does
// not exist is a conflict (nothing can be made there: fix the number); a
// failed read of the head is unknown.
func (c *Client) FindReviewCommentAtHead(ctx context.Context, r Repo, number int, key string) (head string, res Result) {
	if err := cmp.Or(checkKey(key), CheckIssueNumber(number)); err != nil {
		return "", c.unknown(fmt.Errorf("find review comment: %w", err))
	}
	var pr *github.PullRequest
	var prErr error
	together(
		func() { res = c.FindReviewComment(ctx, r, number, key) },
		func() {
			pr, prErr = get(ctx, c.newRun(), func(ctx context.Context) (*github.PullRequest, *github.Response, error) {
				return c.gh.PullRequests.Get(ctx, r.Owner, r.Name, number)
			})
		},
	)
	switch {
	case res.State == Found:
		return pr.GetHead().GetSHA(), res
	case notFound(prErr):
		return "", Result{State: Conflict, Err: &hintError{msg: fmt.Sprintf("pull request #%d does not exist in %s (or this token cannot see it): check the number and the repository", number, r), err: prErr}}
	case prErr != nil:
		return "", c.unknown(fmt.Errorf("read pull request %s#%d: %w", r, number, prErr))
	}
	return pr.GetHead().GetSHA(), res
}

// CreateReviewComment makes an inline comment on pull request number, or a
// reply, its body's first lines key's tags.
//
// POST /repos/{o}/{r}/pulls/{number}/comments is not idempotent (GitHub has
// no uniqueness for comments) and is never retried once it may have been
// sent. A shape CheckReviewComment refuses is refused before sending
// (ClassRefused); so is GitHub's 422 for a line the diff does not show, and
// a 404 for a missing pull request or comment replied to.
//
// GitHub API docs: https://docs.github.com/rest/pulls/comments#create-a-review-comment-for-a-pull-request
func (c *Client) CreateReviewComment(ctx context.Context, r Repo, number int, key string, p NewReviewComment) (Artifact, error) {
	if err := cmp.Or(checkKey(key), CheckReviewComment(key, number, p)); err != nil {
		return Artifact{}, c.createErr(ClassRefused, fmt.Errorf("create review comment: %w", err))
	}
	if p.InReplyTo == 0 && p.CommitID == "" {
		return Artifact{}, c.createErr(ClassRefused, fmt.Errorf("create review comment: %w",
			&effect.InvalidError{Field: "commit_id", Problem: "is empty", Want: "the commit whose diff the comment is on"}))
	}
	in := &github.PullRequestComment{Body: github.String(taskkey.WithMarker(key, p.Body))}
	if p.InReplyTo == 0 {
		in.CommitID, in.Path, in.Line = github.String(p.CommitID), github.String(p.Path), github.Int(p.Line)
		in.Side = github.String(cmp.Or(p.Side, "RIGHT"))
		if p.StartLine > 0 {
			in.StartLine, in.StartSide = github.Int(p.StartLine), github.String(cmp.Or(p.StartSide, p.Side, "RIGHT"))
		}
	}
	cm, class, err := send(ctx, c.newRun(), createOnce, func(ctx context.Context) (*github.PullRequestComment, *github.Response, error) {
		if p.InReplyTo != 0 {
			return c.gh.PullRequests.CreateCommentInReplyTo(ctx, r.Owner, r.Name, number, *in.Body, p.InReplyTo)
		}
		return c.gh.PullRequests.CreateComment(ctx, r.Owner, r.Name, number, in)
	})
	if err != nil {
		return Artifact{}, c.createErr(class, reviewCommentRefused(err, r, number, p))
	}
	return reviewCommentArtifact(cm, number), nil
}

// reviewCommentRefused words a refused create: a 404 is the pull request
// or the comment replied to, a 422 a line the diff does not show.
func reviewCommentRefused(err error, r Repo, number int, p NewReviewComment) error {
	did := fmt.Sprintf("comment on %s:%d of %s#%d", p.Path, p.Line, r, number)
	if p.InReplyTo != 0 {
		did = fmt.Sprintf("reply to comment %d on %s#%d", p.InReplyTo, r, number)
	}
	er := refusal(err)
	switch {
	case er == nil:
		return fmt.Errorf("%s: %w", did, err)
	case er.Response.StatusCode == http.StatusNotFound && p.InReplyTo != 0:
		return worded(err, did, "no such inline comment on that pull request (a top-level comment cannot be replied to here): check the comment's id")
	case er.Response.StatusCode == http.StatusNotFound:
		return worded(err, did, fmt.Sprintf("pull request #%d does not exist in %s (or this token cannot see it): check the number", number, r))
	case er.Response.StatusCode == http.StatusUnprocessableEntity && p.InReplyTo == 0:
		return worded(err, did, "comment on a line the pull request's diff shows at that commit (side LEFT for a removed line)")
	}
	return worded(err, did, "")
}

func init() { listings["review_comments"] = listReviewComments }

// listReviewComments reads every inline comment of the pull requests
// updated at or after since (zero: all): GET
// /repos/{o}/{r}/pulls/comments?since=…&sort=created&direction=asc&per_page=100,
// every page. Each Listed's Number is its pull request.
//
// GitHub API docs: https://docs.github.com/rest/pulls/comments#list-review-comments-in-a-repository
func listReviewComments(ctx context.Context, l *Lists) ([]Listed, error) {
	var out []Listed
	err := l.c.newRun().pages(ctx, func(ctx context.Context, page int) (*github.Response, error) {
		opts := &github.PullRequestListCommentsOptions{Sort: "created", Direction: "asc", ListOptions: github.ListOptions{Page: page, PerPage: 100}}
		if !l.since.IsZero() {
			opts.Since = l.since
		}
		cs, resp, err := l.c.gh.PullRequests.ListComments(ctx, l.repo.Owner, l.repo.Name, 0, opts)
		for _, cm := range cs {
			pos := fmt.Sprintf("%s:%d:%s", cmp.Or(cm.GetSide(), "RIGHT"), cm.GetLine(), cm.GetPath())
			if cm.GetInReplyTo() != 0 {
				pos = fmt.Sprintf("reply:%d", cm.GetInReplyTo())
			}
			out = append(out, Listed{Number: pullNumberOf(cm.GetPullRequestURL()), ID: cm.GetID(), Body: cm.GetBody(),
				Author: cm.GetUser().GetLogin(), URL: cm.GetHTMLURL(), Created: cm.GetCreatedAt().Time, Updated: cm.GetUpdatedAt().Time,
				Reactions: cm.GetReactions().GetTotalCount(), Position: pos})
		}
		l.tell("inline comments", len(out))
		return resp, err
	})
	if err != nil {
		return nil, l.c.redact(fmt.Errorf("list review comments of %s: %w", l.repo, err))
	}
	return out, nil
}

// pullNumberOf is the number at the end of a pull request's API URL.
func pullNumberOf(u string) int {
	_, n, _ := strings.Cut(u[strings.LastIndex(u, "/pulls/")+1:], "/")
	v, _ := strconv.Atoi(n)
	return v
}

func reviewCommentArtifact(cm *github.PullRequestComment, number int) Artifact {
	return Artifact{Number: number, ID: cm.GetID(), URL: cm.GetHTMLURL(), Author: cm.GetUser().GetLogin(), Body: cm.GetBody(),
		SHA: cm.GetCommitID(), Created: cm.GetCreatedAt().Time}
}

// CheckReviewComment refuses what FindReviewComment and CreateReviewComment
// refuse before sending: an invalid key or number, a body too long once
// the tags are added, and a position GitHub cannot place. A reply names
// no position (GitHub would ignore it, making something else than asked);
// an inline comment names its path and line, its sides LEFT or RIGHT, a
// start line before its line, and its commit as 40 hex digits or not at
// all (the pull request's head is then chosen). With key "", the key and
// the body are not checked: the number and the position alone (a key's
// target).
func CheckReviewComment(key string, number int, p NewReviewComment) error {
	if err := CheckIssueNumber(number); err != nil {
		return err
	}
	if key != "" {
		if err := checkKey(key); err != nil {
			return err
		}
		if err := taskkey.CheckBody(key, p.Body); err != nil {
			return err
		}
	}
	bad := func(field, problem, want string) error {
		return &effect.InvalidError{Field: field, Problem: problem, Want: want}
	}
	if p.InReplyTo < 0 {
		return bad("in_reply_to", fmt.Sprintf("is %d", p.InReplyTo), "the id of the inline comment replied to")
	}
	if p.InReplyTo > 0 {
		if p.Path != "" || p.Line != 0 || p.Side != "" || p.StartLine != 0 || p.StartSide != "" || p.CommitID != "" {
			return bad("in_reply_to", "is set with a position", "a reply without path, line, side, start line or commit: it is placed in the thread it answers")
		}
		return nil
	}
	switch {
	case strings.TrimSpace(p.Path) == "":
		return bad("path", "is empty", "the file's path in the repository")
	case strings.HasPrefix(p.Path, "/") || strings.ContainsFunc(p.Path, func(r rune) bool { return r < ' ' || r == 0x7f }):
		return bad("path", fmt.Sprintf("%q is not a path in the repository", p.Path), "a relative path, as the diff names the file")
	case p.Line < 1:
		return bad("line", fmt.Sprintf("is %d", p.Line), "the line's number in the file, from 1")
	case p.StartLine < 0 || p.StartLine > 0 && cmp.Or(p.StartSide, p.Side, "RIGHT") == cmp.Or(p.Side, "RIGHT") && p.StartLine >= p.Line:
		return bad("start_line", fmt.Sprintf("is %d with line %d", p.StartLine, p.Line), "a line before line, for a comment on several lines")
	case p.StartSide != "" && p.StartLine == 0:
		return bad("start_side", "is set without start_line", "start_line too, or neither")
	case p.CommitID != "" && !taskkey.IsCommitSHA(p.CommitID):
		return bad("commit_id", fmt.Sprintf("%q is not a commit SHA", p.CommitID), "the 40 hex digits of a commit of the pull request, or none for its head")
	}
	for _, s := range []struct{ field, v string }{{"side", p.Side}, {"start_side", p.StartSide}} {
		if s.v != "" && s.v != "LEFT" && s.v != "RIGHT" {
			return bad(s.field, fmt.Sprintf("is %q", s.v), "LEFT (the base's line) or RIGHT (the head's)")
		}
	}
	return nil
}
