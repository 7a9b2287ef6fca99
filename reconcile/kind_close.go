package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
)

// Closer is a GitHub that can read and close issues and pull requests
// (*ghcheck.Client is one): what the Close kind needs beyond GitHub.
type Closer interface {
	IssueState(ctx context.Context, r ghcheck.Repo, number int) effect.Result
	CloseIssue(ctx context.Context, r ghcheck.Repo, number int, reason string) (effect.Artifact, error)
	ClosePR(ctx context.Context, r ghcheck.Repo, number int) (effect.Artifact, error)
}

var _ Closer = (*ghcheck.Client)(nil)

// Close closes an issue (with a state_reason) or a pull request: the
// duplicate `ghonce audit` found. Its artifact is the closed state: found
// when the issue or PR is closed already (by this kind, or by anyone),
// created when this run closed it. Closing sets a state, so a repeated
// request changes nothing; a closed issue a person reopens stays open
// (the entry is done).
type Close struct {
	Number int  `json:"number"`
	PR     bool `json:"pr,omitempty"`
	// Reason is an issue's state_reason: duplicate (default), completed,
	// not_planned. A pull request has none.
	Reason string `json:"reason,omitempty"`
}

func (Close) Kind() string     { return "close" }
func (c Close) Target() string { return strconv.Itoa(c.Number) }
func (c Close) Validate(string) error {
	if err := ghcheck.CheckIssueNumber(c.Number); err != nil {
		return err
	}
	switch c.Reason {
	case "", "duplicate", "completed", "not_planned":
	default:
		return fmt.Errorf("invalid state_reason %q: want duplicate, completed or not_planned", c.Reason)
	}
	if c.PR && c.Reason != "" {
		return errors.New("a pull request is closed without a state_reason")
	}
	return nil
}

func closer(env *Env) (Closer, error) {
	if c, ok := env.GitHub.(Closer); ok {
		return c, nil
	}
	return nil, errors.New("this GitHub client cannot close issues or pull requests")
}

// Find reads the issue or PR (GET .../issues/{n}, consistent): closed is
// found, open is absent. One that does not exist cannot be closed: a
// conflict, never a create.
func (c Close) Find(ctx context.Context, env *Env, _ string) effect.Result {
	gh, err := closer(env)
	if err != nil {
		return effect.Result{State: effect.Unknown, Err: err}
	}
	res := gh.IssueState(ctx, env.Repo, c.Number)
	switch {
	case res.State == effect.Absent:
		return effect.Result{State: effect.Conflict, Err: fmt.Errorf("%s#%d does not exist (deleted or transferred): nothing to close", env.Repo, c.Number)}
	case res.State == effect.Found && res.Artifact.State == "open":
		return effect.Result{State: effect.Absent}
	}
	return res
}

func (c Close) Create(ctx context.Context, env *Env, _ string) (effect.Artifact, error) {
	gh, err := closer(env)
	if err != nil {
		return effect.Artifact{}, &effect.CreateError{Class: effect.ClassNotSent, Err: err}
	}
	if c.PR {
		return gh.ClosePR(ctx, env.Repo, c.Number)
	}
	return gh.CloseIssue(ctx, env.Repo, c.Number, cmpOr(c.Reason, "duplicate"))
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

var _ Spec = Close{}
