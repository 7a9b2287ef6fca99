package reconcile

import (
	"context"
	"strings"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/taskkey"
)

// PR opens a pull request. Tags: the head branch, the key's label, the marker.
type PR struct {
	Base   string   `json:"base"`
	Head   string   `json:"head"`
	Title  string   `json:"title"`
	Body   string   `json:"body"`
	Draft  bool     `json:"draft,omitempty"`
	Labels []string `json:"labels,omitempty"`
}

func init() { register[PR]() }

func (PR) Kind() string { return "pr" }

// Face: see Face. GitHub's create takes no labels: Mend adds them.
func (PR) Face() Face {
	labels := labelsField
	labels.MCP = "-" // create_pull_request takes none
	return Face{
		Write:    "POST repos/{owner}/{repo}/pulls",
		Unwired:  []string{"labels"},
		Refuses:  []string{"head_repo", "issue", "maintainer_can_modify"},
		ReadBack: []string{"repos/{owner}/{repo}/pulls/{number}"},
		CLI:      []string{"pr create"}, Gh: []string{"pr create"}, MCP: []string{"create_pull_request"},
		Tools:      map[string]effect.Tool{"create_pull_request": {OnePer: "base branch", What: "PR #{result.number}"}},
		Does:       "Open a pull request",
		Permission: "`pull-requests: write` (labels on a PR go through the issues API, which accepts it); `contents: write` if the job also pushes the head branch",
		Long:       prLong,
		Audit: &effect.Audit{Rank: 2, Listing: "prs", Ref: "#{number}", Same: []string{"base", "head"}, Reactors: true,
			Detail: "the same author, the same base, heads at the same commit or with the same tree", Settle: "close-pr"},
		Example: `{"base": "main", "head": "fix", "title": "Fix the crash on start", "body": "Closes #1.", "labels": ["bug"]}`,
		Fields: []effect.Field{
			{Name: "base", Short: "B", Help: "branch to merge into (required)", Required: true},
			{Name: "head", Short: "H", Help: "branch with the changes, or OWNER:BRANCH for a fork (required)", Required: true},
			titleField, bodyField,
			{Name: "draft", Short: "d", Help: "open as a draft"},
			labels,
		},
	}
}

// prLong is the help of the kind's verbs: see Face.Long.
const prLong = `Open a pull request once per (task, step, repository, base).

The key does not include the head, title or body: a retry after a crash that
rewords the body or pushed to another branch gets the first pull request back
(outcome "found" or "skipped", payload_changed true, changed naming the fields
that differ), never a second one. --on-change says what then: auto (default,
or GHONCE_ON_CHANGE: a reworded retry is warned of, and a title that reads as
another pull request fails with exit 1, naming the first and the --step to
use; docs/design/same-act.md), warn (a warning, the pull request as it is),
fail (exit 1, nothing changed) or update (edit its title and body to this
run's; its head cannot move). A second pull request in the same task needs
its own --step.

Prints the pull request's URL on stdout; with --json one object with key,
outcome (created|found|skipped), number, url, payload_changed, changed and
updated.`

// DefaultStep: see DefaultStepper.
func (PR) DefaultStep() string { return "pr-create" }
func (p PR) Target() string    { return p.Base }
func (PR) aim(base string) (Spec, error) {
	if base == "" {
		return nil, empty("base", "the branch to merge into")
	}
	return PR{Base: base}, taskkey.CheckBranchName(base)
}
func (p PR) Validate(key string) error {
	if _, err := p.aim(p.Base); err != nil {
		return err
	}
	switch {
	case p.Head == "":
		return empty("head", "the branch that holds the change")
	case blank(p.Title):
		return empty("title", noTitle)
	}
	if err := ghcheck.CheckHead(p.Head); err != nil {
		return err
	}
	return ghcheck.CheckCreate(key, p.Body, p.Labels)
}
func (p PR) Find(ctx context.Context, env *Env, key string) effect.Result {
	return p.FindWithPrior(ctx, env, key, nil)
}

