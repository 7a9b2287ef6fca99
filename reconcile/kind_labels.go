package reconcile

import (
	"context"
	"errors"
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

func (Labels) Kind() string { return "labels" }

// Face: see Face. A pull request's labels are its issue's: one REST write.
func (Labels) Face() Face {
	return Face{
		Write:    "POST repos/{owner}/{repo}/issues/{number}/labels",
		ReadBack: []string{"repos/{owner}/{repo}/issues/{number}/labels"},
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

// labelsAPI is what the kind needs of GitHub beyond the engine's
// interface: *ghcheck.Client has it.
type labelsAPI interface {
	FindLabels(ctx context.Context, r ghcheck.Repo, q ghcheck.LabelsQuery) effect.Result
	AddLabels(ctx context.Context, r ghcheck.Repo, number int, labels []string) (effect.Artifact, error)
}

var _ labelsAPI = (*ghcheck.Client)(nil)

var errNoLabelsAPI = errors.New("this GitHub client cannot add labels once (it has no FindLabels and AddLabels): use a *ghcheck.Client")

func (l Labels) api(env *Env) (labelsAPI, error) {
	if api, ok := env.GitHub.(labelsAPI); ok {
		return api, nil
	}
	return nil, errNoLabelsAPI
}

// Find: a first attempt (NeverAttempted) reads the labels only; a rerun
// reads the events too, from when its first attempt began (Since).
func (l Labels) Find(ctx context.Context, env *Env, _ string) effect.Result {
	api, err := l.api(env)
	if err != nil {
		return effect.Result{State: effect.Unknown, Err: err}
	}
	return api.FindLabels(ctx, env.Repo, ghcheck.LabelsQuery{Number: l.Number, Labels: l.Labels, Since: env.Since, Fresh: env.NeverAttempted})
}

func (l Labels) Create(ctx context.Context, env *Env, _ string) (effect.Artifact, error) {
	api, err := l.api(env)
	if err != nil {
		return effect.Artifact{}, &effect.CreateError{Class: effect.ClassNotSent, Err: err}
	}
	return api.AddLabels(ctx, env.Repo, l.Number, l.Labels)
}

var _ Spec = Labels{}
