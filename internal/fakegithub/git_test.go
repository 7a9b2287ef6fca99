package fakegithub

import (
	"testing"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/tests/fgtest"
)

func TestGetRefIsExactMatchingRefsIsPrefix(t *testing.T) {
	s, gh := newTest(t, Options{})
	sha := fgtest.FeatureBranch(t, s, "featureA")
	ref, _, err := gh.Git.GetRef(t.Context(), owner, name, "refs/heads/featureA")
	if err != nil || ref.GetRef() != "refs/heads/featureA" || ref.GetObject().GetSHA() != sha || ref.GetObject().GetType() != "commit" {
		t.Fatalf("GetRef = %+v %v", ref, err)
	}
	_, _, err = gh.Git.GetRef(t.Context(), owner, name, "heads/feature")
	fgtest.ErrorResponse(t, err, 404)
	refs, _, err := gh.Git.ListMatchingRefs(t.Context(), owner, name, &github.ReferenceListOptions{Ref: "heads/feature"})
	if err != nil || len(refs) != 1 || refs[0].GetRef() != "refs/heads/featureA" {
		t.Fatalf("matching-refs heads/feature = %v %v", refs, err)
	}
	refs, _, err = gh.Git.ListMatchingRefs(t.Context(), owner, name, &github.ReferenceListOptions{Ref: "heads/nothing"})
	if err != nil || len(refs) != 0 {
		t.Fatalf("matching-refs none = %v %v", refs, err)
	}
	refs, _, err = gh.Git.ListMatchingRefs(t.Context(), owner, name, nil)
	if err != nil || len(refs) != 2 || refs[0].GetRef() != "refs/heads/featureA" || refs[1].GetRef() != "refs/heads/main" {
		t.Fatalf("all refs = %v %v", refs, err)
	}
}

func TestCreateRefSemantics(t *testing.T) {
	s, gh := newTest(t, Options{})
	main, _ := s.Branch(owner, name, "main")
	create := func(ref, sha string) error {
		_, _, err := gh.Git.CreateRef(t.Context(), owner, name, &github.Reference{Ref: github.String(ref), Object: &github.GitObject{SHA: github.String(sha)}})
		return err
	}
	if err := create("refs/heads/agent/x", main); err != nil {
		t.Fatal(err)
	}
	if sha, ok := s.Branch(owner, name, "agent/x"); !ok || sha != main {
		t.Fatalf("Branch(agent/x) = %q %v", sha, ok)
	}
	er := fgtest.ErrorResponse(t, create("refs/heads/agent/x", main), 422)
	if er.Message != "Reference already exists" || er.Errors != nil {
		t.Fatalf("exists = %+v", er)
	}
	r := fgtest.Do(t, s, token, "POST", "/repos/octo/hello/git/refs", `{"ref":"refs/heads/agent/x","sha":"`+main+`"}`)
	if string(r.Body) != `{"message":"Reference already exists","documentation_url":"https://docs.github.com/rest"}` {
		t.Fatalf("raw body = %s", r.Body)
	}
	if er := fgtest.ErrorResponse(t, create("refs/heads/y", "0123456789012345678901234567890123456789"), 422); er.Message != "Object does not exist" {
		t.Fatalf("unknown sha = %+v", er)
	}
	// A branch x blocks x/y and the other way round.
	if er := fgtest.ErrorResponse(t, create("refs/heads/agent/x/y", main), 422); er.Message != "Reference update failed" {
		t.Fatalf("x blocks x/y = %+v", er)
	}
	if er := fgtest.ErrorResponse(t, create("refs/heads/agent", main), 422); er.Message != "Reference update failed" {
		t.Fatalf("x/y blocks x = %+v", er)
	}
	// go-github adds "refs/" itself, so the bare form goes in raw.
	if r := fgtest.Do(t, s, token, "POST", "/repos/octo/hello/git/refs", `{"ref":"heads/x","sha":"`+main+`"}`); r.Status != 422 || r.JSON(t)["message"] != "heads/x is not a valid ref name." {
		t.Fatalf("heads/x = %d %s", r.Status, r.Body)
	}
	for _, bad := range []string{"refs/heads/a..b", "refs/heads/a b", "refs/heads/.x", "refs/heads/x.lock", "refs/heads/x/", "refs/heads/x.", "refs/heads/a~1", "refs/heads/a@{b", "refs/heads/a:b"} {
		if er := fgtest.ErrorResponse(t, create(bad, main), 422); er.Message != bad+" is not a valid ref name." {
			t.Errorf("%q: %+v", bad, er)
		}
	}
	if len(s.Branches(owner, name)) != 2 {
		t.Fatalf("branches = %v", s.Branches(owner, name))
	}
}

