package reconcile

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
)

// ReviewComment comments on a line of a pull request's diff (Path, Line on
// Side, from StartLine for several lines), or, with InReplyTo, replies in
// the thread of such a comment. The kind is named as GitHub's REST API
// names the artifact ("review comment"), so the key stays the kind's when
// a front calls it an inline comment. GitHub has no uniqueness for
// comments: found among the pull request's inline comments (every page) by
// our identity carrying the key's tags, the only tag a comment can carry.
//
// Its target is the pull request and the line (side, line, path): two
// lines of one task are two keys without a step, and a reworded comment on
// the same line is the same key, where the same-act rule (sameact.go)
// decides. A reply's target is the comment it answers.
//
// Without CommitID, the comment is on the pull request's head: read with
// the look-up, in its round trip (Choose), and recorded before the create.
type ReviewComment struct {
	Number    int    `json:"number"`
	Body      string `json:"body"`
	Path      string `json:"path,omitempty"`
	Line      int    `json:"line,omitempty"`
	Side      string `json:"side,omitempty"`
	StartLine int    `json:"start_line,omitempty"`
	StartSide string `json:"start_side,omitempty"`
	CommitID  string `json:"commit_id,omitempty"`
	InReplyTo int64  `json:"in_reply_to,omitempty"`
}

func init() { register[ReviewComment]() }

func (ReviewComment) Kind() string { return "review-comment" }

// Face: see Face. `ghonce pr comment` with --path (or --reply-to) is this
// kind, without it the top-level comment; MCP's tool only replies. A
// comment on a file (subject_type) or by diff position (GitHub's deprecated
// way) is not this kind's.
func (ReviewComment) Face() Face {
	num := func(name, flag, mcp, help string) effect.Field {
		return effect.Field{Name: name, Flag: flag, MCP: mcp, Input: "-", Help: help}
	}
	return Face{
		Write:    "POST repos/{owner}/{repo}/pulls/{number}/comments",
		Refuses:  []string{"position", "subject_type"},
		ReadBack: []string{"repos/{owner}/{repo}/pulls/comments/{id}"},
		CLI:      []string{"pr comment"}, MCP: []string{"add_reply_to_pull_request_comment"},
		Tools: map[string]effect.Tool{"add_reply_to_pull_request_comment": {Body: true, Pass: "a reaction without a body", OnePer: "inline comment replied to",
			What: "reply to comment {in_reply_to} on PR #{number}"}},
		Does: "Comment on a line of a pull request's diff",
		Long: reviewCommentLong,
		Audit: &effect.Audit{Rank: 6, Listing: "review_comments", Ref: "inline comment {id} on #{thread}", Same: []string{"thread", "line", "body"},
			Detail: "the same author, the same normalised body, on the same line of the same pull request",
			Leave:  "inline comments are reported, not deleted: delete it on GitHub"},
		Example: `{"number": 2, "path": "change-mallory.txt", "line": 1, "body": "Off by one here."}`,
		Fields: []effect.Field{
			{Name: "number", Arg: "NUMBER", MCP: "pullNumber", Help: "the pull request number", Required: true},
			bodyField,
			{Name: "path", MCP: "-", Input: "-", Help: "the file to comment on, as the diff names it (an inline comment)"},
			num("line", "", "-", "the line's number in the file (with --path)"),
			{Name: "side", MCP: "-", Input: "-", Help: "RIGHT (the head's line, the default) or LEFT (the base's)"},
			num("start_line", "", "-", "the first line of a comment on several lines"),
			{Name: "start_side", Flag: "-", MCP: "-", Input: "-"},
			{Name: "commit_id", Flag: "commit", MCP: "-", Input: "-", Help: "the commit whose diff to comment on (default: the pull request's head)"},
			num("in_reply_to", "reply-to", "commentId", "reply in the thread of this inline comment (its id)"),
		},
	}
}

// reviewCommentLong is what `pr comment` says of it: see Face.Long.
const reviewCommentLong = `With --path and --line, the comment is on that line of the pull request's
diff (--side LEFT for the base's line, --start-line for several lines, on the
head unless --commit names another commit), once per (task, step, repository,
pull request, path, line, side): two lines are two comments without a step,
and a reworded comment on the same line is the same act. --reply-to ID
replies in the thread of inline comment ID, once per comment replied to.`

// DefaultStep: see DefaultStepper.
func (ReviewComment) DefaultStep() string { return "review-comment" }

