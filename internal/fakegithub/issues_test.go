package fakegithub

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/tests/fgtest"
)

func TestIssuesAPIIncludesPullRequests(t *testing.T) {
	s, gh := newTest(t, Options{})
	fgtest.FeatureBranch(t, s, "feat")
	if _, _, err := gh.Issues.Create(t.Context(), owner, name, &github.IssueRequest{Title: github.String("real issue"), Labels: &[]string{"ghonce:gk1_a"}}); err != nil {
		t.Fatal(err)
	}
	pr, _, err := gh.PullRequests.Create(t.Context(), owner, name, fgtest.NewPR("feat", "main"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := gh.Issues.AddLabelsToIssue(t.Context(), owner, name, pr.GetNumber(), []string{"ghonce:gk1_a"}); err != nil {
		t.Fatal(err)
	}
	list, _, err := gh.Issues.ListByRepo(t.Context(), owner, name, &github.IssueListByRepoOptions{Labels: []string{"GHONCE:GK1_A"}, State: "all"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("issues with the label = %d, want 2 (the issue and the PR)", len(list))
	}
	if !list[0].IsPullRequest() || list[0].GetNumber() != 2 || list[1].IsPullRequest() || list[1].GetNumber() != 1 {
		t.Fatalf("newest first, PR marked: %v/%v %v/%v", list[0].GetNumber(), list[0].IsPullRequest(), list[1].GetNumber(), list[1].IsPullRequest())
	}
	if !strings.HasSuffix(list[0].GetPullRequestLinks().GetURL(), "/repos/octo/hello/pulls/2") || !strings.HasSuffix(list[0].GetHTMLURL(), "/octo/hello/pull/2") {
		t.Fatalf("pull_request links = %+v", list[0].GetPullRequestLinks())
	}
	got, _, err := gh.Issues.Get(t.Context(), owner, name, 2)
	if err != nil || !got.IsPullRequest() || got.GetDraft() {
		t.Fatalf("GET issues/2 = %+v %v", got, err)
	}
	if issues := s.Issues(owner, name); len(issues) != 1 || issues[0].Number != 1 || issues[0].Labels[0] != "ghonce:gk1_a" {
		t.Fatalf("Issues() = %+v", issues)
	}
	if prs := s.PullRequests(owner, name); len(prs) != 1 || prs[0].Labels[0] != "ghonce:gk1_a" {
		t.Fatalf("PullRequests() = %+v", prs)
	}
}

func TestListIssuesFilters(t *testing.T) {
	clock := fgtest.NewClock()
	s, gh := newTest(t, Options{Now: clock.Now})
	s.SeedIssue(owner, name, "alice", SeedIssue{Title: "one", Labels: []string{"bug", "ghonce:k"}})
	clock.Advance(time.Minute)
	s.SeedIssue(owner, name, "bob[bot]", SeedIssue{Title: "two", Labels: []string{"ghonce:k"}, State: "closed"})
	clock.Advance(time.Minute)
	s.SeedIssue(owner, name, "alice", SeedIssue{Title: "three", Labels: []string{"Bug"}})
	titles := func(o *github.IssueListByRepoOptions) string {
		t.Helper()
		is, _, err := gh.Issues.ListByRepo(t.Context(), owner, name, o)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, i := range is {
			out = append(out, i.GetTitle())
		}
		return strings.Join(out, ",")
	}
	cases := []struct {
		name string
		opts *github.IssueListByRepoOptions
		want string
	}{
		{"default: open", nil, "three,one"},
		{"closed", &github.IssueListByRepoOptions{State: "closed"}, "two"},
		{"all", &github.IssueListByRepoOptions{State: "all"}, "three,two,one"},
		{"label", &github.IssueListByRepoOptions{State: "all", Labels: []string{"bug"}}, "three,one"},
		{"labels, any case", &github.IssueListByRepoOptions{State: "all", Labels: []string{"BUG", "ghonce:k"}}, "one"},
		{"creator, any case", &github.IssueListByRepoOptions{State: "all", Creator: "BOB[bot]"}, "two"},
		{"oldest first", &github.IssueListByRepoOptions{State: "all", Direction: "asc"}, "one,two,three"},
		{"since", &github.IssueListByRepoOptions{State: "all", Since: clock.Now().Add(-time.Minute)}, "three,two"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := titles(c.opts); got != c.want {
				t.Errorf("%+v -> %q, want %q", c.opts, got, c.want)
			}
		})
	}
}

func TestCreateIssueValidation(t *testing.T) {
	s, gh := newTest(t, Options{})
	_, _, err := gh.Issues.Create(t.Context(), owner, name, &github.IssueRequest{Body: github.String("b")})
	if er := fgtest.ErrorResponse(t, err, 422); er.Errors[0] != (github.Error{Resource: "Issue", Code: "missing_field", Field: "title"}) {
		t.Fatalf("no title: %+v", er.Errors)
	}
	_, _, err = gh.Issues.Create(t.Context(), owner, name, &github.IssueRequest{Title: github.String("t"), Body: github.String(strings.Repeat("x", 65537))})
	if er := fgtest.ErrorResponse(t, err, 422); er.Errors[0].Message != "body is too long (maximum is 65536 characters)" || er.Errors[0].Field != "body" {
		t.Fatalf("long body: %+v", er.Errors)
	}
	long := strings.Repeat("l", 51)
	_, _, err = gh.Issues.Create(t.Context(), owner, name, &github.IssueRequest{Title: github.String("t"), Labels: &[]string{long}})
	if er := fgtest.ErrorResponse(t, err, 422); er.Errors[0] != (github.Error{Resource: "Label", Code: "invalid", Field: "name"}) {
		t.Fatalf("long label: %+v", er.Errors)
	}
	if len(s.Issues(owner, name)) != 0 {
		t.Fatal("a refused issue was stored")
	}
	// Unknown labels are created (color ededed); known ones are matched without case.
	is, _, err := gh.Issues.Create(t.Context(), owner, name, &github.IssueRequest{Title: github.String("t"), Labels: &[]string{"BUG", "new-one", strings.Repeat("l", 50)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(is.Labels) != 3 || is.Labels[0].GetName() != "bug" || is.Labels[1].GetName() != "new-one" || is.Labels[1].GetColor() != "ededed" {
		t.Fatalf("labels = %+v", is.Labels)
	}
}

func TestAddLabelsToIssue(t *testing.T) {
	s, gh := newTest(t, Options{})
	n := s.SeedIssue(owner, name, "alice", SeedIssue{Title: "t", Labels: []string{"bug"}})
	ls, _, err := gh.Issues.AddLabelsToIssue(t.Context(), owner, name, n, []string{"ghonce:gk1_x", "BUG"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 2 || ls[0].GetName() != "bug" || ls[1].GetName() != "ghonce:gk1_x" {
		t.Fatalf("labels = %v", ls)
	}
	// The object form works too.
	r := fgtest.Do(t, s, token, "POST", fmt.Sprintf("/repos/octo/hello/issues/%d/labels", n), `{"labels":["third"]}`)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"name":"third"`) {
		t.Fatalf("object form = %d %s", r.Status, r.Body)
	}
	_, _, err = gh.Issues.AddLabelsToIssue(t.Context(), owner, name, n, []string{strings.Repeat("x", 51)})
	if er := fgtest.ErrorResponse(t, err, 422); er.Errors[0].Resource != "Label" || er.Errors[0].Code != "invalid" {
		t.Fatalf("long label: %+v", er)
	}
	_, _, err = gh.Issues.AddLabelsToIssue(t.Context(), owner, name, 99, []string{"x"})
	fgtest.ErrorResponse(t, err, 404)
	if _, err := gh.Issues.RemoveLabelForIssue(t.Context(), owner, name, n, "THIRD"); err != nil {
		t.Fatal(err)
	}
	got, _, err := gh.Issues.ListLabelsByIssue(t.Context(), owner, name, n, nil)
	if err != nil || len(got) != 2 {
		t.Fatalf("labels after removal = %v %v", got, err)
	}
}

func TestCommentsPaginationFollowingLink(t *testing.T) {
	s, gh := newTest(t, Options{})
	n := s.SeedIssue(owner, name, "alice", SeedIssue{Title: "busy thread"})
	for i := 1; i <= 250; i++ {
		login := "someone"
		if i == 250 {
			login = owner
		}
		s.SeedComment(owner, name, n, login, fmt.Sprintf("comment %d", i))
	}
	// Page one alone (what sticky-comment tools got wrong) misses the marker.
	first, resp, err := gh.Issues.ListComments(t.Context(), owner, name, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(first) != 30 || resp.NextPage != 2 || resp.LastPage != 9 || resp.FirstPage != 0 || resp.PrevPage != 0 {
		t.Fatalf("page 1: %d items, next %d last %d", len(first), resp.NextPage, resp.LastPage)
	}
	// Following the Link header's URL as given.
	var all []string
	next := s.URL() + fmt.Sprintf("repos/octo/hello/issues/%d/comments?per_page=100", n)
	pages := 0
	for next != "" {
		r := fgtest.Do(t, s, token, "GET", next, "")
		if r.Status != 200 {
			t.Fatalf("GET %s = %d", next, r.Status)
		}
		var cs []*github.IssueComment
		if err := jsonUnmarshal(r.Body, &cs); err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			all = append(all, c.GetBody())
		}
		pages++
		next = linkRel(r.Header.Get("Link"), "next")
		if next != "" && !strings.Contains(next, "/api/v3/repositories/") {
			t.Fatalf("next link %q does not use /repositories/{id}", next)
		}
	}
	if pages != 3 || len(all) != 250 || all[0] != "comment 1" || all[249] != "comment 250" {
		t.Fatalf("%d pages, %d comments", pages, len(all))
	}
	// go-github's own paging (page numbers from Link) agrees.
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 500}}
	count := 0
	for {
		cs, resp, err := gh.Issues.ListComments(t.Context(), owner, name, n, opts)
		if err != nil {
			t.Fatal(err)
		}
		count += len(cs)
		if len(cs) > 100 {
			t.Fatalf("page of %d, per_page must be capped at 100", len(cs))
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if count != 250 {
		t.Fatalf("go-github paging saw %d comments", count)
	}
}

func TestLinkHeaderShape(t *testing.T) {
	s, gh := newTest(t, Options{})
	for i := 0; i < 7; i++ {
		s.SeedIssue(owner, name, "a", SeedIssue{Title: fmt.Sprint(i)})
	}
	r, _, err := gh.Repositories.Get(t.Context(), owner, name)
	if err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("%srepositories/%d/issues?state=all&per_page=3&", s.URL(), r.GetID())
	resp := fgtest.Do(t, s, token, "GET", "/repos/octo/hello/issues?state=all&per_page=3&page=2", "")
	want := fmt.Sprintf(`<%spage=1>; rel="prev", <%spage=3>; rel="next", <%spage=3>; rel="last", <%spage=1>; rel="first"`, base, base, base, base)
	if got := resp.Header.Get("Link"); got != want {
		t.Fatalf("Link =\n%s\nwant\n%s", got, want)
	}
	if resp := fgtest.Do(t, s, token, "GET", "/repos/octo/hello/issues?per_page=10", ""); resp.Header.Get("Link") != "" {
		t.Fatalf("single page has Link %q", resp.Header.Get("Link"))
	}
}

func TestCommentsCreateGetEdit(t *testing.T) {
	s, gh := newTest(t, Options{})
	fgtest.FeatureBranch(t, s, "feat")
	pr, _, err := gh.PullRequests.Create(t.Context(), owner, name, fgtest.NewPR("feat", "main"))
	if err != nil {
		t.Fatal(err)
	}
	c, resp, err := gh.Issues.CreateComment(t.Context(), owner, name, pr.GetNumber(), &github.IssueComment{Body: github.String("<!-- ghonce:key=gk1_c -->\nhello")})
	if err != nil || resp.StatusCode != 201 {
		t.Fatal(err)
	}
	if c.GetID() <= 1<<31 || c.GetUser().GetLogin() != owner || !strings.Contains(c.GetHTMLURL(), "/octo/hello/pull/1#issuecomment-") {
		t.Fatalf("comment = %+v", c)
	}
	got, _, err := gh.Issues.GetComment(t.Context(), owner, name, c.GetID())
	if err != nil || got.GetBody() != c.GetBody() {
		t.Fatalf("GET comment = %v %v", got, err)
	}
	if _, _, err := gh.Issues.EditComment(t.Context(), owner, name, c.GetID(), &github.IssueComment{Body: github.String("edited")}); err != nil {
		t.Fatal(err)
	}
	if cs := s.Comments(owner, name, 1); len(cs) != 1 || cs[0].Body != "edited" || cs[0].ID != c.GetID() {
		t.Fatalf("Comments() = %+v", cs)
	}
	_, _, err = gh.Issues.CreateComment(t.Context(), owner, name, 1, &github.IssueComment{Body: github.String(strings.Repeat("x", 65537))})
	if er := fgtest.ErrorResponse(t, err, 422); er.Errors[0].Resource != "IssueComment" || !strings.Contains(er.Errors[0].Message, "too long") {
		t.Fatalf("long comment = %+v", er)
	}
	_, _, err = gh.Issues.CreateComment(t.Context(), owner, name, 42, &github.IssueComment{Body: github.String("x")})
	fgtest.ErrorResponse(t, err, 404)
	_, _, err = gh.Issues.GetComment(t.Context(), owner, name, 12345)
	fgtest.ErrorResponse(t, err, 404)
	if _, err := gh.Issues.DeleteComment(t.Context(), owner, name, c.GetID()); err != nil {
		t.Fatal(err)
	}
	if len(s.Comments(owner, name, 1)) != 0 {
		t.Fatal("comment not deleted")
	}
}

func TestEditIssueState(t *testing.T) {
	s, gh := newTest(t, Options{})
	n := s.SeedIssue(owner, name, "a", SeedIssue{Title: "t"})
	is, _, err := gh.Issues.Edit(t.Context(), owner, name, n, &github.IssueRequest{State: github.String("closed"), StateReason: github.String("not_planned")})
	if err != nil || is.GetState() != "closed" || is.GetStateReason() != "not_planned" || is.ClosedAt == nil {
		t.Fatalf("closed = %+v %v", is, err)
	}
	_, _, err = gh.Issues.Edit(t.Context(), owner, name, n, &github.IssueRequest{State: github.String("weird")})
	fgtest.ErrorResponse(t, err, 422)
}

// linkRel returns the URL of rel in a Link header.
func linkRel(link, rel string) string {
	for _, part := range strings.Split(link, ",") {
		u, r, ok := strings.Cut(strings.TrimSpace(part), ";")
		if ok && strings.TrimSpace(r) == `rel="`+rel+`"` {
			return strings.Trim(u, "<>")
		}
	}
	return ""
}