// FindWithPrior looks on this run's head and on the head an earlier attempt
// stored, in one FindPR: the label and newest-PR reads are made once.
func (p PR) FindWithPrior(ctx context.Context, env *Env, key string, prior Spec) effect.Result {
	q := ghcheck.PRQuery{Key: key, Base: p.Base, Heads: []string{p.Head}, Since: env.Since, SkipRecent: env.NeverAttempted}
	if old, ok := prior.(*PR); ok && old.Base == p.Base {
		q.Heads = append(q.Heads, old.Head)
	}
	return look(env, func(gh prAPI) effect.Result { return gh.FindPR(ctx, env.Repo, q) })
}
func (p PR) Create(ctx context.Context, env *Env, key string) (effect.Artifact, error) {
	return send(env, func(gh prAPI) (effect.Artifact, error) {
		return gh.CreatePR(ctx, env.Repo, key, ghcheck.NewPR{Base: p.Base, Head: p.Head, Title: p.Title, Body: p.Body, Draft: p.Draft, Labels: p.Labels, LabelLater: true})
	})
}

// Mend adds the PR's labels: after this run's create (GitHub's create
// takes no labels; the engine labels it once the create answered, see
// Config.AnswerBeforeTags), and on a PR found without them (a crash
// between creating it and labelling it).
func (p PR) Mend(ctx context.Context, env *Env, key string, art effect.Artifact) string {
	gh, err := use[prAPI](env)
	if err != nil {
		return err.Error()
	}
	return gh.MendPRLabels(ctx, env.Repo, art, key, p.Labels)
}

// Update edits the pull request's title and body; its head cannot move.
func (p PR) Update(ctx context.Context, env *Env, key string, art effect.Artifact, changed []string) (effect.Artifact, []string, error) {
	kept := notTitleOrBody(changed)
	if len(kept) == len(changed) {
		return art, kept, nil
	}
	got, err := send(env, func(gh prEditor) (effect.Artifact, error) {
		return gh.UpdatePR(ctx, env.Repo, art.Number, key, p.Title, p.Body)
	})
	return got, kept, err
}

// Lookup: Reconcile finds pull requests by their marker in one listing of
// the repository's issues and pull requests changed since (FindMany).
func (PR) Lookup(key string) ghcheck.Lookup { return ghcheck.Lookup{Kind: ghcheck.LookupPR, Key: key} }

// KeyLabeled: the key's label is one of a pull request's tags.
func (PR) KeyLabeled() {}

// prAPI is what a PR asks of GitHub; prEditor, what --on-change update
// asks. MendPRLabels adds labels a crash left off a found PR and returns a
// warning, never an error.
type prAPI interface {
	FindPR(ctx context.Context, r ghcheck.Repo, q ghcheck.PRQuery) effect.Result
	CreatePR(ctx context.Context, r ghcheck.Repo, key string, p ghcheck.NewPR) (effect.Artifact, error)
	MendPRLabels(ctx context.Context, r ghcheck.Repo, a effect.Artifact, key string, labels []string) string
}
type prEditor interface {
	UpdatePR(ctx context.Context, r ghcheck.Repo, number int, key, title, body string) (effect.Artifact, error)
}

var (
	_ prAPI    = (*ghcheck.Client)(nil)
	_ prEditor = (*ghcheck.Client)(nil)
)

var (
	_ Spec        = PR{}
	_ PriorFinder = PR{}
	_ Mender      = PR{}
	_ BatchFinder = PR{}
	_ Updatable   = PR{}
	_ KeyLabeled  = PR{}
)

// AsFound is the PR as GitHub shows it: its title, body (less the
// marker) and head; base, draft and labels are this run's.
func (p PR) AsFound(key, repoOwner string, art effect.Artifact) (Spec, bool) {
	if art.Title == "" && art.Head == "" {
		return nil, false
	}
	f := p
	f.Title, f.Body = art.Title, withoutMarker(key, art.Body)
	// Head as this run spells it when it names the same branch: a bare
	// branch is the base repository's.
	if owner, branch, ok := strings.Cut(art.Head, ":"); ok {
		same := strings.EqualFold(art.Head, p.Head) || !strings.Contains(p.Head, ":") && branch == p.Head && strings.EqualFold(owner, repoOwner)
		if !same {
			f.Head = art.Head
		}
	}
	return f, true
}
