package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
)

// Close closes an issue (with a state_reason) or a pull request: a
// duplicate `ghonce audit` found. It changes an artifact instead of making
// one, so its artifact is the closed state. Find trusts the issue's state
// alone (GET .../issues/{n}): found when it is closed, whoever closed it;
// absent while open; a conflict when it does not exist. Closing sets a
// state, so a repeated request changes nothing; one a person reopens after
// stays open (the entry is done).
type Close struct {
	Number int  `json:"number"`
	PR     bool `json:"pr,omitempty"`
	// Reason is an issue's state_reason: duplicate (default), completed or
	// not_planned. A pull request has none.
	Reason string `json:"reason,omitempty"`
	// Guard, if set, runs right before the close (see Guard).
	Guard Guard `json:"-"`
}

func init() { register[Close]() }

func (Close) Kind() string { return "close" }

// Face: see Face. Only `ghonce audit --apply` closes.
func (Close) Face() Face       { return Face{} }
func (c Close) Target() string { return strconv.Itoa(c.Number) }

func (Close) aim(number string) (Spec, error) {
	n, err := issueNumber(number)
	return Close{Number: n}, err
}
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
func (c Close) Find(ctx context.Context, env *Env, _ string) effect.Result {
	return look(env, func(gh closeAPI) effect.Result { return gh.FindClosed(ctx, env.Repo, c.Number) })
}
func (c Close) Create(ctx context.Context, env *Env, _ string) (effect.Artifact, error) {
	gh, err := use[closeAPI](env)
	if err != nil {
		return effect.Artifact{}, err
	}
	if ctx, err = c.Guard.before(ctx); err != nil {
		return effect.Artifact{}, err
	}
	if c.PR {
		return gh.ClosePR(ctx, env.Repo, c.Number)
	}
	reason := c.Reason
	if reason == "" {
		reason = "duplicate"
	}
	return gh.CloseIssue(ctx, env.Repo, c.Number, reason)
}

// closeAPI is what a close asks of GitHub. FindClosed answers found when
// the issue or pull request is closed already.
type closeAPI interface {
	FindClosed(ctx context.Context, r ghcheck.Repo, number int) effect.Result
	CloseIssue(ctx context.Context, r ghcheck.Repo, number int, reason string) (effect.Artifact, error)
	ClosePR(ctx context.Context, r ghcheck.Repo, number int) (effect.Artifact, error)
}

var (
	_ closeAPI = (*ghcheck.Client)(nil)
	_ Spec     = Close{}
)

// Guard is a last check of a close or a delete, run inside Create after
// every ledger write of the attempt, right before the request: it may wait
// (for the write pacer, ghcheck.Client.Pace) and returns the context to
// send the request with. Its error sends nothing: the entry fails, and
// the error (its cause wrapped) ends the action.
type Guard func(ctx context.Context) (context.Context, error)

func (g Guard) before(ctx context.Context) (context.Context, error) {
	if g == nil {
		return ctx, nil
	}
	out, err := g(ctx)
	if err != nil {
		return ctx, &effect.CreateError{Class: effect.ClassNotSent, Err: err}
	}
	return out, nil
}
