package reconcile

import (
	"context"
	"time"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
)

// GitHub is what the engine and the kinds need from GitHub. *ghcheck.Client
// implements it; engine tests may pass a fake that makes no HTTP request.
//
// Find methods answer with exactly one of found, absent, unknown or
// conflict, and must prove absence only with consistent reads; Create
// methods return an *effect.CreateError whose Class says whether anything
// may exist.
type GitHub interface {
	// Login returns the token's identity; an error matching
	// ghcheck.ErrCredentials means no rerun can fix it.
	Login(ctx context.Context) (string, error)

	FindPR(ctx context.Context, r ghcheck.Repo, q ghcheck.PRQuery) effect.Result
	CreatePR(ctx context.Context, r ghcheck.Repo, key string, p ghcheck.NewPR) (effect.Artifact, error)
	// MendPRLabels adds labels a crash left off a found PR; it returns a
	// warning, never an error.
	MendPRLabels(ctx context.Context, r ghcheck.Repo, a effect.Artifact, key string, labels []string) string

	FindIssue(ctx context.Context, r ghcheck.Repo, q ghcheck.IssueQuery) effect.Result
	CreateIssue(ctx context.Context, r ghcheck.Repo, key string, p ghcheck.NewIssue) (effect.Artifact, error)

	// FindCommentSince reads only comments updated at or after since
	// (zero: the whole thread).
	FindCommentSince(ctx context.Context, r ghcheck.Repo, number int, key string, since time.Time) effect.Result
	CreateComment(ctx context.Context, r ghcheck.Repo, number int, key, body string) (effect.Artifact, error)

	FindBranch(ctx context.Context, r ghcheck.Repo, name, sha string) effect.Result
	// FindBranchFrom resolves ref to a commit while it reads the branch
	// (one round trip) and judges the branch against that commit.
	FindBranchFrom(ctx context.Context, r ghcheck.Repo, name, ref string) (sha string, res effect.Result)
	CreateBranch(ctx context.Context, r ghcheck.Repo, name, sha string) (effect.Artifact, error)

	FindFile(ctx context.Context, r ghcheck.Repo, branch, path string, content []byte) effect.Result
	PutFile(ctx context.Context, r ghcheck.Repo, branch, path, message string, content []byte, replaces string) (effect.Artifact, error)

	// The settling kinds (Close, DeleteComment, DeleteBranch): each Find
	// answers found when the effect is in place already.
	FindClosed(ctx context.Context, r ghcheck.Repo, number int) effect.Result
	CloseIssue(ctx context.Context, r ghcheck.Repo, number int, reason string) (effect.Artifact, error)
	ClosePR(ctx context.Context, r ghcheck.Repo, number int) (effect.Artifact, error)
	FindCommentGone(ctx context.Context, r ghcheck.Repo, id int64) effect.Result
	DeleteComment(ctx context.Context, r ghcheck.Repo, id int64) (effect.Artifact, error)
	FindBranchGone(ctx context.Context, r ghcheck.Repo, name, sha string) effect.Result
	DeleteBranch(ctx context.Context, r ghcheck.Repo, name, sha string) (effect.Artifact, error)
}

var _ GitHub = (*ghcheck.Client)(nil)
