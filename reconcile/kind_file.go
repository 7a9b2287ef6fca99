package reconcile

import (
	"context"
	"fmt"
	"strings"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/taskkey"
)

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

func init() { register[File]() }

func (File) Kind() string { return "file" }

// Face: see Face. GitHub's sha is the blob replaced.
func (File) Face() Face {
	return Face{
		Write:    "PUT repos/{owner}/{repo}/contents/{path...}",
		Wire:     map[string]string{"sha": "{replaces}"},
		Refuses:  []string{"author", "committer"},
		ReadBack: []string{"repos/{owner}/{repo}/contents/{path}?ref={branch}", "repos/{owner}/{repo}/commits/{branch}"},
		CLI:      []string{"file put"}, MCP: []string{"create_or_update_file"},
		Tools:      map[string]effect.Tool{"create_or_update_file": {OnePer: "branch and path", What: "file {path} on branch {branch}"}},
		Does:       "Write a file on a branch through the contents API",
		Permission: "`contents: write`",
		Long:       fileLong,
		Example:    `{"path": "CHANGELOG.md", "branch": "main", "message": "Start the changelog", "content": "IyBDaGFuZ2Vsb2c="}`,
		Fields: []effect.Field{
			{Name: "path", Arg: "PATH", Help: "the file's path in the repository", Required: true},
			{Name: "branch", Help: "branch to commit to (default: the repository's default branch)"},
			{Name: "message", Short: "m", Help: "commit message (required)", Required: true},
			{Name: "content", Help: "file content", File: true, Input: "content-file", Required: true},
			{Name: "replaces", Help: "blob SHA of the file as you read it: refuse to write if it has changed since (default: replace whatever is there)", MCP: "sha", Input: "-"},
		},
	}
}

// fileLong is the help of the kind's verbs: see Face.Long.
const fileLong = `Write a file on a branch once per (task, step, repository, branch, path).

It counts as done when the file on the branch already has exactly the intended
content (git blob hashes, computed locally); different content means not yet.

Without --branch, the file goes to the repository's default branch, read from
GitHub first; the key is the same as with --branch set to that branch (ghonce
key --kind file --target BRANCH:PATH prints it).`

// DefaultStep: see DefaultStepper.
func (File) DefaultStep() string { return "file-put" }
func (f File) Target() string    { return f.Branch + ":" + f.Path }

// complete: a file on no branch is written to the default branch.
func (f File) complete(ctx context.Context, gh DefaultBrancher, r ghcheck.Repo) (Spec, error) {
	if f.Branch != "" {
		return f, nil
	}
	var err error
	f.Branch, err = gh.DefaultBranch(ctx, r)
	return f, err
}

func (File) aim(target string) (Spec, error) {
	branch, path, _ := strings.Cut(target, ":") // a branch name holds no ":"
	return File{Branch: branch, Path: path}, ghcheck.CheckFile(branch, path)
}
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
	return look(env, func(gh fileAPI) effect.Result { return gh.FindFile(ctx, env.Repo, f.Branch, f.Path, f.Content) })
}
func (f File) Create(ctx context.Context, env *Env, _ string) (effect.Artifact, error) {
	return send(env, func(gh fileAPI) (effect.Artifact, error) {
		return gh.PutFile(ctx, env.Repo, f.Branch, f.Path, f.Message, f.Content, f.Replaces)
	})
}

// fileAPI is what a file asks of GitHub.
type fileAPI interface {
	FindFile(ctx context.Context, r ghcheck.Repo, branch, path string, content []byte) effect.Result
	PutFile(ctx context.Context, r ghcheck.Repo, branch, path, message string, content []byte, replaces string) (effect.Artifact, error)
}

var (
	_ fileAPI = (*ghcheck.Client)(nil)
	_ Spec    = File{}
)
