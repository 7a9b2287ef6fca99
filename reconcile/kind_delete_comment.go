package reconcile

import (
	"context"
	"errors"
	"strconv"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
)

// CommentDeleter is a GitHub that can read and delete comments
// (*ghcheck.Client is one).
type CommentDeleter interface {
	CommentState(ctx context.Context, r ghcheck.Repo, id int64) effect.Result
	DeleteComment(ctx context.Context, r ghcheck.Repo, id int64) error
}

var _ CommentDeleter = (*ghcheck.Client)(nil)

// DeleteComment removes a comment: a duplicate `ghonce audit` found, whose
// text the kept comment holds byte for byte. Its artifact is the comment's
// absence: found when the comment is gone, created when this run deleted
// it. Deleting what is gone changes nothing, so a repeated request is
// safe.
type DeleteComment struct {
	ID int64 `json:"id"`
	// Number is the comment's issue or pull request, for messages.
	Number int `json:"number,omitempty"`
}

func (DeleteComment) Kind() string            { return "comment-delete" }
func (d DeleteComment) Target() string        { return strconv.FormatInt(d.ID, 10) }
func (d DeleteComment) Validate(string) error { return ghcheck.CheckCommentID(d.ID) }

func commentDeleter(env *Env) (CommentDeleter, error) {
	if c, ok := env.GitHub.(CommentDeleter); ok {
		return c, nil
	}
	return nil, errors.New("this GitHub client cannot delete comments")
}

// Find reads the comment (GET .../issues/comments/{id}, consistent): gone
// is found (done), present is absent (to delete).
func (d DeleteComment) Find(ctx context.Context, env *Env, _ string) effect.Result {
	gh, err := commentDeleter(env)
	if err != nil {
		return effect.Result{State: effect.Unknown, Err: err}
	}
	switch res := gh.CommentState(ctx, env.Repo, d.ID); res.State {
	case effect.Absent:
		return effect.Result{State: effect.Found, Artifact: effect.Artifact{ID: d.ID, Number: d.Number}}
	case effect.Found:
		return effect.Result{State: effect.Absent}
	default:
		return res
	}
}

func (d DeleteComment) Create(ctx context.Context, env *Env, _ string) (effect.Artifact, error) {
	gh, err := commentDeleter(env)
	if err != nil {
		return effect.Artifact{}, &effect.CreateError{Class: effect.ClassNotSent, Err: err}
	}
	if err := gh.DeleteComment(ctx, env.Repo, d.ID); err != nil {
		return effect.Artifact{}, err
	}
	return effect.Artifact{ID: d.ID, Number: d.Number}, nil
}

var _ Spec = DeleteComment{}
