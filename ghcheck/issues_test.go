package ghcheck

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v66/github"
	"github.com/migueleliasweb/go-github-mock/src/mock"

	"github.com/ghonce/ghonce/taskkey"
)

func TestFindIssueSkipsPullRequestsAndStrangers(t *testing.T) {
	key := keyFor("issue")
	body := taskkey.WithMarker(key, "text")
	c, _ := newTest(t, Options{},
		mock.WithRequestMatchPages(mock.GetReposIssuesByOwnerByRepo,
			[]*github.Issue{
				issue(2, me, body, true),          // a pull request with our label and marker
				issue(3, "stranger", body, false), // someone else's copy
				issue(4, me, "quoting\n> "+taskkey.Marker(key), false),
				issue(5, me, taskkey.WithMarker(keyFor("other"), "x"), false),
			},
			[]*github.Issue{issue(8, me, body, false), issue(6, me, body+" again", false)},
		),
	)
	res := c.FindIssue(context.Background(), repo, IssueQuery{Key: key})
	wantState(t, res, Found)
	if res.Artifact.Number != 6 || res.Artifact.State != "open" || res.Artifact.Author != me {
		t.Errorf("artifact = %+v, want the oldest, #6", res.Artifact)
	}
}

func TestFindIssueAbsent(t *testing.T) {
	key := keyFor("issue")
	c, _ := newTest(t, Options{},
		route(mock.GetReposIssuesByOwnerByRepo, reply(200, []*github.Issue{issue(2, me, taskkey.WithMarker(key, ""), true)})),
	)
	wantState(t, c.FindIssue(context.Background(), repo, IssueQuery{Key: key}), Absent)
}

func TestCreateIssueLabelsAtomically(t *testing.T) {
	key := keyFor("issue")
	var sent github.IssueRequest
	c, _ := newTest(t, Options{},
		route(mock.PostReposIssuesByOwnerByRepo, func(w http.ResponseWriter, r *http.Request) {
			json.NewDecoder(r.Body).Decode(&sent)
			is := issue(21, me, sent.GetBody(), false)
			for _, l := range sent.GetLabels() {
				is.Labels = append(is.Labels, &github.Label{Name: github.String(l)})
			}
			reply(201, is)(w, r)
		}),
	)
	a, err := c.CreateIssue(context.Background(), repo, key, NewIssue{Title: "t", Body: "b", Labels: []string{"Bug", "bug"}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Number != 21 || a.Warning != "" {
		t.Errorf("artifact = %+v", a)
	}
	if strings.Join(sent.GetLabels(), ",") != taskkey.Label(key)+",Bug" {
		t.Errorf("labels = %q", sent.GetLabels())
	}
	if !taskkey.HasMarker(sent.GetBody(), key) {
		t.Errorf("body = %q", sent.GetBody())
	}
}

func TestCreateIssueDroppedLabelWarns(t *testing.T) {
	c, _ := newTest(t, Options{},
		route(mock.PostReposIssuesByOwnerByRepo, reply(201, issue(21, me, "", false))),
	)
	a, err := c.CreateIssue(context.Background(), repo, keyFor("issue"), NewIssue{Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.Warning, "did not apply label") {
		t.Errorf("warning = %q", a.Warning)
	}
}
