package reconcile

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
)

// Review reviews a pull request: its body, its event and its inline
// comments in one request. GitHub keeps no uniqueness for reviews: the
// marker on the body's first line (and the link line beside it, which
// survives HTML-comment sanitizers), read back from every page of the pull
// request's reviews by our identity, is the tag. Without an Event the
// review stays pending (seen by its author only); a pending review of ours
// for the key is settled by submitting it, never by making another.
type Review struct {
	Number   int                     `json:"number"`
	Body     string                  `json:"body"`
	Event    string                  `json:"event,omitempty"`
	CommitID string                  `json:"commit_id,omitempty"`
	Comments []ghcheck.ReviewComment `json:"comments,omitempty"`
}

func init() { register[Review]() }

func (Review) Kind() string { return "review" }

// Face: see Face.
func (Review) Face() Face {
	return Face{
		Write:    "POST repos/{owner}/{repo}/pulls/{number}/reviews",
		Refuses:  []string{"node_id"},
		ReadBack: []string{"repos/{owner}/{repo}/pulls/{number}/reviews/{id}"},
		CLI:      []string{"pr review"}, Gh: []string{"pr review"}, MCP: []string{"pull_request_review_write"},
		// create (with an event, or pending without one) and submit_pending
		// are the same key's act: it submits the pending review create
		// made, never another.
		Tools: map[string]effect.Tool{"pull_request_review_write": {Methods: map[string]string{"create": "", "submit_pending": OnChangeUpdate},
			Pass: "a method other than create and submit_pending", OnePer: "pull request", What: "review on #{number}"}},
		Does:       "Review a pull request",
		Permission: "`pull-requests: write` (GitHub refuses `approve` and `request-changes` on a pull request by the token's own identity)",
		Long:       reviewLong,
		Audit: &effect.Audit{Rank: 4, Listing: "reviews", Ref: "review {id} on #{thread}", Same: []string{"thread", "event", "body"},
			Detail: "the same author, the same event, the same normalised body, on the same pull request",
			Leave:  "GitHub deletes no submitted review: for a person (dismiss it, or edit its text)"},
		Example: `{"number": 2, "event": "COMMENT", "body": "Looks right; one question inline."}`,
		Fields: []effect.Field{
			{Name: "number", Arg: "NUMBER", MCP: "pullNumber", Help: "the pull request number", Required: true},
			{Name: "event", Switches: map[string]string{"comment": "COMMENT", "approve": "APPROVE", "request-changes": "REQUEST_CHANGES"},
				Input: "event", Help: "the review's event (required; none leaves it pending, on MCP only)"},
			{Name: "body", Short: "b", Help: "the review's text (required to comment or request changes)", File: true, FileShort: "F"},
			{Name: "commit_id", Flag: "-", MCP: "commitID", Input: "-", Help: "the commit reviewed (default: the head)"},
			{Name: "comments", Gh: "-", MCP: "-", Input: "comments-file",
				Help: `a JSON file of inline comments, [{"path", "line", "side"?, "start_line"?, "body"}] ("-" for standard input)`},
		},
	}
}

// reviewLong is the help of the kind's verbs: see Face.Long.
const reviewLong = `Review a pull request once per (task, step, repository, number).

One request makes the review with its event, its text and its inline comments
(--comments FILE, a JSON array as GitHub takes them). A hidden marker with the
key opens its text; before reviewing, every page of the pull request's reviews
is read for one by you that carries it. A pending review of yours for the key
(left by a pending flow that was cut short) is submitted, never doubled. GitHub
refuses --approve and --request-changes on your own pull request: exit 1,
nothing made.`

// DefaultStep: see DefaultStepper.
func (Review) DefaultStep() string { return "pr-review" }
func (r Review) Target() string    { return strconv.Itoa(r.Number) }

func (Review) aim(number string) (Spec, error) {
	n, err := issueNumber(number)
	return Review{Number: n}, err
}

func (r Review) Validate(key string) error {
	if err := ghcheck.CheckIssueNumber(r.Number); err != nil {
		return err
	}
	switch r.Event {
	case "", "APPROVE", "COMMENT", "REQUEST_CHANGES":
	default:
		return &InvalidError{Field: "event", Problem: fmt.Sprintf("is %q", r.Event), Want: "COMMENT, APPROVE or REQUEST_CHANGES"}
	}
	// GitHub requires a text to request changes or to comment; ghonce's
	// marker is no text a person reads.
	if blank(r.Body) && (r.Event == "REQUEST_CHANGES" || r.Event == "COMMENT" && len(r.Comments) == 0) {
		return empty("body", "the review's text (white space and invisible characters such as U+200B are none)")
	}
	return ghcheck.CheckReview(key, r.Number, r.new())
}

func (r Review) new() ghcheck.NewReview {
	return ghcheck.NewReview{Body: r.Body, Event: r.Event, CommitID: r.CommitID, Comments: r.Comments}
}

// reviewAPI is what a review asks of GitHub.
type reviewAPI interface {
	FindReview(ctx context.Context, r ghcheck.Repo, number int, key, event string) effect.Result
	CreateReview(ctx context.Context, r ghcheck.Repo, number int, key string, p ghcheck.NewReview) (effect.Artifact, error)
	SubmitReview(ctx context.Context, r ghcheck.Repo, number int, key string, p ghcheck.NewReview) (effect.Artifact, error)
}

func (r Review) Find(ctx context.Context, env *Env, key string) effect.Result {
	return look(env, func(gh reviewAPI) effect.Result { return gh.FindReview(ctx, env.Repo, r.Number, key, r.Event) })
}

func (r Review) Create(ctx context.Context, env *Env, key string) (effect.Artifact, error) {
	return send(env, func(gh reviewAPI) (effect.Artifact, error) {
		return gh.CreateReview(ctx, env.Repo, r.Number, key, r.new())
	})
}

// Update ends a pending flow: the key made a pending review (no event),
// and this run, under --on-change update, gives the event (and text) to
// submit it with (github-mcp-server's submit_pending). Only the pending
// review is submitted, never a new one made; one already submitted is
// returned as it is, so a killed agent's retry submits nothing twice. Its
// inline comments and commit cannot change.
func (r Review) Update(ctx context.Context, env *Env, key string, art effect.Artifact, changed []string) (effect.Artifact, []string, error) {
	if r.Event == "" {
		return art, changed, nil
	}
	got, err := send(env, func(gh reviewAPI) (effect.Artifact, error) {
		return gh.SubmitReview(ctx, env.Repo, r.Number, key, r.new())
	})
	return got, slices.DeleteFunc(slices.Clone(changed), func(f string) bool { return f == "event" || f == "body" }), err
}

var (
	_ reviewAPI = (*ghcheck.Client)(nil)
	_ Spec      = Review{}
	_ AsFounder = Review{}
	_ Updatable = Review{}
)

// AsFound is the review as GitHub shows it: its body, less the marker.
func (r Review) AsFound(key, _ string, art effect.Artifact) (Spec, bool) {
	if art.Body == "" {
		return nil, false
	}
	f := r
	f.Body = withoutMarker(key, art.Body)
	return f, true
}
