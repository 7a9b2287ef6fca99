package fakegithub

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/tests/fgtest"
)

// TestGitDatabaseAsLedger: the moves the repository-as-ledger makes, as
// GitHub answers them: commit objects on the empty tree with parents and
// GitHub's date, a ref outside refs/heads created once (422 "Reference
// already exists" for the second), moved only as a fast forward (422
// "Update is not a fast forward"), read exactly, listed by prefix in one
// answer, deleted.
func TestGitDatabaseAsLedger(t *testing.T) {
	clock := fgtest.NewClock()
	_, gh := newTest(t, Options{Now: clock.Now})
	ctx := t.Context()
	commit := func(msg string, parents ...string) *github.Commit {
		t.Helper()
		var ps []*github.Commit
		for _, p := range parents {
			ps = append(ps, &github.Commit{SHA: github.String(p)})
		}
		c, resp, err := gh.Git.CreateCommit(ctx, owner, name, &github.Commit{Message: github.String(msg), Tree: &github.Tree{SHA: github.String(emptyTreeSHA)}, Parents: ps}, nil)
		if err != nil {
			t.Fatalf("CreateCommit: %v", err)
		}
		if d, err := http.ParseTime(resp.Header.Get("Date")); err != nil || !d.Equal(clock.Now()) {
			t.Errorf("Date = %q, want the server's clock %v", resp.Header.Get("Date"), clock.Now())
		}
		return c
	}
	root := commit("claim")
	if root.GetTree().GetSHA() != emptyTreeSHA || !root.GetCommitter().GetDate().Time.Equal(clock.Now()) || root.GetAuthor().GetName() != owner || len(root.Parents) != 0 {
		t.Fatalf("root commit = %+v", root)
	}
	clock.Advance(time.Second)
	child := commit("done", root.GetSHA())
	if len(child.Parents) != 1 || child.Parents[0].GetSHA() != root.GetSHA() {
		t.Fatalf("child parents = %+v", child.Parents)
	}
	other := commit("racer", root.GetSHA())
	got, _, err := gh.Git.GetCommit(ctx, owner, name, child.GetSHA())
	if err != nil || got.GetMessage() != "done" || got.GetSHA() != child.GetSHA() || len(got.Parents) != 1 {
		t.Fatalf("GetCommit = %+v, %v", got, err)
	}
	_, _, err = gh.Git.GetCommit(ctx, owner, name, "0123456789012345678901234567890123456789")
	fgtest.ErrorResponse(t, err, 404)
	_, _, err = gh.Git.CreateCommit(ctx, owner, name, &github.Commit{Message: github.String("x"), Tree: &github.Tree{SHA: github.String("0123456789012345678901234567890123456789")}}, nil)
	if er := fgtest.ErrorResponse(t, err, 422); er.Message != "Tree SHA does not exist" {
		t.Errorf("unknown tree = %+v", er)
	}

	const ref = "refs/ghonce/claims/k"
	create := func(sha string) error {
		_, _, err := gh.Git.CreateRef(ctx, owner, name, &github.Reference{Ref: github.String(ref), Object: &github.GitObject{SHA: github.String(sha)}})
		return err
	}
	if err := create(root.GetSHA()); err != nil {
		t.Fatal(err)
	}
	if er := fgtest.ErrorResponse(t, create(other.GetSHA()), 422); er.Message != "Reference already exists" {
		t.Fatalf("second create = %+v", er)
	}
	update := func(sha string) error {
		_, _, err := gh.Git.UpdateRef(ctx, owner, name, &github.Reference{Ref: github.String(ref), Object: &github.GitObject{SHA: github.String(sha)}}, false)
		return err
	}
	if err := update(child.GetSHA()); err != nil {
		t.Fatalf("fast-forward update: %v", err)
	}
	// The racer's commit also descends from root, not from child: refused.
	if er := fgtest.ErrorResponse(t, update(other.GetSHA()), 422); er.Message != "Update is not a fast forward" {
		t.Fatalf("racing update = %+v", er)
	}
	r, _, err := gh.Git.GetRef(ctx, owner, name, "ghonce/claims/k")
	if err != nil || r.GetObject().GetSHA() != child.GetSHA() {
		t.Fatalf("GetRef = %+v, %v", r, err)
	}
	_, _, err = gh.Git.GetRef(ctx, owner, name, "ghonce/claims/kk")
	fgtest.ErrorResponse(t, err, 404)

	// matching-refs answers every match at once, however many.
	for i := range 45 {
		if _, _, err := gh.Git.CreateRef(ctx, owner, name, &github.Reference{Ref: github.String(fmt.Sprintf("refs/ghonce/claims/n%02d", i)), Object: &github.GitObject{SHA: github.String(root.GetSHA())}}); err != nil {
			t.Fatal(err)
		}
	}
	refs, resp, err := gh.Git.ListMatchingRefs(ctx, owner, name, &github.ReferenceListOptions{Ref: "ghonce/claims/"})
	if err != nil || len(refs) != 46 || resp.Header.Get("Link") != "" {
		t.Fatalf("matching-refs = %d refs, Link %q, %v; want 46 in one answer", len(refs), resp.Header.Get("Link"), err)
	}
	if _, err := gh.Git.DeleteRef(ctx, owner, name, ref); err != nil {
		t.Fatal(err)
	}
	_, _, err = gh.Git.GetRef(ctx, owner, name, "ghonce/claims/k")
	fgtest.ErrorResponse(t, err, 404)
	// Not a branch: the branch listing does not show claims.
	if bs, _, err := gh.Git.ListMatchingRefs(ctx, owner, name, &github.ReferenceListOptions{Ref: "heads/"}); err != nil || len(bs) != 1 {
		t.Errorf("branches = %d, %v; want main alone", len(bs), err)
	}
}
