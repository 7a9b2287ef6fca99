package reconcile

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/taskkey"
)

// The kinds. Each is a description: its fields are the payload stored in the
// ledger (so `ghonce reconcile` can look for it later without the original
// command line), Target is its part of the key, and Find/Create say how to
// look for and make its artifact.

// PR opens a pull request. Tags: the head branch, the key's label, the marker.
type PR struct {
	Base   string   `json:"base"`
	Head   string   `json:"head"`
	Title  string   `json:"title"`
	Body   string   `json:"body"`
	Draft  bool     `json:"draft,omitempty"`
	Labels []string `json:"labels,omitempty"`
}

func (PR) Kind() string     { return "pr" }
func (p PR) Target() string { return p.Base }
func (p PR) Validate(key string) error {
	switch {
	case p.Base == "":
		return errors.New("base branch is empty: pass --base")
	case p.Head == "":
		return errors.New("head branch is empty: pass --head")
	case p.Title == "":
		return errors.New("title is empty: pass --title")
	}
	if err := taskkey.CheckBranchName(p.Base); err != nil {
		return err
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
	q := ghcheck.PRQuery{Key: key, Base: p.Base, Heads: []string{p.Head}, Since: env.Since, SkipRecent: env.NeverAttempted, ProbeLabel: env.probeLabel()}
	if old, ok := prior.(*PR); ok && old.Base == p.Base {
		q.Heads = append(q.Heads, old.Head)
	}
	return env.GitHub.FindPR(ctx, env.Repo, q)
}
func (p PR) Create(ctx context.Context, env *Env, key string) (effect.Artifact, error) {
	return env.GitHub.CreatePR(ctx, env.Repo, key, ghcheck.NewPR{Base: p.Base, Head: p.Head, Title: p.Title, Body: p.Body, Draft: p.Draft, Labels: p.Labels, KeyLabel: env.keyLabel()})
}

// Mend adds the labels a crash between creating the PR and labelling it
// left off.
func (p PR) Mend(ctx context.Context, env *Env, key string, art effect.Artifact) string {
	return env.GitHub.MendPRLabels(ctx, env.Repo, art, key, p.Labels)
}

// Issue files an issue. Tags: the key's label (set atomically at creation) and the marker.
type Issue struct {
	Title  string   `json:"title"`
	Body   string   `json:"body"`
	Labels []string `json:"labels,omitempty"`
}

func (Issue) Kind() string   { return "issue" }
func (Issue) Target() string { return "" }
func (i Issue) Validate(key string) error {
	if i.Title == "" {
		return errors.New("title is empty: pass --title")
	}
	return ghcheck.CheckCreate(key, i.Body, i.Labels)
}
func (i Issue) Find(ctx context.Context, env *Env, key string) effect.Result {
	return env.GitHub.FindIssue(ctx, env.Repo, ghcheck.IssueQuery{Key: key, ProbeLabel: env.probeLabel()})
}
func (i Issue) Create(ctx context.Context, env *Env, key string) (effect.Artifact, error) {
	return env.GitHub.CreateIssue(ctx, env.Repo, key, ghcheck.NewIssue{Title: i.Title, Body: i.Body, Labels: i.Labels, KeyLabel: env.keyLabel()})
}

// Comment comments on an issue or pull request. GitHub has no uniqueness
// for comments: the marker, read back from every page of the thread, is
// the only tag.
type Comment struct {
	Number int    `json:"number"`
	Body   string `json:"body"`
}

func (Comment) Kind() string     { return "comment" }
func (c Comment) Target() string { return strconv.Itoa(c.Number) }
func (c Comment) Validate(key string) error {
	if err := ghcheck.CheckIssueNumber(c.Number); err != nil {
		return err
	}
	if c.Body == "" {
		return errors.New("body is empty: pass --body or --body-file")
	}
	return ghcheck.CheckCreate(key, c.Body, nil)
}
func (c Comment) Find(ctx context.Context, env *Env, key string) effect.Result {
	return env.GitHub.FindCommentSince(ctx, env.Repo, c.Number, key, env.Since)
}
func (c Comment) Create(ctx context.Context, env *Env, key string) (effect.Artifact, error) {
	return env.GitHub.CreateComment(ctx, env.Repo, c.Number, key, c.Body)
}

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

// File writes a file on a branch through the contents API. Found when the
// file already has exactly the intended content (git blob hashes compared).
type File struct {
	Branch  string `json:"branch"`
	Path    string `json:"path"`
	Message string `json:"message"`
	Content []byte `json:"content"`
	// Replaces, when set, is the blob SHA of the file the caller read and
	// means to replace: if the file on the branch has changed since (and
	// does not already hold Content), GitHub refuses the write instead of
	// ghonce overwriting someone else's change. Empty: replace whatever is
	// there.
	Replaces string `json:"replaces,omitempty"`
}

func (File) Kind() string     { return "file" }
func (f File) Target() string { return f.Branch + ":" + f.Path }
func (f File) Validate(string) error {
	if err := ghcheck.CheckFile(f.Branch, f.Path); err != nil {
		return err
	}
	if err := ghcheck.CheckCommitMessage(f.Message); err != nil {
		return err
	}
	if f.Replaces != "" && !taskkey.IsCommitSHA(f.Replaces) {
		return fmt.Errorf("invalid blob SHA %q to replace: want the 40 lower-case hex digits GitHub gives a file's sha", f.Replaces)
	}
	return nil
}
func (f File) Find(ctx context.Context, env *Env, _ string) effect.Result {
	return env.GitHub.FindFile(ctx, env.Repo, f.Branch, f.Path, f.Content)
}
func (f File) Create(ctx context.Context, env *Env, _ string) (effect.Artifact, error) {
	return env.GitHub.PutFile(ctx, env.Repo, f.Branch, f.Path, f.Message, f.Content, f.Replaces)
}
