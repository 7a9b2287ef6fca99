package fakegithub

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/tests/fgtest"
)

func TestCreatePullAndRead(t *testing.T) {
	s, gh := newTest(t, Options{})
	sha := fgtest.FeatureBranch(t, s, "agent/fix-1")
	pr, resp, err := gh.PullRequests.Create(t.Context(), owner, name, &github.NewPullRequest{
		Title: github.String("Fix"), Head: github.String("agent/fix-1"), Base: github.String("main"),
		Body: github.String("<!-- ghonce:key=gk1_abc -->"), Draft: github.Bool(true),
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 201 || pr.GetNumber() != 1 || pr.GetState() != "open" || !pr.GetDraft() {
		t.Fatalf("created %d %+v", resp.StatusCode, pr)
	}
	if pr.GetHead().GetRef() != "agent/fix-1" || pr.GetHead().GetLabel() != "octo:agent/fix-1" || pr.GetHead().GetSHA() != sha ||
		pr.GetHead().GetRepo().GetOwner().GetLogin() != owner || pr.GetBase().GetRef() != "main" || pr.GetUser().GetLogin() != owner {
		t.Fatalf("head/base/user = %+v %+v %+v", pr.GetHead(), pr.GetBase(), pr.GetUser())
	}
	if !strings.HasSuffix(pr.GetHTMLURL(), "/octo/hello/pull/1") || strings.Contains(pr.GetHTMLURL(), "/api/v3/") || pr.MergedAt != nil || pr.CreatedAt == nil {
		t.Fatalf("html_url %q merged_at %v created_at %v", pr.GetHTMLURL(), pr.MergedAt, pr.CreatedAt)
	}
	got, _, err := gh.PullRequests.Get(t.Context(), owner, name, 1)
	if err != nil || got.GetBody() != "<!-- ghonce:key=gk1_abc -->" || got.GetMerged() || got.GetCommits() != 1 {
		t.Fatalf("GET pull = %+v %v", got, err)
	}
	prs := s.PullRequests(owner, name)
	if len(prs) != 1 || prs[0].Head != "agent/fix-1" || prs[0].Base != "main" || prs[0].Author != owner || prs[0].State != "open" || !prs[0].Draft || prs[0].HeadSHA != sha {
		t.Fatalf("PullRequests() = %+v", prs)
	}
}

func TestPullsHeadFilterTraps(t *testing.T) {
	s, gh := newTest(t, Options{})
	s.AddRepo("stranger", name, "main")
	fgtest.FeatureBranch(t, s, "mine")
	fgtest.FeatureBranch(t, s, "other")
	if _, _, err := gh.PullRequests.Create(t.Context(), owner, name, fgtest.NewPR("mine", "main")); err != nil {
		t.Fatal(err)
	}
	s.SeedPR(owner, name, "stranger", SeedPR{Title: "theirs", Head: "other"})
	s.SeedPR(owner, name, "stranger", SeedPR{Title: "fork", Head: "stranger:mine"})

	list := func(head string) []int {
		t.Helper()
		prs, _, err := gh.PullRequests.List(t.Context(), owner, name, &github.PullRequestListOptions{State: "all", Head: head})
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for _, p := range prs {
			out = append(out, p.GetNumber())
		}
		return out
	}
	if got := list("octo:mine"); fmt.Sprint(got) != "[1]" {
		t.Errorf("head=octo:mine -> %v, want [1]", got)
	}
	if got := list("OCTO:mine"); fmt.Sprint(got) != "[1]" {
		t.Errorf("head=OCTO:mine -> %v, want [1] (owner without case)", got)
	}
	if got := list("stranger:mine"); fmt.Sprint(got) != "[3]" {
		t.Errorf("head=stranger:mine -> %v, want [3]", got)
	}
	// Trap 1: a bare branch is silently ignored; every PR comes back.
	if got := list("mine"); fmt.Sprint(got) != "[3 2 1]" {
		t.Errorf("head=mine -> %v, want every PR [3 2 1]", got)
	}
	// Trap 2: owner/repo:branch matches nothing.
	if got := list("octo/hello:mine"); len(got) != 0 {
		t.Errorf("head=octo/hello:mine -> %v, want none", got)
	}
	prs, _, err := gh.PullRequests.List(t.Context(), owner, name, &github.PullRequestListOptions{State: "all", Base: "other"})
	if err != nil || len(prs) != 0 {
		t.Errorf("base=other -> %d %v", len(prs), err)
	}
	fork, _, err := gh.PullRequests.Get(t.Context(), owner, name, 3)
	if err != nil || fork.GetHead().GetLabel() != "stranger:mine" || fork.GetHead().GetRepo().GetOwner().GetLogin() != "stranger" || fork.GetUser().GetLogin() != "stranger" {
		t.Fatalf("fork PR = %+v %v", fork.GetHead(), err)
	}
}

func TestPullsStateFilter(t *testing.T) {
	s, gh := newTest(t, Options{})
	s.SeedPR(owner, name, "a", SeedPR{Title: "open", Head: "x"})
	s.SeedPR(owner, name, "a", SeedPR{Title: "closed", Head: "y", State: "closed"})
	s.SeedPR(owner, name, "a", SeedPR{Title: "merged", Head: "z", State: "merged"})
	count := func(state string) int {
		prs, _, err := gh.PullRequests.List(t.Context(), owner, name, &github.PullRequestListOptions{State: state})
		if err != nil {
			t.Fatal(err)
		}
		return len(prs)
	}
	if count("") != 1 || count("open") != 1 || count("closed") != 2 || count("all") != 3 {
		t.Fatalf("counts open(default)=%d open=%d closed=%d all=%d", count(""), count("open"), count("closed"), count("all"))
	}
	m, _, err := gh.PullRequests.Get(t.Context(), owner, name, 3)
	if err != nil || !m.GetMerged() || m.MergedAt == nil || m.GetState() != "closed" {
		t.Fatalf("merged PR = %+v %v", m, err)
	}
	_, _, err = gh.PullRequests.List(t.Context(), owner, name, &github.PullRequestListOptions{State: "bogus"})
	fgtest.ErrorResponse(t, err, 422)
}

func TestCreatePullDuplicateOpenIs422(t *testing.T) {
	s, gh := newTest(t, Options{})
	fgtest.FeatureBranch(t, s, "feat")
	if _, _, err := gh.PullRequests.Create(t.Context(), owner, name, fgtest.NewPR("feat", "main")); err != nil {
		t.Fatal(err)
	}
	for _, head := range []string{"feat", "octo:feat"} {
		_, _, err := gh.PullRequests.Create(t.Context(), owner, name, fgtest.NewPR(head, "main"))
		er := fgtest.ErrorResponse(t, err, 422)
		if er.Message != "Validation Failed" || len(er.Errors) != 1 || er.Errors[0].Resource != "PullRequest" ||
			er.Errors[0].Code != "custom" || er.Errors[0].Message != "A pull request already exists for octo:feat." {
			t.Fatalf("head %q: %+v", head, er)
		}
	}
	if n := len(s.PullRequests(owner, name)); n != 1 {
		t.Fatalf("%d PRs", n)
	}
}

func TestClosedPullDoesNotBlockANewOne(t *testing.T) {
	s, gh := newTest(t, Options{})
	fgtest.FeatureBranch(t, s, "feat")
	s.SeedPR(owner, name, owner, SeedPR{Title: "old", Head: "feat", State: "closed"})
	pr, _, err := gh.PullRequests.Create(t.Context(), owner, name, fgtest.NewPR("feat", "main"))
	if err != nil || pr.GetNumber() != 2 {
		t.Fatalf("create after a closed PR = %v %v", pr.GetNumber(), err)
	}
	// Reopening the closed one now collides with the open one.
	_, _, err = gh.PullRequests.Edit(t.Context(), owner, name, 1, &github.PullRequest{State: github.String("open")})
	if er := fgtest.ErrorResponse(t, err, 422); er.Errors[0].Message != "A pull request already exists for octo:feat." {
		t.Fatalf("reopen = %+v", er)
	}
	// Closing through the API, then creating again, works.
	if _, _, err := gh.PullRequests.Edit(t.Context(), owner, name, 2, &github.PullRequest{State: github.String("closed")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := gh.PullRequests.Create(t.Context(), owner, name, fgtest.NewPR("feat", "main")); err != nil {
		t.Fatal(err)
	}
}

func TestCreatePullValidation(t *testing.T) {
	s, gh := newTest(t, Options{})
	fgtest.FeatureBranch(t, s, "feat")
	s.SetRef(owner, name, "same", func() string { sha, _ := s.Branch(owner, name, "main"); return sha }())
	s.SetRef(owner, name, "orphan", s.AddOrphanCommit(owner, name))
	cases := []struct {
		name string
		pr   *github.NewPullRequest
		want github.Error
	}{
		{"no title", &github.NewPullRequest{Head: github.String("feat"), Base: github.String("main")}, github.Error{Resource: "PullRequest", Code: "missing_field", Field: "title"}},
		{"missing head branch", fgtest.NewPR("gone", "main"), github.Error{Resource: "PullRequest", Code: "invalid", Field: "head"}},
		{"unknown fork", fgtest.NewPR("nobody:feat", "main"), github.Error{Resource: "PullRequest", Code: "invalid", Field: "head"}},
		{"missing base", fgtest.NewPR("feat", "gone"), github.Error{Resource: "PullRequest", Code: "invalid", Field: "base"}},
		{"body too long", &github.NewPullRequest{Title: github.String("t"), Head: github.String("feat"), Base: github.String("main"), Body: github.String(strings.Repeat("é", 65537))},
			github.Error{Resource: "PullRequest", Code: "custom", Field: "body", Message: "body is too long (maximum is 65536 characters)"}},
		{"no commits", fgtest.NewPR("same", "main"), github.Error{Resource: "PullRequest", Code: "custom", Message: "No commits between main and same"}},
		{"no common history", fgtest.NewPR("orphan", "main"), github.Error{Resource: "PullRequest", Code: "custom", Message: "The orphan branch has no history in common with main"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := gh.PullRequests.Create(t.Context(), owner, name, c.pr)
			er := fgtest.ErrorResponse(t, err, 422)
			if len(er.Errors) != 1 || er.Errors[0] != c.want {
				t.Errorf("%s: errors = %+v, want %+v", c.name, er.Errors, c.want)
			}
		})
	}
	// Exactly 65,536 characters is fine.
	if _, _, err := gh.PullRequests.Create(t.Context(), owner, name, &github.NewPullRequest{Title: github.String("t"), Head: github.String("feat"), Base: github.String("main"), Body: github.String(strings.Repeat("é", 65536))}); err != nil {
		t.Fatal(err)
	}
}

func TestPullNumbersShareTheIssueSpace(t *testing.T) {
	s, gh := newTest(t, Options{})
	fgtest.FeatureBranch(t, s, "feat")
	if _, _, err := gh.Issues.Create(t.Context(), owner, name, &github.IssueRequest{Title: github.String("issue")}); err != nil {
		t.Fatal(err)
	}
	pr, _, err := gh.PullRequests.Create(t.Context(), owner, name, fgtest.NewPR("feat", "main"))
	if err != nil || pr.GetNumber() != 2 {
		t.Fatalf("PR number = %d %v, want 2", pr.GetNumber(), err)
	}
	_, _, err = gh.PullRequests.Get(t.Context(), owner, name, 1)
	fgtest.ErrorResponse(t, err, 404)
}

func TestConcurrentCreatePullOnlyOneWins(t *testing.T) {
	s, gh := newTest(t, Options{})
	fgtest.FeatureBranch(t, s, "feat")
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for i := 0; i < 10; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := gh.PullRequests.Create(t.Context(), owner, name, fgtest.NewPR("feat", "main"))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	ok := 0
	for err := range errs {
		if err == nil {
			ok++
			continue
		}
		fgtest.ErrorResponse(t, err, 422)
	}
	if ok != 1 || len(s.PullRequests(owner, name)) != 1 {
		t.Fatalf("%d creates succeeded, %d PRs", ok, len(s.PullRequests(owner, name)))
	}
}

func TestDeletingTheHeadBranchClosesThePR(t *testing.T) {
	s, gh := newTest(t, Options{})
	fgtest.FeatureBranch(t, s, "feat")
	if _, _, err := gh.PullRequests.Create(t.Context(), owner, name, fgtest.NewPR("feat", "main")); err != nil {
		t.Fatal(err)
	}
	if _, err := gh.Git.DeleteRef(t.Context(), owner, name, "heads/feat"); err != nil {
		t.Fatal(err)
	}
	if prs := s.PullRequests(owner, name); prs[0].State != "closed" {
		t.Fatalf("PR after its branch was deleted = %+v", prs[0])
	}
}
