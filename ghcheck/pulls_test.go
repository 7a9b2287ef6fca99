package ghcheck

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"
	"github.com/migueleliasweb/go-github-mock/src/mock"

	"github.com/ghonce/ghonce/taskkey"
)

// listPulls answers the pulls list like GitHub does for a malformed head:
// it ignores the filter and returns every pull request. It records the
// head filters it was asked for.
// listPulls answers head-filtered lists with prs (as GitHub does when the
// filter is ignored) and FindPR's last look-up, the newest pull requests,
// with none.
func listPulls(heads *[]string, prs ...*github.PullRequest) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("state") != "all" {
			http.Error(w, "want state=all", 400)
			return
		}
		if q.Get("head") == "" && q.Get("sort") == "created" && q.Get("direction") == "desc" {
			reply(200, []*github.PullRequest{})(w, r)
			return
		}
		*heads = append(*heads, q.Get("head"))
		reply(200, prs)(w, r)
	}
}

func TestFindPRBareBranchTrapAdoptsNothing(t *testing.T) {
	key := keyFor("pr")
	body := taskkey.WithMarker(key, "fixes it")
	var heads []string
	c, _ := newTest(t, Options{},
		route(mock.GetReposPullsByOwnerByRepo, listPulls(&heads,
			// A stranger's pull request that even carries our marker.
			pull(1, "stranger", "stranger", "feature", "main", body),
			// Ours, but from another branch.
			pull(2, me, "octo", "feature-2", "main", body),
			// Ours on the same branch name in a fork.
			pull(3, me, "someone", "feature", "main", body),
			// Ours, right head, wrong base.
			pull(4, me, "octo", "feature", "develop", body),
			// Ours, right head and base, a look-alike marker of another key.
			pull(5, me, "octo", "feature", "main", taskkey.WithMarker(keyFor("other"), "x")),
			// Ours, right head and base, the marker not on the first line.
			pull(6, me, "octo", "feature", "main", "see\n"+taskkey.Marker(key)),
		)),
		route(mock.GetReposIssuesByOwnerByRepo, reply(200, []*github.Issue{})),
	)
	res := c.FindPR(context.Background(), repo, PRQuery{Key: key, Base: "main", Heads: []string{"feature"}})
	wantState(t, res, Absent)
	if len(heads) != 1 || heads[0] != "octo:feature" {
		t.Errorf("head filters = %q, want [octo:feature]", heads)
	}
}

func TestFindPRFoundByHeadOnLaterPage(t *testing.T) {
	key := keyFor("pr")
	merged := pull(9, "GhOnCe-BoT", "Octo", "feature", "main", taskkey.WithMarker(key, "body"))
	merged.State = github.String("closed")
	merged.MergedAt = &github.Timestamp{Time: time.Unix(1700000000, 0)}
	c, _ := newTest(t, Options{},
		mock.WithRequestMatchPages(mock.GetReposPullsByOwnerByRepo,
			[]*github.PullRequest{pull(1, "stranger", "stranger", "x", "main", "")},
			[]*github.PullRequest{pull(2, "stranger", "stranger", "y", "main", "")},
			[]*github.PullRequest{merged},
		),
	)
	res := c.FindPR(context.Background(), repo, PRQuery{Key: key, Base: "main", Heads: []string{"octo:feature", "feature", "OCTO:feature"}})
	wantState(t, res, Found)
	if a := res.Artifact; a.Number != 9 || a.State != "merged" || a.URL != "https://github.com/octo/hello/pull/9" || a.Author != "GhOnCe-BoT" {
		t.Errorf("artifact = %+v", a)
	}
}

