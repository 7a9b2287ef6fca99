package reconcile

import (
	"context"
	"strconv"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
)

// Labels adds labels to an issue or pull request, once per task and step:
// a replay does not add back a label a person removed afterwards, so a
// workflow on `labeled` runs once (create-pull-request#4370 ran twice).
// The key is the task, the step, the repository and the number; the labels
// are the payload, not the target: another set under a done key is
// reported, never added (another step adds others).
//
// Labels carry no marker: what Find trusts is the issue's labels (every
// one there already: found, whoever added it, as adding it again would
// change nothing) and, after an attempt that may have applied, the labeled
// events our identity made since that attempt began (ghcheck.FindLabels).
// It has no AsFound: the issue's labels are everyone's, and do not say
// what this key added.
type Labels struct {
	Number int      `json:"number"`
	Labels []string `json:"labels"`
}

func init() { register[Labels]() }

func (Labels) Kind() string { return "labels" }

// Face: see Face. A pull request's labels are its issue's: one REST write,
// a verb under each noun, named as gh names its edit.
func (Labels) Face() Face {
	return Face{
		Write:    "POST repos/{owner}/{repo}/issues/{number}/labels",
		ReadBack: []string{"repos/{owner}/{repo}/issues/{number}/labels"},
		CLI:      []string{"issue edit", "pr edit"}, Gh: []string{"issue edit", "pr edit"}, GhPart: true,
		Does:       "Add labels to an issue or pull request",
		Permission: "`issues: write`",
		Audit: &effect.Audit{Rank: 8, Listing: "labeled", Optional: true, Ref: "#{number}", Same: []string{"thread", "label"},
			Detail: "the same label applied to the same issue or pull request more than once by us",
			Leave:  "an add already made: its workflows ran again; nothing to remove"},
		Example: `{"number": 1, "labels": ["bug", "help wanted"]}`,
		Fields: []effect.Field{
			{Name: "number", Arg: "NUMBER", MCP: "issue_number", Help: "the issue or pull request number", Required: true},
			{Name: "labels", Flag: "add-label", Input: "labels", List: true, Help: "a label to add (repeat, or separate with commas) (required)", Required: true},
		},
	}
}

// DefaultStep: see DefaultStepper.
func (Labels) DefaultStep() string { return "add-labels" }
func (l Labels) Target() string    { return strconv.Itoa(l.Number) }

func (Labels) aim(number string) (Spec, error) {
	n, err := issueNumber(number)
	return Labels{Number: n}, err
}

func (l Labels) Validate(string) error {
	if err := ghcheck.CheckIssueNumber(l.Number); err != nil {
		return err
	}
	if len(l.Labels) == 0 {
		return empty("labels", "one label or more to add")
	}
	if err := ghcheck.CheckLabels(l.Number, l.Labels); err != nil {
		return &InvalidError{Field: "labels", Problem: err.Error(), Want: "label names of at most 50 characters"}
	}
	return nil
}

// labelsAPI is what the kind needs of GitHub: *ghcheck.Client has it.
type labelsAPI interface {
	FindLabels(ctx context.Context, r ghcheck.Repo, q ghcheck.LabelsQuery) effect.Result
	AddLabels(ctx context.Context, r ghcheck.Repo, number int, labels []string) (effect.Artifact, error)
}

var _ labelsAPI = (*ghcheck.Client)(nil)

// Find: a first attempt (NeverAttempted) reads the labels only; a rerun
// reads the events too, from when its first attempt began (Since).
func (l Labels) Find(ctx context.Context, env *Env, _ string) effect.Result {
	return look(env, func(gh labelsAPI) effect.Result {
		return gh.FindLabels(ctx, env.Repo, ghcheck.LabelsQuery{Number: l.Number, Labels: l.Labels, Since: env.Since, Fresh: env.NeverAttempted})
	})
}

func (l Labels) Create(ctx context.Context, env *Env, _ string) (effect.Artifact, error) {
	return send(env, func(gh labelsAPI) (effect.Artifact, error) { return gh.AddLabels(ctx, env.Repo, l.Number, l.Labels) })
}

var _ Spec = Labels{}
