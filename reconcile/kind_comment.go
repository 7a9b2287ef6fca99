package reconcile

import (
	"context"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
)

// Comment comments on an issue or pull request. GitHub has no uniqueness
// for comments: the marker, read back from every page of the thread, is
// the only tag.
type Comment struct {
	Number int    `json:"number"`
	Body   string `json:"body"`
}

func init() { register[Comment]() }

func (Comment) Kind() string { return "comment" }

// Face: see Face. A pull request's comments are its issue's, so one REST
// write and one MCP tool carry both; the CLI and gh have a verb under each
// noun.
func (Comment) Face() Face {
	return Face{
		Write:    "POST repos/{owner}/{repo}/issues/{number}/comments",
		ReadBack: []string{"repos/{owner}/{repo}/issues/comments/{id}"},
		CLI:      []string{"issue comment", "pr comment"}, Gh: []string{"issue comment", "pr comment"}, MCP: []string{"add_issue_comment"},
		Tools:      map[string]effect.Tool{"add_issue_comment": {Body: true, Pass: "a reaction without a body", OnePer: "issue or pull request", What: "comment on #{number}"}},
		Does:       "Comment on an issue or pull request",
		Permission: "`issues: write`",
		Long:       commentLong,
		Audit: &effect.Audit{Rank: 3, Listing: "comments", Ref: "comment {id} on #{thread}", Same: []string{"thread", "body"}, Reactors: true,
			Detail: "the same author, the same normalised body, on the same thread", Settle: "delete"},
		Example: `{"number": 1, "body": "Fixed in #2."}`,
		Fields: []effect.Field{
			{Name: "number", Arg: "NUMBER", MCP: "issue_number", Help: "the issue or pull request number", Required: true},
			bodyField,
		},
	}
}

// commentLong is the help of the kind's verbs: see Face.Long.
const commentLong = `Post a comment once per (task, step, repository, number).

GitHub has no uniqueness for comments: ghonce puts a hidden marker with the
key on the comment's first line and, before posting, reads every page of the
thread for a comment by you that carries it. A retry with a reworded body gets
the first comment back.`

// DefaultStep: see DefaultStepper. A comment on a pull request is an
// issue comment to GitHub, and its default step is the same.
func (Comment) DefaultStep() string { return "issue-comment" }

// formerDefaultSteps: before a kind declared its default step, `ghonce pr
// comment` and `gh pr comment` (through the shim) defaulted to
// "pr-comment"; Prepare looks in the ledger under that key too (see
// Prepared.legacy).
func (Comment) formerDefaultSteps() []string { return []string{"pr-comment"} }
func (c Comment) Target() string             { return strconv.Itoa(c.Number) }

func (Comment) aim(number string) (Spec, error) {
	n, err := issueNumber(number)
	return Comment{Number: n}, err
}
func (c Comment) Validate(key string) error {
	if err := ghcheck.CheckIssueNumber(c.Number); err != nil {
		return err
	}
	if blank(c.Body) {
		return empty("body", "the comment's text (white space and invisible characters such as U+200B are a comment GitHub shows as empty)")
	}
	return ghcheck.CheckCreate(key, c.Body, nil)
}
func (c Comment) Find(ctx context.Context, env *Env, key string) effect.Result {
	return look(env, func(gh commentAPI) effect.Result { return gh.FindCommentSince(ctx, env.Repo, c.Number, key, env.Since) })
}
func (c Comment) Create(ctx context.Context, env *Env, key string) (effect.Artifact, error) {
	return send(env, func(gh commentAPI) (effect.Artifact, error) {
		return gh.CreateComment(ctx, env.Repo, c.Number, key, c.Body)
	})
}

// Update edits the comment's body.
func (c Comment) Update(ctx context.Context, env *Env, key string, art effect.Artifact, _ []string) (effect.Artifact, []string, error) {
	got, err := send(env, func(gh commentEditor) (effect.Artifact, error) {
		return gh.UpdateComment(ctx, env.Repo, art.ID, key, c.Body)
	})
	return got, nil, err
}

// Lookup: Reconcile finds comments by their marker in a listing of the
// repository's comments changed since (FindMany).
func (c Comment) Lookup(key string) ghcheck.Lookup {
	return ghcheck.Lookup{Kind: ghcheck.LookupComment, Key: key, Number: c.Number}
}

// commentAPI is what a comment asks of GitHub; commentEditor, what
// --on-change update asks. FindCommentSince reads only comments updated at
// or after since (zero: the whole thread).
type commentAPI interface {
	FindCommentSince(ctx context.Context, r ghcheck.Repo, number int, key string, since time.Time) effect.Result
	CreateComment(ctx context.Context, r ghcheck.Repo, number int, key, body string) (effect.Artifact, error)
}
type commentEditor interface {
	UpdateComment(ctx context.Context, r ghcheck.Repo, id int64, key, body string) (effect.Artifact, error)
}

var (
	_ commentAPI    = (*ghcheck.Client)(nil)
	_ commentEditor = (*ghcheck.Client)(nil)
	_ Spec          = Comment{}
	_ BatchFinder   = Comment{}
	_ Updatable     = Comment{}
)

// AsFound is the comment as GitHub shows it: its body, less the marker.
func (c Comment) AsFound(key, _ string, art effect.Artifact) (Spec, bool) {
	if art.Body == "" {
		return nil, false
	}
	f := c
	f.Body = withoutMarker(key, art.Body)
	return f, true
}

// blank reports whether s shows as nothing: empty, or only white space
// (Unicode's, as GitHub's rendering trims it) and characters that render as
// nothing: Unicode's default-ignorable code points (zero-width spaces and
// joiners U+200B..U+200D, U+2060, U+FEFF, the soft hyphen, bidirectional
// marks, variation selectors, Hangul fillers) and the blank braille pattern
// U+2800.
func blank(s string) bool { return !strings.ContainsFunc(s, visible) }

// noTitle is what a blank title is told to be.
const noTitle = "a title (white space and invisible characters such as U+200B are none)"

// visible reports whether r shows. Default_Ignorable_Code_Point is, per
// Unicode's DerivedCoreProperties, Other_Default_Ignorable_Code_Point,
// format characters (Cf) and variation selectors, less white space, the
// interlinear annotation controls, Egyptian hieroglyph format controls
// and prepended concatenation marks (which do show).
func visible(r rune) bool {
	switch {
	case unicode.IsSpace(r), r == '\u2800',
		unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector):
		return false
	case unicode.Is(unicode.Cf, r):
		return unicode.Is(unicode.Prepended_Concatenation_Mark, r) || r >= 0xFFF9 && r <= 0xFFFB || r >= 0x13430 && r <= 0x1343F
	}
	return true
}
