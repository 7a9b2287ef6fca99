package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/taskkey"
)

// Branch creates a branch at a commit. Found by an exact ref read; a branch
// of that name at an unrelated commit is a conflict, never adopted. A ref
// has no author, so a branch at a later commit (one that descends from
// SHA) is adopted only with evidence that ghonce made it: see adoptBranch.
//
// Without SHA, From names the branch, tag or commit to start from ("HEAD":
// the default branch): the commit is chosen on GitHub as the branch is
// looked for, in the same round trip (Choose), and recorded in the ledger
// before the create. A rerun chooses again from its own From, never from
// what the ledger recorded: a branch an earlier attempt of the key may
// have made at From's head of then (a commit From's head now descends
// from) is found (adoptBranch); one that is absent is made at From's head
// now.
type Branch struct {
	Name string `json:"name"`
	SHA  string `json:"sha"`
	From string `json:"from,omitempty"`
}

func init() { register[Branch]() }

func (Branch) Kind() string { return "branch" }

// Face: see Face. From is ghonce's own: the transport and gh carry a
// commit.
func (Branch) Face() Face {
	return Face{
		Write:    "POST repos/{owner}/{repo}/git/refs",
		Wire:     map[string]string{"ref": "refs/heads/{name}"},
		Unwired:  []string{"from"},
		ReadBack: []string{"repos/{owner}/{repo}/git/ref/heads/{name}"},
		CLI:      []string{"branch create"}, MCP: []string{"create_branch"},
		Tools:      map[string]effect.Tool{"create_branch": {OnePer: "branch name", What: "branch {name} at {result.sha:12}"}},
		Does:       "Create a branch",
		Permission: "`contents: write`",
		Long:       branchLong,
		Audit:      &effect.Audit{Rank: 7, Ref: "branch {name}"},
		Example:    `{"name": "release-prep", "from": "main"}`,
		Fields: []effect.Field{
			{Name: "name", Arg: "NAME", MCP: "branch", Input: "branch", Help: "the branch to create", Required: true},
			{Name: "sha", Help: "commit the branch points at", MCP: "-", Input: "-"},
			{Name: "from", Help: "branch, tag or commit to start from (resolved on GitHub)", MCP: "from_branch"},
		},
	}
}

// branchLong is the help of the kind's verbs: see Face.Long.
const branchLong = `Create a branch once per (task, step, repository, name).

The branch is found by an exact ref read. If it exists at the intended commit,
or at a commit that descends from it, it counts as done; a branch of that name
at an unrelated commit is someone else's: exit 1, never adopted.

--from REF is resolved on GitHub while the branch is looked for (one round
trip for both); the commit REF names then is recorded in the ledger before the
branch is created. A rerun resolves REF again, never starting from a commit the
ledger recorded: a branch an earlier attempt made at REF's head of then (which
REF's head now descends from) is found; one it did not make is created at REF's
head now.
With neither --sha nor --from, the branch starts from the default branch.`

func (Branch) DefaultStep() string { return "branch-create" }
func (b Branch) Target() string    { return b.Name }

// withDefaults: a branch that names neither its commit nor a start starts,
// as GitHub's own clients' do, from the default branch's head (GET
// /repos/{o}/{r}/commits/HEAD), whichever front it comes through.
func (b Branch) withDefaults() Spec {
	if b.SHA == "" && b.From == "" {
		b.From = "HEAD"
	}
	return b
}

func (Branch) aim(name string) (Spec, error) {
	return Branch{Name: name}, taskkey.CheckBranchName(name)
}
func (b Branch) Validate(string) error {
	if b.SHA == "" && b.From != "" {
		if err := taskkey.CheckBranchName(b.Name); err != nil {
			return err
		}
		return checkFrom(b.From)
	}
	return ghcheck.CheckBranch(b.Name, b.SHA)
}
func (b Branch) Find(ctx context.Context, env *Env, key string) effect.Result {
	if b.SHA == "" {
		_, res := b.Choose(ctx, env, key)
		return res
	}
	return b.find(ctx, env)
}
func (b Branch) Create(ctx context.Context, env *Env, _ string) (effect.Artifact, error) {
	return send(env, func(gh branchAPI) (effect.Artifact, error) { return gh.CreateBranch(ctx, env.Repo, b.Name, b.SHA) })
}

// Chooses: a branch without its commit chooses it from From.
func (b Branch) Chooses() bool { return b.SHA == "" }

// Choose resolves From while it looks for the branch (one round trip) and
// returns the description with the commit it chose.
func (b Branch) Choose(ctx context.Context, env *Env, _ string) (Spec, effect.Result) {
	if b.SHA != "" {
		return b, b.find(ctx, env)
	}
	gh, err := use[branchAPI](env)
	if err != nil {
		return b, effect.Result{State: effect.Unknown, Err: err}
	}
	sha, res := gh.FindBranchFrom(ctx, env.Repo, b.Name, b.From)
	if sha == "" {
		if res.State == effect.Conflict {
			res.Err = &refusal{res.Err} // From names no commit: fix it
		}
		return b, res
	}
	b.SHA = sha
	return b, adoptBranch(b, env, res)
}

// checkFrom refuses a start ref that cannot name a commit: empty, or with
// white space or control characters.
func checkFrom(ref string) error {
	if strings.TrimSpace(ref) == "" {
		return empty("from", "the branch, tag or commit to start from")
	}
	for _, r := range ref {
		if r <= ' ' || r == 0x7f {
			return &InvalidError{Field: "from", Problem: fmt.Sprintf("%q holds white space or a control character", ref), Want: "a branch, tag or commit"}
		}
	}
	return nil
}

func (b Branch) find(ctx context.Context, env *Env) effect.Result {
	return look(env, func(gh branchAPI) effect.Result {
		return adoptBranch(b, env, gh.FindBranch(ctx, env.Repo, b.Name, b.SHA))
	})
}

// branchAPI is what a branch asks of GitHub. FindBranchFrom resolves ref
// to a commit while it reads the branch (one round trip) and judges the
// branch against that commit.
type branchAPI interface {
	FindBranch(ctx context.Context, r ghcheck.Repo, name, sha string) effect.Result
	FindBranchFrom(ctx context.Context, r ghcheck.Repo, name, ref string) (sha string, res effect.Result)
	CreateBranch(ctx context.Context, r ghcheck.Repo, name, sha string) (effect.Artifact, error)
}

var (
	_ branchAPI = (*ghcheck.Client)(nil)
	_ Spec      = Branch{}
	_ Chooser   = Branch{}
)

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
//   - At an earlier commit of the start's history (From's head moved on
//     since), on the same condition: the earlier attempt chose From's head
//     of then. GitHub's history proves that much; what the ledger says
//     that attempt chose proves nothing (anyone who can push may have
//     written it), so it is not read.
func adoptBranch(b Branch, env *Env, res effect.Result) effect.Result {
	if res.State == effect.Conflict && errors.Is(res.Err, ghcheck.ErrBranchBehind) && env.Prior == ledger.Attempting && b.From != "" {
		return effect.Result{State: effect.Found, Artifact: res.Artifact}
	}
	if res.State != effect.Found || strings.EqualFold(res.Artifact.SHA, b.SHA) || env.Prior == ledger.Attempting {
		return res
	}
	return effect.Result{State: effect.Conflict, Err: fmt.Errorf(
		"branch %s exists at %.12s, a commit after the start %.12s, and nothing shows ghonce made it (no earlier attempt of this key): someone else may have; "+
			"if it is this task's branch, start it from %s to record it as it is, otherwise choose another name", b.Name, res.Artifact.SHA, b.SHA, b.Name)}
}