// Target: "12:RIGHT:40:path/to/file.go" for a line (a side left out is
// RIGHT, as on GitHub), "12:reply:987" for a reply to comment 987.
func (c ReviewComment) Target() string {
	if c.InReplyTo != 0 {
		return fmt.Sprintf("%d:reply:%d", c.Number, c.InReplyTo)
	}
	return fmt.Sprintf("%d:%s:%d:%s", c.Number, cmp.Or(c.Side, "RIGHT"), c.Line, c.Path)
}

func (ReviewComment) aim(target string) (Spec, error) {
	bad := &InvalidError{Field: "target", Problem: fmt.Sprintf("%q is not a review comment's target", target), Want: "NUMBER:SIDE:LINE:PATH or NUMBER:reply:ID"}
	parts := strings.SplitN(target, ":", 4)
	if len(parts) < 3 {
		return nil, bad
	}
	n, err := issueNumber(parts[0])
	if err != nil {
		return nil, err
	}
	c := ReviewComment{Number: n}
	if parts[1] == "reply" && len(parts) == 3 {
		if c.InReplyTo, err = strconv.ParseInt(parts[2], 10, 64); err != nil {
			return nil, bad
		}
	} else if len(parts) == 4 {
		if c.Line, err = strconv.Atoi(parts[2]); err != nil {
			return nil, bad
		}
		c.Side, c.Path = parts[1], parts[3]
	} else {
		return nil, bad
	}
	return c, ghcheck.CheckReviewComment("", n, c.new())
}

func (c ReviewComment) new() ghcheck.NewReviewComment {
	return ghcheck.NewReviewComment{Body: c.Body, CommitID: c.CommitID, Path: c.Path, Line: c.Line, Side: c.Side,
		StartLine: c.StartLine, StartSide: c.StartSide, InReplyTo: c.InReplyTo}
}

func (c ReviewComment) Validate(key string) error {
	if err := ghcheck.CheckIssueNumber(c.Number); err != nil {
		return err
	}
	if blank(c.Body) {
		return empty("body", "the comment's text (white space and invisible characters such as U+200B are a comment GitHub shows as empty)")
	}
	return ghcheck.CheckReviewComment(key, c.Number, c.new())
}

// reviewCommentAPI is what the kind asks of GitHub.
type reviewCommentAPI interface {
	FindReviewComment(ctx context.Context, r ghcheck.Repo, number int, key string) effect.Result
	FindReviewCommentAtHead(ctx context.Context, r ghcheck.Repo, number int, key string) (string, effect.Result)
	CreateReviewComment(ctx context.Context, r ghcheck.Repo, number int, key string, p ghcheck.NewReviewComment) (effect.Artifact, error)
}

var _ reviewCommentAPI = (*ghcheck.Client)(nil)

func (c ReviewComment) Find(ctx context.Context, env *Env, key string) effect.Result {
	_, res := c.Choose(ctx, env, key)
	return res
}

func (c ReviewComment) Create(ctx context.Context, env *Env, key string) (effect.Artifact, error) {
	return send(env, func(gh reviewCommentAPI) (effect.Artifact, error) {
		return gh.CreateReviewComment(ctx, env.Repo, c.Number, key, c.new())
	})
}

// Chooses: a comment on a line that names no commit is on the head.
func (c ReviewComment) Chooses() bool { return c.CommitID == "" && c.InReplyTo == 0 }

// Choose reads the pull request's head while it looks for the comment (one
// round trip) and returns the description on that head.
func (c ReviewComment) Choose(ctx context.Context, env *Env, key string) (Spec, effect.Result) {
	if !c.Chooses() {
		return c, look(env, func(gh reviewCommentAPI) effect.Result { return gh.FindReviewComment(ctx, env.Repo, c.Number, key) })
	}
	res := look(env, func(gh reviewCommentAPI) effect.Result {
		head, res := gh.FindReviewCommentAtHead(ctx, env.Repo, c.Number, key)
		if res.State == effect.Conflict {
			res.Err = &refusal{res.Err} // no such pull request: fix the number
		}
		c.CommitID = head
		return res
	})
	return c, res
}

// AsFound is the comment as GitHub shows it: its body, less the tags.
func (c ReviewComment) AsFound(key, _ string, art effect.Artifact) (Spec, bool) {
	if art.Body == "" {
		return nil, false
	}
	c.Body = withoutMarker(key, art.Body)
	return c, true
}

var (
	_ Spec      = ReviewComment{}
	_ Chooser   = ReviewComment{}
	_ AsFounder = ReviewComment{}
)