func TestFindPRByLabelSkipsPlainIssues(t *testing.T) {
	key := keyFor("pr")
	body := taskkey.WithMarker(key, "body")
	var heads []string
	var gets counter
	c, _ := newTest(t, Options{TrustedAuthors: []string{"my-app[bot]"}},
		route(mock.GetUser, reply(403, fixture(t, "integration.403.json"))),
		route(mock.GetReposPullsByOwnerByRepo, listPulls(&heads)),
		route(mock.GetReposIssuesByOwnerByRepo, func(w http.ResponseWriter, r *http.Request) {
			if got := r.URL.Query().Get("labels"); got != taskkey.Label(key) {
				t.Errorf("labels = %q", got)
			}
			reply(200, []*github.Issue{
				issue(3, "my-app[bot]", body, false), // a plain issue: not a pull request
				issue(4, "stranger", body, true),     // not ours
				issue(5, "My-App[bot]", body, true),  // ours
			})(w, r)
		}),
		route(mock.GetReposPullsByOwnerByRepoByPullNumber, gets.seq(func(w http.ResponseWriter, r *http.Request) {
			if !strings.HasSuffix(r.URL.Path, "/pulls/5") {
				t.Errorf("read %s, want pull 5", r.URL.Path)
			}
			pr := pull(5, "my-app[bot]", "octo", "renamed", "main", body)
			pr.State = github.String("closed")
			pr.Merged = github.Bool(true)
			reply(200, pr)(w, r)
		})),
	)
	res := c.FindPR(context.Background(), repo, PRQuery{Key: key, Base: "main", Heads: []string{"feature"}})
	wantState(t, res, Found)
	if a := res.Artifact; a.Number != 5 || a.State != "merged" {
		t.Errorf("artifact = %+v", a)
	}
}

func TestFindPRRepoNotFoundIsAbsent(t *testing.T) {
	c, _ := newTest(t, Options{},
		route(mock.GetReposPullsByOwnerByRepo, reply(404, fixture(t, "not-found.404.json"))),
	)
	wantState(t, c.FindPR(context.Background(), repo, PRQuery{Key: keyFor("pr"), Base: "main", Heads: []string{"feature"}}), Absent)
}

func TestFindPRBadInputIsUnknown(t *testing.T) {
	c, _ := newTest(t, Options{})
	for _, q := range []PRQuery{
		{Key: "gk1_short", Base: "main", Heads: []string{"feature"}},
		{Key: keyFor("pr"), Base: "main", Heads: []string{"bad..name"}},
		{Key: keyFor("pr"), Base: "main", Heads: []string{":feature"}},
	} {
		wantState(t, c.FindPR(context.Background(), repo, q), Unknown)
	}
}

