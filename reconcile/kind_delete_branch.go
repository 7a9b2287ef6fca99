package reconcile

import (
	"context"
	"errors"
	"fmt"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
)

// BranchDeleter is a GitHub that can read, check and delete branches
// (*ghcheck.Client is one).
type BranchDeleter interface {
	BranchHead(ctx context.Context, r ghcheck.Repo, name string) (sha string, ok bool, err error)
	PullsForHead(ctx context.Context, r ghcheck.Repo, branch string) ([]int, error)
	DeleteBranch(ctx context.Context, r ghcheck.Repo, name string) error
}

var _ BranchDeleter = (*ghcheck.Client)(nil)

// DeleteBranch removes a stray branch (`ghonce audit`: one of several at
// one commit, used by no pull request). Its artifact is the branch's
// absence: found when it is gone, created when this run deleted it. A
// branch that moved from SHA, or that a pull request now uses, is a
// conflict: someone else's work, never deleted.
type DeleteBranch struct {
	Name string `json:"name"`
	SHA  string `json:"sha"`
}

func (DeleteBranch) Kind() string            { return "branch-delete" }
func (d DeleteBranch) Target() string        { return d.Name }
func (d DeleteBranch) Validate(string) error { return ghcheck.CheckBranch(d.Name, d.SHA) }

func branchDeleter(env *Env) (BranchDeleter, error) {
	if c, ok := env.GitHub.(BranchDeleter); ok {
		return c, nil
	}
	return nil, errors.New("this GitHub client cannot delete branches")
}

// Find reads the branch exactly (GET .../git/ref/heads/{name}) and, while
// it is there at SHA, every pull request with it as head (GET
// .../pulls?head=OWNER:NAME&state=all): both consistent.
func (d DeleteBranch) Find(ctx context.Context, env *Env, _ string) effect.Result {
	gh, err := branchDeleter(env)
	if err != nil {
		return effect.Result{State: effect.Unknown, Err: err}
	}
	sha, ok, err := gh.BranchHead(ctx, env.Repo, d.Name)
	switch {
	case err != nil:
		return effect.Result{State: effect.Unknown, Err: err}
	case !ok:
		return effect.Result{State: effect.Found, Artifact: effect.Artifact{SHA: d.SHA}}
	case sha != d.SHA:
		return effect.Result{State: effect.Conflict, Err: fmt.Errorf("branch %s moved to %.12s since it was found stray at %.12s: someone pushed; not deleted", d.Name, sha, d.SHA)}
	}
	prs, err := gh.PullsForHead(ctx, env.Repo, d.Name)
	if err != nil {
		return effect.Result{State: effect.Unknown, Err: err}
	}
	if len(prs) > 0 {
		return effect.Result{State: effect.Conflict, Err: fmt.Errorf("branch %s is the head of pull request #%d now: not deleted", d.Name, prs[0])}
	}
	return effect.Result{State: effect.Absent}
}

func (d DeleteBranch) Create(ctx context.Context, env *Env, _ string) (effect.Artifact, error) {
	gh, err := branchDeleter(env)
	if err != nil {
		return effect.Artifact{}, &effect.CreateError{Class: effect.ClassNotSent, Err: err}
	}
	if err := gh.DeleteBranch(ctx, env.Repo, d.Name); err != nil {
		return effect.Artifact{}, err
	}
	return effect.Artifact{SHA: d.SHA}, nil
}

var _ Spec = DeleteBranch{}