func TestUpdateAndDeleteRef(t *testing.T) {
	s, gh := newTest(t, Options{})
	main, _ := s.Branch(owner, name, "main")
	child := s.AddCommit(owner, name, "main")
	s.SetRef(owner, name, "b", child)
	ref := func(sha string, force bool) error {
		_, _, err := gh.Git.UpdateRef(t.Context(), owner, name, &github.Reference{Ref: github.String("refs/heads/b"), Object: &github.GitObject{SHA: github.String(sha)}}, force)
		return err
	}
	if er := fgtest.ErrorResponse(t, ref(main, false), 422); er.Message != "Update is not a fast forward" {
		t.Fatalf("non fast-forward = %+v", er)
	}
	if err := ref(main, true); err != nil {
		t.Fatal(err)
	}
	if err := ref(child, false); err != nil {
		t.Fatal(err)
	}
	if _, err := gh.Git.DeleteRef(t.Context(), owner, name, "refs/heads/b"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Branch(owner, name, "b"); ok {
		t.Fatal("b still exists")
	}
	_, err := gh.Git.DeleteRef(t.Context(), owner, name, "refs/heads/b")
	if er := fgtest.ErrorResponse(t, err, 422); er.Message != "Reference does not exist" {
		t.Fatalf("delete again = %+v", er)
	}
}

func TestCompare(t *testing.T) {
	s, gh := newTest(t, Options{})
	main, _ := s.Branch(owner, name, "main")
	a1 := s.AddCommit(owner, name, "main")
	s.SetRef(owner, name, "feature/a", a1)
	a2 := s.AddCommit(owner, name, "feature/a")
	s.SetRef(owner, name, "feature/a", a2)
	m1 := s.AddCommit(owner, name, "main")
	s.SetRef(owner, name, "side", m1)
	s.SetRef(owner, name, "orphan", s.AddOrphanCommit(owner, name))
	cases := []struct {
		base, head    string
		status        string
		ahead, behind int
	}{
		{"main", "main", "identical", 0, 0},
		{"main", "feature/a", "ahead", 2, 0},
		{"feature/a", "main", "behind", 0, 2},
		{"side", "feature/a", "diverged", 2, 1},
		{main, a2, "ahead", 2, 0},
		{"octo:main", "octo:feature/a", "ahead", 2, 0},
	}
	for _, c := range cases {
		t.Run(c.base+"..."+c.head, func(t *testing.T) {
			cmp, _, err := gh.Repositories.CompareCommits(t.Context(), owner, name, c.base, c.head, nil)
			if err != nil {
				t.Fatalf("%s...%s: %v", c.base, c.head, err)
			}
			if cmp.GetStatus() != c.status || cmp.GetAheadBy() != c.ahead || cmp.GetBehindBy() != c.behind || len(cmp.Commits) != c.ahead {
				t.Errorf("%s...%s = %s +%d -%d, want %s +%d -%d", c.base, c.head, cmp.GetStatus(), cmp.GetAheadBy(), cmp.GetBehindBy(), c.status, c.ahead, c.behind)
			}
		})
	}
	cmp, _, err := gh.Repositories.CompareCommits(t.Context(), owner, name, "side", "feature/a", nil)
	if err != nil || cmp.GetMergeBaseCommit().GetSHA() != main || cmp.Commits[0].GetSHA() != a1 || cmp.Commits[1].GetSHA() != a2 {
		t.Fatalf("merge base / order = %v %v", cmp, err)
	}
	_, _, err = gh.Repositories.CompareCommits(t.Context(), owner, name, "main", "orphan", nil)
	if er := fgtest.ErrorResponse(t, err, 404); er.Message != "No common ancestor between main and orphan." {
		t.Fatalf("orphan = %+v", er)
	}
	_, _, err = gh.Repositories.CompareCommits(t.Context(), owner, name, "main", "nope", nil)
	fgtest.ErrorResponse(t, err, 404)
}

func TestGetCommitAndBranch(t *testing.T) {
	s, gh := newTest(t, Options{})
	sha := fgtest.FeatureBranch(t, s, "feat")
	for _, ref := range []string{"feat", sha, sha[:7]} {
		c, _, err := gh.Repositories.GetCommit(t.Context(), owner, name, ref, nil)
		if err != nil || c.GetSHA() != sha || len(c.Parents) != 1 {
			t.Fatalf("GetCommit(%s) = %v %v", ref, c, err)
		}
	}
	_, _, err := gh.Repositories.GetCommit(t.Context(), owner, name, "nope", nil)
	if er := fgtest.ErrorResponse(t, err, 422); er.Message != "No commit found for SHA: nope" {
		t.Fatalf("unknown = %+v", er)
	}
	// The SHA media type answers the bare SHA; HEAD is the default branch.
	main, _ := s.Branch(owner, name, "main")
	for ref, want := range map[string]string{"feat": sha, "HEAD": main} {
		t.Run(ref, func(t *testing.T) {
			if got, _, err := gh.Repositories.GetCommitSHA1(t.Context(), owner, name, ref, ""); err != nil || got != want {
				t.Fatalf("GetCommitSHA1(%s) = %q %v, want %s", ref, got, err, want)
			}
		})
	}
	b, _, err := gh.Repositories.GetBranch(t.Context(), owner, name, "feat", 1)
	if err != nil || b.GetCommit().GetSHA() != sha || b.GetName() != "feat" {
		t.Fatalf("GetBranch = %v %v", b, err)
	}
	if r := fgtest.Do(t, s, token, "GET", "/repos/octo/hello/branches/gone", ""); r.Status != 404 || r.JSON(t)["message"] != "Branch not found" {
		t.Fatalf("missing branch = %d %s", r.Status, r.Body)
	}
}

func TestMatchSegsRejectsBadEscapes(t *testing.T) {
	if _, ok := matchSegs([]string{"repos", "{owner}"}, []string{"repos", "%zz"}); ok {
		t.Fatal("bad escape matched")
	}
	if _, ok := matchSegs([]string{"x", "{rest...}"}, []string{"x", "a", "%zz"}); ok {
		t.Fatal("bad escape matched a rest wildcard")
	}
	p, ok := matchSegs([]string{"x", "{rest...}"}, []string{"x", "a%2Fb", "c"})
	if !ok || p["rest"] != "a/b/c" {
		t.Fatalf("rest = %v %v", p, ok)
	}
}
