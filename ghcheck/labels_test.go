package ghcheck

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"github.com/migueleliasweb/go-github-mock/src/mock"
)

func labeled(id int64, actor, label string, at time.Time) *github.IssueEvent {
	return &github.IssueEvent{
		ID: github.Int64(id), Event: github.String("labeled"), Actor: user(actor),
		Label: &github.Label{Name: github.String(label)}, CreatedAt: &github.Timestamp{Time: at},
	}
}

func issueWith(n int, labels ...string) *github.Issue {
	is := issue(n, "someone", "", false)
	for _, l := range labels {
		is.Labels = append(is.Labels, &github.Label{Name: github.String(l)})
	}
	return is
}

// Every label there already, whoever added it: found with one read, no
// events read.
func TestFindLabelsAllThere(t *testing.T) {
	var events counter
	c, _ := newTest(t, Options{},
		route(mock.GetReposIssuesByOwnerByRepoByIssueNumber, reply(200, issueWith(7, "Bug", "triage"))),
		route(mock.GetReposIssuesEventsByOwnerByRepoByIssueNumber, events.seq(reply(200, []*github.IssueEvent{}))),
	)
	res := c.FindLabels(context.Background(), repo, LabelsQuery{Number: 7, Labels: []string{"bug"}, Since: time.Now()})
	wantState(t, res, Found)
	if res.Artifact.Number != 7 || res.Artifact.URL == "" || events.count() != 0 {
		t.Errorf("artifact %+v after %d event reads", res.Artifact, events.count())
	}
}

// A first attempt (Fresh): a label missing is absent, without reading
// the events: the look-up is one request.
func TestFindLabelsFreshReadsNoEvents(t *testing.T) {
	var events counter
	c, _ := newTest(t, Options{},
		route(mock.GetReposIssuesByOwnerByRepoByIssueNumber, reply(200, issueWith(7, "triage"))),
		route(mock.GetReposIssuesEventsByOwnerByRepoByIssueNumber, events.seq(reply(200, []*github.IssueEvent{labeled(1, me, "bug", time.Now())}))),
	)
	wantState(t, c.FindLabels(context.Background(), repo, LabelsQuery{Number: 7, Labels: []string{"bug"}, Fresh: true}), Absent)
	if events.count() != 0 {
		t.Errorf("%d event reads; want 0", events.count())
	}
}

// Our earlier attempt applied the label and a person removed it: found
// (from the labeled event on page two), so it is not added back. A
// stranger's event, one of ours before the attempt, or for another label
// do not count.
func TestFindLabelsRemovedAfterOurAdd(t *testing.T) {
	since := time.Now().Add(-time.Hour)
	old := labeled(1, me, "bug", since.Add(-time.Minute))
	p2 := []*github.IssueEvent{labeled(3, "stranger", "bug", since.Add(time.Second)), labeled(4, me, "other", since.Add(time.Second))}
	for _, tc := range []struct {
		name  string
		pages [][]*github.IssueEvent
		want  State
	}{
		{"ours after since", [][]*github.IssueEvent{{old}, append(p2, labeled(5, me, "BUG", since.Add(time.Minute)))}, Found},
		{"only look-alikes", [][]*github.IssueEvent{{old}, p2}, Absent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pages []any
			for _, p := range tc.pages {
				pages = append(pages, p)
			}
			c, _ := newTest(t, Options{},
				route(mock.GetReposIssuesByOwnerByRepoByIssueNumber, reply(200, issueWith(7))),
				mock.WithRequestMatchPages(mock.GetReposIssuesEventsByOwnerByRepoByIssueNumber, pages...),
			)
			wantState(t, c.FindLabels(context.Background(), repo, LabelsQuery{Number: 7, Labels: []string{"bug", "p1"}, Since: since}), tc.want)
		})
	}
}

