package reconcile

import (
	"context"
	"fmt"
	"strconv"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
)

// DeleteComment removes a comment: a duplicate `ghonce audit` found, whose
// text the kept comment holds byte for byte (after audit.NormalizeBody). Its artifact is the comment's
// absence. Find trusts a 404 for the comment only in a repository the
// token can read (GET .../issues/comments/{id}, then GET /repos/{o}/{r}):
// found when it is gone, absent while it exists. Deleting what is gone
// changes nothing, so a repeated request is safe.
type DeleteComment struct {
	ID int64 `json:"id"`
	// Number is the comment's issue or pull request, for people.
	Number int `json:"number,omitempty"`
	// Guard, if set, runs right before the DELETE (see Guard).
	Guard Guard `json:"-"`
}

func init() { register[DeleteComment]() }

func (DeleteComment) Kind() string { return "comment-delete" }

// Face: see Face. Only `ghonce audit --apply` deletes.
func (DeleteComment) Face() Face       { return Face{} }
func (d DeleteComment) Target() string { return strconv.FormatInt(d.ID, 10) }

func (DeleteComment) aim(id string) (Spec, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return nil, &InvalidError{Field: "id", Problem: fmt.Sprintf("%q is not a number", id), Want: "a comment's id"}
	}
	return DeleteComment{ID: n}, ghcheck.CheckCommentID(n)
}
func (d DeleteComment) Validate(string) error { return ghcheck.CheckCommentID(d.ID) }
func (d DeleteComment) Find(ctx context.Context, env *Env, _ string) effect.Result {
	return look(env, func(gh deleteCommentAPI) effect.Result { return gh.FindCommentGone(ctx, env.Repo, d.ID) })
}
func (d DeleteComment) Create(ctx context.Context, env *Env, _ string) (effect.Artifact, error) {
	gh, err := use[deleteCommentAPI](env)
	if err != nil {
		return effect.Artifact{}, err
	}
	if ctx, err = d.Guard.before(ctx); err != nil {
		return effect.Artifact{}, err
	}
	return gh.DeleteComment(ctx, env.Repo, d.ID)
}

// deleteCommentAPI is what a comment's delete asks of GitHub.
// FindCommentGone answers found when the comment is gone already.
type deleteCommentAPI interface {
	FindCommentGone(ctx context.Context, r ghcheck.Repo, id int64) effect.Result
	DeleteComment(ctx context.Context, r ghcheck.Repo, id int64) (effect.Artifact, error)
}

var (
	_ deleteCommentAPI = (*ghcheck.Client)(nil)
	_ Spec             = DeleteComment{}
)
