package ghcheck_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/ghcheck"
)

// A 404 for a comment or a branch proves it gone only in a repository the
// token sees; in one it cannot see, it proves nothing: unknown, never
// "done". Deleting what is gone answers ClassExists.
func TestGoneNeedsAVisibleRepository(t *testing.T) {
	s := budgetFake(t)
	c := listingClient(t, s)
	ctx := context.Background()
	seen, hidden := ghcheck.Repo{Owner: owner, Name: name}, ghcheck.Repo{Owner: owner, Name: "private"}
	sha := s.AddCommit(owner, name, "main")
	for _, tc := range []struct {
		name string
		res  effect.Result
		want effect.State
	}{
		{"comment gone", c.FindCommentGone(ctx, seen, 2_200_000_999), effect.Found},
		{"comment in a hidden repository", c.FindCommentGone(ctx, hidden, 2_200_000_999), effect.Unknown},
		{"branch gone", c.FindBranchGone(ctx, seen, "stray", sha), effect.Found},
		{"branch in a hidden repository", c.FindBranchGone(ctx, hidden, "stray", sha), effect.Unknown},
		{"issue that does not exist", c.FindClosed(ctx, seen, 99), effect.Conflict},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.res.State != tc.want {
				t.Errorf("%s: %v (%v), want %v", tc.name, tc.res.State, tc.res.Err, tc.want)
			}
		})
	}
	_, err := c.DeleteComment(ctx, seen, 2_200_000_999)
	var ce *effect.CreateError
	if !errors.As(err, &ce) || ce.Class != effect.ClassExists {
		t.Fatalf("delete a gone comment: %v, want ClassExists", err)
	}
	_, err = c.DeleteBranch(ctx, seen, "stray", sha)
	if !errors.As(err, &ce) || ce.Class != effect.ClassExists {
		t.Fatalf("delete a gone branch: %v, want ClassExists", err)
	}
}