// With no date from the ledger (a lost one), our events count only when
// every label was added by us at some time or is there.
func TestFindLabelsWithoutSince(t *testing.T) {
	evs := []*github.IssueEvent{labeled(1, me, "bug", time.Now().Add(-time.Hour))}
	for _, tc := range []struct {
		labels []string
		want   State
	}{
		{[]string{"bug", "triage"}, Found},
		{[]string{"bug", "p1"}, Absent},
	} {
		c, _ := newTest(t, Options{},
			route(mock.GetReposIssuesByOwnerByRepoByIssueNumber, reply(200, issueWith(7, "triage"))),
			route(mock.GetReposIssuesEventsByOwnerByRepoByIssueNumber, reply(200, evs)),
		)
		wantState(t, c.FindLabels(context.Background(), repo, LabelsQuery{Number: 7, Labels: tc.labels}), tc.want)
	}
}

func TestFindLabelsReadFailures(t *testing.T) {
	c, _ := newTest(t, Options{},
		route(mock.GetReposIssuesByOwnerByRepoByIssueNumber, reply(404, fixture(t, "not-found.404.json"))),
	)
	wantState(t, c.FindLabels(context.Background(), repo, LabelsQuery{Number: 7, Labels: []string{"bug"}}), Absent)

	c, _ = newTest(t, Options{},
		route(mock.GetReposIssuesByOwnerByRepoByIssueNumber, reply(200, issueWith(7))),
		route(mock.GetReposIssuesEventsByOwnerByRepoByIssueNumber, reply(502, fixture(t, "server.502.json"))),
	)
	wantState(t, c.FindLabels(context.Background(), repo, LabelsQuery{Number: 7, Labels: []string{"bug"}, Since: time.Now()}), Unknown)
}

// GitHub not seeing a pull request it has just made (create-pull-request
// #4321) applied nothing: retried. A 502 may have applied: never resent.
func TestAddLabels(t *testing.T) {
	var posts counter
	var sent []string
	c, s := newTest(t, Options{},
		route(mock.PostReposIssuesLabelsByOwnerByRepoByIssueNumber, posts.seq(
			reply(422, fixture(t, "not-resolvable.422.json")),
			func(w http.ResponseWriter, r *http.Request) {
				json.NewDecoder(r.Body).Decode(&sent)
				reply(200, []*github.Label{{Name: github.String("bug")}, {Name: github.String("p1")}})(w, r)
			})),
	)
	a, err := c.AddLabels(context.Background(), repo, 7, []string{"bug", "p1"})
	if err != nil {
		t.Fatal(err)
	}
	if posts.count() != 2 || len(s.waits()) != 1 || len(sent) != 2 || a.Number != 7 || len(a.Labels) != 2 {
		t.Errorf("%d posts, waits %v, sent %q, artifact %+v", posts.count(), s.waits(), sent, a)
	}

	posts = counter{}
	c, _ = newTest(t, Options{},
		route(mock.PostReposIssuesLabelsByOwnerByRepoByIssueNumber, posts.seq(reply(502, fixture(t, "server.502.json")), reply(200, []*github.Label{}))),
	)
	_, err = c.AddLabels(context.Background(), repo, 7, []string{"bug"})
	if cl := classOf(t, err); cl != ClassMaybe || posts.count() != 1 {
		t.Errorf("class %v after %d posts; want maybe after 1", cl, posts.count())
	}

	posts = counter{}
	c, _ = newTest(t, Options{},
		route(mock.PostReposIssuesLabelsByOwnerByRepoByIssueNumber, posts.seq(reply(404, fixture(t, "not-found.404.json")))),
	)
	_, err = c.AddLabels(context.Background(), repo, 7, []string{"bug"})
	if cl := classOf(t, err); cl != ClassRefused || posts.count() != 1+maxRetries {
		t.Errorf("class %v after %d posts; want refused after %d", cl, posts.count(), 1+maxRetries)
	}
}

func TestCheckLabels(t *testing.T) {
	for _, tc := range []struct {
		n      int
		labels []string
	}{
		{0, []string{"bug"}},
		{7, nil},
		{7, []string{" "}},
		{7, []string{"a label that is much longer than the fifty characters GitHub allows"}},
	} {
		if CheckLabels(tc.n, tc.labels) == nil {
			t.Errorf("CheckLabels(%d, %q) = nil, want an error", tc.n, tc.labels)
		}
		c, _ := newTest(t, Options{})
		if _, err := c.AddLabels(context.Background(), repo, tc.n, tc.labels); classOf(t, err) != ClassRefused {
			t.Errorf("AddLabels(%d, %q): want refused before sending", tc.n, tc.labels)
		}
	}
}
