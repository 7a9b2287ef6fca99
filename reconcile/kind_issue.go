package reconcile

import (
	"context"
	"fmt"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
)

// Issue files an issue. Tags: the key's label (set atomically at creation) and the marker.
type Issue struct {
	Title  string   `json:"title"`
	Body   string   `json:"body"`
	Labels []string `json:"labels,omitempty"`
}

func init() { register[Issue]() }

func (Issue) Kind() string { return "issue" }

// Face: see Face. issue_write is github-mcp-server's tool whose method
// create is this kind's.
func (Issue) Face() Face {
	return Face{
		Write:    "POST repos/{owner}/{repo}/issues",
		Refuses:  []string{"assignee", "assignees", "milestone", "state", "state_reason", "type"},
		ReadBack: []string{"repos/{owner}/{repo}/issues/{number}"},
		CLI:      []string{"issue create"}, Gh: []string{"issue create"}, MCP: []string{"create_issue", "issue_write"},
		// create_issue: github-mcp-server's granular issue tool, kept as an
		// alias. Its schema lists no labels (issue_write's does).
		Tools: map[string]effect.Tool{
			"issue_write":  {Methods: map[string]string{"create": ""}, Pass: "a method other than create", OnePer: "repository", What: "issue #{result.number}"},
			"create_issue": {OnePer: "repository", What: "issue #{result.number}"},
		},
		Does:       "File an issue",
		Permission: "`issues: write`",
		Long:       issueLong,
		Audit: &effect.Audit{Rank: 1, Listing: "issues", Ref: "#{number}", Same: []string{"title", "body"}, Reactors: true,
			Detail: "the same author, the same normalised title and body", Settle: "close"},
		Example: `{"title": "The parser crashes on empty input", "body": "Seen on CI.", "labels": ["bug"]}`,
		Fields:  []effect.Field{titleField, bodyField, labelsField},
	}
}

// issueLong is the help of the kind's verbs: see Face.Long.
const issueLong = `File an issue once per (task, step, repository).

The issue carries the label ghonce:<key> (set when it is created) and a hidden
marker with the key; both are looked for before filing.`

// DefaultStep: see DefaultStepper.
func (Issue) DefaultStep() string { return "issue-create" }
func (Issue) Target() string      { return "" }

func (Issue) aim(target string) (Spec, error) {
	if target != "" {
		return nil, &InvalidError{Field: "target", Problem: fmt.Sprintf("is %q, but an issue's key has none", target), Want: "no target"}
	}
	return Issue{}, nil
}
func (i Issue) Validate(key string) error {
	if blank(i.Title) {
		return empty("title", noTitle)
	}
	return ghcheck.CheckCreate(key, i.Body, i.Labels)
}
func (i Issue) Find(ctx context.Context, env *Env, key string) effect.Result {
	return look(env, func(gh issueAPI) effect.Result { return gh.FindIssue(ctx, env.Repo, ghcheck.IssueQuery{Key: key}) })
}
func (i Issue) Create(ctx context.Context, env *Env, key string) (effect.Artifact, error) {
	return send(env, func(gh issueAPI) (effect.Artifact, error) {
		return gh.CreateIssue(ctx, env.Repo, key, ghcheck.NewIssue{Title: i.Title, Body: i.Body, Labels: i.Labels})
	})
}

// Update edits the issue's title and body.
func (i Issue) Update(ctx context.Context, env *Env, key string, art effect.Artifact, changed []string) (effect.Artifact, []string, error) {
	kept := notTitleOrBody(changed)
	if len(kept) == len(changed) {
		return art, kept, nil
	}
	got, err := send(env, func(gh issueEditor) (effect.Artifact, error) {
		return gh.UpdateIssue(ctx, env.Repo, art.Number, key, i.Title, i.Body)
	})
	return got, kept, err
}

// Lookup: Reconcile finds issues by their marker in one listing of the
// repository's issues and pull requests changed since (FindMany).
func (Issue) Lookup(key string) ghcheck.Lookup {
	return ghcheck.Lookup{Kind: ghcheck.LookupIssue, Key: key}
}

// KeyLabeled: the key's label is one of an issue's tags.
func (Issue) KeyLabeled() {}

// issueAPI is what an issue asks of GitHub; issueEditor, what --on-change
// update asks.
type issueAPI interface {
	FindIssue(ctx context.Context, r ghcheck.Repo, q ghcheck.IssueQuery) effect.Result
	CreateIssue(ctx context.Context, r ghcheck.Repo, key string, p ghcheck.NewIssue) (effect.Artifact, error)
}
type issueEditor interface {
	UpdateIssue(ctx context.Context, r ghcheck.Repo, number int, key, title, body string) (effect.Artifact, error)
}

var (
	_ issueAPI    = (*ghcheck.Client)(nil)
	_ issueEditor = (*ghcheck.Client)(nil)
	_ Spec        = Issue{}
	_ BatchFinder = Issue{}
	_ Updatable   = Issue{}
	_ KeyLabeled  = Issue{}
)

// AsFound is the issue as GitHub shows it: its title and body (less the
// marker); labels are this run's.
func (i Issue) AsFound(key, _ string, art effect.Artifact) (Spec, bool) {
	if art.Title == "" {
		return nil, false
	}
	f := i
	f.Title, f.Body = art.Title, withoutMarker(key, art.Body)
	return f, true
}
