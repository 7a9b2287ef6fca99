package reconcile

import (
	"context"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
)

// Branch creates a branch at a commit. Found by an exact ref read; a branch
// of that name at an unrelated commit is a conflict, never adopted.
type Branch struct {
	Name string `json:"name"`
	SHA  string `json:"sha"`
}

func (Branch) Kind() string            { return "branch" }
func (b Branch) Target() string        { return b.Name }
func (b Branch) Validate(string) error { return ghcheck.CheckBranch(b.Name, b.SHA) }
func (b Branch) Find(ctx context.Context, env *Env, _ string) effect.Result {
	return env.GitHub.FindBranch(ctx, env.Repo, b.Name, b.SHA)
}
func (b Branch) Create(ctx context.Context, env *Env, _ string) (effect.Artifact, error) {
	return env.GitHub.CreateBranch(ctx, env.Repo, b.Name, b.SHA)
}

var _ Spec = Branch{}
