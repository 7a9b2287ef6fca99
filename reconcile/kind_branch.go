package reconcile

import (
	"context"
	"fmt"
	"strings"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger"
)

// Branch creates a branch at a commit. Found by an exact ref read; a branch
// of that name at an unrelated commit is a conflict, never adopted. A ref
// has no author, so a branch at a later commit (one that descends from
// SHA) is adopted only with evidence that ghonce made it: see adoptBranch.
type Branch struct {
	Name string `json:"name"`
	SHA  string `json:"sha"`
}

func (Branch) Kind() string            { return "branch" }
func (Branch) DefaultStep() string     { return "branch-create" }
func (b Branch) Target() string        { return b.Name }
func (b Branch) Validate(string) error { return ghcheck.CheckBranch(b.Name, b.SHA) }
func (b Branch) Find(ctx context.Context, env *Env, _ string) effect.Result {
	return adoptBranch(b, env, env.GitHub.FindBranch(ctx, env.Repo, b.Name, b.SHA))
}
func (b Branch) Create(ctx context.Context, env *Env, _ string) (effect.Artifact, error) {
	return env.GitHub.CreateBranch(ctx, env.Repo, b.Name, b.SHA)
}

var _ Spec = Branch{}

// adoptBranch applies the rule for a branch found on GitHub (ghcheck's
// FindBranch answers found for the exact start commit and for any commit
// that descends from it):
//
//   - At exactly b.SHA it is ours to record: creating it would have made
//     that very ref, so recording it adopts nothing a run did not ask for.
//   - At a later commit it is ours only when this ledger holds an earlier
//     attempt of this key that may have created it (env.Prior is
//     attempting: the intent to create it at b.SHA was recorded before the
//     request left, and the commits on top are the agent's pushes). With no
//     such attempt (a key this ledger never tried, or a ledger that was lost)
//     nothing shows ghonce made it: a stranger may have, and it is a
//     conflict, not adopted.
func adoptBranch(b Branch, env *Env, res effect.Result) effect.Result {
	if res.State != effect.Found || strings.EqualFold(res.Artifact.SHA, b.SHA) || env.Prior == ledger.Attempting {
		return res
	}
	return effect.Result{State: effect.Conflict, Err: fmt.Errorf(
		"branch %s exists at %.12s, a commit after the start %.12s, and nothing shows ghonce made it (this ledger has no earlier attempt of this key): someone else may have; "+
			"if it is this task's branch, start from it (--from %s) to record it as it is, otherwise choose another name", b.Name, res.Artifact.SHA, b.SHA, b.Name)}
}
