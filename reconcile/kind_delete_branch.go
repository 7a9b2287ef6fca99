package reconcile

import (
	"context"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/taskkey"
)

// DeleteBranch removes a stray branch: one of several `ghonce audit` found
// at one commit, used by no pull request. Its artifact is the branch's
// absence. Find trusts an exact ref read and the pull requests with the
// branch as head (ghcheck.FindBranchGone): found when it is gone, absent
// while it is at SHA with no pull request, a conflict when it moved or a
// pull request uses it (someone's work, never deleted).
type DeleteBranch struct {
	Name string `json:"name"`
	SHA  string `json:"sha"`
}

func init() { register[DeleteBranch]() }

func (DeleteBranch) Kind() string { return "branch-delete" }

// Face: see Face. Only `ghonce audit --apply` deletes.
func (DeleteBranch) Face() Face       { return Face{} }
func (d DeleteBranch) Target() string { return d.Name }

func (DeleteBranch) aim(name string) (Spec, error) {
	return DeleteBranch{Name: name}, taskkey.CheckBranchName(name)
}
func (d DeleteBranch) Validate(string) error { return ghcheck.CheckBranch(d.Name, d.SHA) }
func (d DeleteBranch) Find(ctx context.Context, env *Env, _ string) effect.Result {
	return look(env, func(gh deleteBranchAPI) effect.Result { return gh.FindBranchGone(ctx, env.Repo, d.Name, d.SHA) })
}
func (d DeleteBranch) Create(ctx context.Context, env *Env, _ string) (effect.Artifact, error) {
	return send(env, func(gh deleteBranchAPI) (effect.Artifact, error) {
		return gh.DeleteBranch(ctx, env.Repo, d.Name, d.SHA)
	})
}

// deleteBranchAPI is what a branch's delete asks of GitHub.
// FindBranchGone answers found when the branch is gone already.
type deleteBranchAPI interface {
	FindBranchGone(ctx context.Context, r ghcheck.Repo, name, sha string) effect.Result
	DeleteBranch(ctx context.Context, r ghcheck.Repo, name, sha string) (effect.Artifact, error)
}

var (
	_ deleteBranchAPI = (*ghcheck.Client)(nil)
	_ Spec            = DeleteBranch{}
)