func TestCreatePR(t *testing.T) {
	key := keyFor("pr")
	var sent github.NewPullRequest
	var labels []string
	c, _ := newTest(t, Options{},
		route(mock.PostReposPullsByOwnerByRepo, func(w http.ResponseWriter, r *http.Request) {
			json.NewDecoder(r.Body).Decode(&sent)
			reply(201, pull(12, me, "octo", "feature", "main", sent.GetBody()))(w, r)
		}),
		route(mock.PostReposIssuesLabelsByOwnerByRepoByIssueNumber, func(w http.ResponseWriter, r *http.Request) {
			json.NewDecoder(r.Body).Decode(&labels) // go-github sends a bare array
			var out []*github.Label
			for _, l := range labels {
				out = append(out, &github.Label{Name: github.String(l)})
			}
			reply(200, out)(w, r)
		}),
	)
	a, err := c.CreatePR(context.Background(), repo, key, NewPR{Base: "main", Head: "feature", Title: "t", Body: "hello", Labels: []string{"bug", taskkey.Label(key)}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Number != 12 || a.State != "open" || a.Warning != "" {
		t.Errorf("artifact = %+v", a)
	}
	if !taskkey.HasMarker(sent.GetBody(), key) || !strings.HasSuffix(sent.GetBody(), "\nhello") {
		t.Errorf("body = %q", sent.GetBody())
	}
	if strings.Join(labels, ",") != taskkey.Label(key)+",bug" {
		t.Errorf("labels = %q", labels)
	}
}

func TestCreatePRLabelFailureIsAWarning(t *testing.T) {
	key := keyFor("pr")
	var posts, reads counter
	c, _ := newTest(t, Options{},
		route(mock.PostReposPullsByOwnerByRepo, reply(201, pull(12, me, "octo", "feature", "main", ""))),
		route(mock.PostReposIssuesLabelsByOwnerByRepoByIssueNumber, posts.seq(reply(502, fixture(t, "server.502.json")))),
		route(mock.GetReposIssuesByOwnerByRepoByIssueNumber, reads.seq(reply(200, issue(12, me, "", true)))),
	)
	a, err := c.CreatePR(context.Background(), repo, key, NewPR{Base: "main", Head: "feature", Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Number != 12 || !strings.Contains(a.Warning, "add labels") {
		t.Errorf("artifact = %+v", a)
	}
	// A 502 may have been applied: every POST after the first follows a
	// read that shows the labels missing.
	if posts.count() != 1+maxRetries || reads.count() != maxRetries {
		t.Errorf("label posts = %d, reads = %d; want %d and %d", posts.count(), reads.count(), 1+maxRetries, maxRetries)
	}
}

// A 5xx after the labels were applied (create-pull-request#4370): the next
// request is a read that finds them, not a second POST that would fire the
// labeled workflows again after a person removed one.
func TestCreatePRLabelMaybeIsReadNotResent(t *testing.T) {
	key := keyFor("pr")
	var posts counter
	labeled := issue(12, me, "", true)
	labeled.Labels = []*github.Label{{Name: github.String(taskkey.Label(key))}, {Name: github.String("bug")}}
	c, _ := newTest(t, Options{},
		route(mock.PostReposPullsByOwnerByRepo, reply(201, pull(12, me, "octo", "feature", "main", ""))),
		route(mock.PostReposIssuesLabelsByOwnerByRepoByIssueNumber, posts.seq(reply(502, fixture(t, "server.502.json")), reply(200, labeled.Labels))),
		route(mock.GetReposIssuesByOwnerByRepoByIssueNumber, reply(200, labeled)),
	)
	a, err := c.CreatePR(context.Background(), repo, key, NewPR{Base: "main", Head: "feature", Title: "t", Labels: []string{"bug"}})
	if err != nil {
		t.Fatal(err)
	}
	if a.Warning != "" || posts.count() != 1 {
		t.Errorf("warning %q after %d label posts; want none after 1", a.Warning, posts.count())
	}
}

// GitHub not seeing the pull request it has just made when it is labelled
// (create-pull-request#4321: 422 "Could not resolve") applied nothing: the
// add is retried after a wait, and the labels land.
func TestCreatePRLabelsRetriedWhileNotResolvable(t *testing.T) {
	key := keyFor("pr")
	var posts counter
	var sent []string
	c, s := newTest(t, Options{},
		route(mock.PostReposPullsByOwnerByRepo, reply(201, pull(12, me, "octo", "feature", "main", ""))),
		route(mock.PostReposIssuesLabelsByOwnerByRepoByIssueNumber, posts.seq(
			reply(422, fixture(t, "not-resolvable.422.json")),
			func(w http.ResponseWriter, r *http.Request) {
				json.NewDecoder(r.Body).Decode(&sent)
				reply(200, []*github.Label{{Name: github.String(taskkey.Label(key))}})(w, r)
			})),
	)
	a, err := c.CreatePR(context.Background(), repo, key, NewPR{Base: "main", Head: "feature", Title: "t"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Warning != "" || posts.count() != 2 || len(s.waits()) != 1 || len(sent) != 1 {
		t.Errorf("warning %q, %d label posts, waits %v, sent %q; want none, 2, one wait, the key's label", a.Warning, posts.count(), s.waits(), sent)
	}
}

func TestCreatePRAlreadyExists(t *testing.T) {
	c, _ := newTest(t, Options{},
		route(mock.PostReposPullsByOwnerByRepo, reply(422, fixture(t, "pr-exists.422.json"))),
	)
	_, err := c.CreatePR(context.Background(), repo, keyFor("pr"), NewPR{Base: "main", Head: "feature", Title: "t"})
	if cl := classOf(t, err); cl != ClassExists {
		t.Fatalf("class = %v (%v), want exists", cl, err)
	}
}

func TestCreatePRRefusesLongBodyBeforeSending(t *testing.T) {
	var posts counter
	c, _ := newTest(t, Options{},
		route(mock.PostReposPullsByOwnerByRepo, posts.seq(reply(201, pull(1, me, "octo", "f", "main", "")))),
	)
	_, err := c.CreatePR(context.Background(), repo, keyFor("pr"), NewPR{Base: "main", Head: "feature", Title: "t", Body: strings.Repeat("x", taskkey.MaxBody)})
	if cl := classOf(t, err); cl != ClassRefused {
		t.Fatalf("class = %v, want refused", cl)
	}
	if !strings.Contains(err.Error(), "shorten it by") {
		t.Errorf("error = %v", err)
	}
	if posts.count() != 0 {
		t.Error("sent a body GitHub would refuse")
	}
}

func TestCreatePR502IsMaybeAndNotRetried(t *testing.T) {
	var posts counter
	c, s := newTest(t, Options{},
		route(mock.PostReposPullsByOwnerByRepo, posts.seq(reply(502, fixture(t, "server.502.json")))),
	)
	_, err := c.CreatePR(context.Background(), repo, keyFor("pr"), NewPR{Base: "main", Head: "feature", Title: "t"})
	if cl := classOf(t, err); cl != ClassMaybe {
		t.Fatalf("class = %v, want maybe", cl)
	}
	if posts.count() != 1 || len(s.waits()) != 0 {
		t.Errorf("posts = %d, waits = %v; a maybe must not be retried", posts.count(), s.waits())
	}
}

// A pull request of ours whose attempt died before labelling it, retried on
// another head with the ledger lost: only the newest-PR scan can find it.
func TestFindPRFoundAmongRecentWithoutLabel(t *testing.T) {
	key := keyFor("pr")
	var sorts []string
	c, _ := newTest(t, Options{},
		route(mock.GetReposPullsByOwnerByRepo, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			if q.Get("head") != "" {
				reply(200, []*github.PullRequest{})(w, r)
				return
			}
			sorts = append(sorts, q.Get("state")+","+q.Get("sort")+","+q.Get("direction")+","+q.Get("per_page"))
			reply(200, []*github.PullRequest{
				pull(9, "stranger", "stranger", "x", "main", taskkey.WithMarker(key, "copy")),
				pull(8, me, "octo", "attempt-1", "develop", taskkey.WithMarker(key, "wrong base")),
				pull(7, me, "octo", "attempt-1", "main", taskkey.WithMarker(key, "ours")),
			})(w, r)
		})),
		route(mock.GetReposIssuesByOwnerByRepo, reply(200, []*github.Issue{})),
	)
	res := c.FindPR(context.Background(), repo, PRQuery{Key: key, Base: "main", Heads: []string{"attempt-2"}})
	wantState(t, res, Found)
	if res.Artifact.Number != 7 {
		t.Errorf("found #%d, want #7 (ours, right base)", res.Artifact.Number)
	}
	if len(sorts) != 1 || sorts[0] != "all,created,desc,100" {
		t.Errorf("recent scans = %q, want one of state=all sort=created direction=desc per_page=100", sorts)
	}
}

// A look-up never writes: FindPR and FindIssue list by the key's label
// whether or not it exists (GitHub answers an empty list for a label that
// does not), and make no label.
func TestFindNeverWrites(t *testing.T) {
	key := keyFor("pr")
	var posts, lists, heads counter
	c, _ := newTest(t, Options{},
		route(mock.GetReposPullsByOwnerByRepo, heads.seq(reply(200, []*github.PullRequest{}))),
		route(mock.PostReposLabelsByOwnerByRepo, posts.seq(reply(201, &github.Label{Name: github.String(taskkey.Label(key))}))),
		route(mock.GetReposIssuesByOwnerByRepo, lists.seq(reply(200, []*github.Issue{}), reply(200, []*github.Issue{}))),
	)
	wantState(t, c.FindPR(context.Background(), repo, PRQuery{Key: key, Base: "main", Heads: []string{"fix"}, SkipRecent: true}), Absent)
	wantState(t, c.FindIssue(context.Background(), repo, IssueQuery{Key: key}), Absent)
	if posts.count() != 0 || heads.count() != 1 || lists.count() != 2 {
		t.Fatalf("FindPR and FindIssue: %d label creates, %d head lists, %d label lists; want 0, 1, 2", posts.count(), heads.count(), lists.count())
	}
}
