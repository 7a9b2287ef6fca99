package ghcheck

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/google/go-github/v66/github"
	"github.com/migueleliasweb/go-github-mock/src/mock"

	"github.com/ghonce/ghonce/taskkey"
)

func filler(from int64, n int) []*github.IssueComment {
	var cs []*github.IssueComment
	for i := range n {
		cs = append(cs, comment(from+int64(i), "someone", "+1"))
	}
	return cs
}

func TestFindCommentOnPageThree(t *testing.T) {
	key := keyFor("comment")
	p1 := append(filler(1, 98),
		comment(99, me, "> "+taskkey.Marker(key)+"\nquoted by us later in a body"),
		comment(100, "stranger", taskkey.WithMarker(key, "a stranger's copy")),
	)
	p2 := append(filler(101, 98),
		comment(199, me, "<!-- ghonce:key="+key+"x -->\nlonger key"),
		comment(200, me, "<!-- ghonce:key="+key[:len(key)-1]+" -->\nshorter key"),
	)
	p3 := append(filler(201, 10),
		comment(211, "GitHub-Actions[bot]", taskkey.WithMarker(key, "ours")),
		comment(212, "github-actions[bot]", taskkey.WithMarker(key, "ours, a duplicate")),
	)
	c, _ := newTest(t, Options{TrustedAuthors: []string{"github-actions[bot]"}},
		route(mock.GetUser, reply(404, fixture(t, "not-found.404.json"))),
		mock.WithRequestMatchPages(mock.GetReposIssuesCommentsByOwnerByRepoByIssueNumber, p1, p2, p3),
	)
	res := c.FindComment(context.Background(), repo, 7, key)
	wantState(t, res, Found)
	if res.Artifact.ID != 211 || res.Artifact.URL == "" {
		t.Errorf("artifact = %+v, want the oldest of ours, 211", res.Artifact)
	}
}

func TestFindCommentIgnoresQuotesAndLookAlikes(t *testing.T) {
	key := keyFor("comment")
	c, _ := newTest(t, Options{},
		mock.WithRequestMatchPages(mock.GetReposIssuesCommentsByOwnerByRepoByIssueNumber,
			[]*github.IssueComment{
				comment(1, me, "> "+taskkey.Marker(key)),
				comment(2, "stranger", taskkey.WithMarker(key, "")),
				comment(3, me, "text\n"+taskkey.Marker(key)),
			},
			[]*github.IssueComment{
				comment(4, me, taskkey.WithMarker(keyFor("other"), "")),
				comment(5, me, "<!-- ghonce:key="+key+"x -->"),
			},
		),
	)
	wantState(t, c.FindComment(context.Background(), repo, 7, key), Absent)
}

func TestFindCommentMissingIssueIsAbsent(t *testing.T) {
	c, _ := newTest(t, Options{},
		route(mock.GetReposIssuesCommentsByOwnerByRepoByIssueNumber, reply(404, fixture(t, "not-found.404.json"))),
		route(mock.PostReposIssuesCommentsByOwnerByRepoByIssueNumber, reply(404, fixture(t, "not-found.404.json"))),
	)
	wantState(t, c.FindComment(context.Background(), repo, 7, keyFor("comment")), Absent)
	_, err := c.CreateComment(context.Background(), repo, 7, keyFor("comment"), "hi")
	if cl := classOf(t, err); cl != ClassRefused {
		t.Fatalf("class = %v, want refused", cl)
	}
}

func TestFindCommentReadErrorIsUnknown(t *testing.T) {
	var tries counter
	c, s := newTest(t, Options{},
		route(mock.GetReposIssuesCommentsByOwnerByRepoByIssueNumber, tries.seq(
			reply(502, fixture(t, "server.502.json")),
			reply(200, []*github.IssueComment{comment(1, me, taskkey.WithMarker(keyFor("comment"), ""))}),
		)),
	)
	// A read retries a 5xx.
	wantState(t, c.FindComment(context.Background(), repo, 7, keyFor("comment")), Found)
	if w := s.waits(); len(w) != 1 {
		t.Errorf("waits = %v", w)
	}

	c, _ = newTest(t, Options{},
		route(mock.GetReposIssuesCommentsByOwnerByRepoByIssueNumber, reply(500, nil)),
	)
	wantState(t, c.FindComment(context.Background(), repo, 7, keyFor("comment")), Unknown)
}

func TestCreateComment(t *testing.T) {
	key := keyFor("comment")
	var sent github.IssueComment
	c, _ := newTest(t, Options{},
		route(mock.PostReposIssuesCommentsByOwnerByRepoByIssueNumber, func(w http.ResponseWriter, r *http.Request) {
			json.NewDecoder(r.Body).Decode(&sent)
			reply(201, comment(77, me, sent.GetBody()))(w, r)
		}),
	)
	a, err := c.CreateComment(context.Background(), repo, 7, key, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != 77 || a.Author != me {
		t.Errorf("artifact = %+v", a)
	}
	if sent.GetBody() != taskkey.WithMarker(key, "hello") {
		t.Errorf("body = %q", sent.GetBody())
	}
}
