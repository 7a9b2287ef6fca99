package reconcile_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/audit"
	"github.com/ghonce/ghonce/internal/fakegithub"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
	"github.com/ghonce/ghonce/tests/testworld"
)

// A release's good and bad shapes, for shape_test.go's
// TestPrepareRefusesEveryShapeGitHubsLayerRefuses: tags, targets and notes
// too long.
func init() {
	shapesOf["release"] = func(add func(reconcile.Spec)) {
		const sha = "0123456789abcdef0123456789abcdef01234567"
		for _, tag := range []string{"v1", "release/v1#2", "", "a..b", "x.lock", "has space", "refs/tags/v1", "@"} {
			for _, target := range []string{"", "main", sha, "a b", "x/"} {
				for _, body := range []string{"b", strings.Repeat("x", ghcheck.MaxReleaseBody)} {
					add(reconcile.Release{TagName: tag, TargetCommitish: target, Body: body})
				}
			}
		}
	}
}

var postReleases = fixtures.MatchMethodPath("POST", "/repos/"+repo+"/releases")

func releaseAction(tag, notes string, draft bool) reconcile.Action {
	return reconcile.Action{Task: "RELEASE-1", Repo: repo, Spec: reconcile.Release{TagName: tag, Name: "Release " + tag, Body: notes, Draft: draft}}
}

func (w *world) releases() []fakegithub.Release { return w.GitHub.Releases(owner, name) }

// Created once, its tag made at the default branch; a replay sends
// nothing; a first create costs two round trips and one write.
func TestReleaseCreatedOnceAndReplayedFree(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.establish()
	e, _ := w.budgetEngine()
	w.GitHub.SetLatency(40 * time.Millisecond)
	before := len(w.GitHub.Requests())
	r := mustDo(t, e, releaseAction("v1.0.0", "First.", false))
	reqs := w.GitHub.Requests()[before:]
	w.GitHub.SetLatency(0)
	if r.Outcome != outcome.Created || r.Step != "release-create" || !strings.Contains(r.URL, "/releases/tag/v1.0.0") {
		t.Fatalf("first run: %+v, want created under the default step with the release's page", r)
	}
	if n := fixtures.RoundTrips(reqs); n > 2 || w.writes() != 2 { // the setup's comment, the release
		t.Fatalf("first create: %d round trips, %d writes in all; want at most 2 and one for the release", n, w.writes())
	}
	before = len(w.GitHub.Requests())
	if again := mustDo(t, w.engine(), releaseAction("v1.0.0", "First.", false)); again.Outcome != outcome.Skipped || again.ID != r.ID {
		t.Fatalf("replay: %+v, want skipped", again)
	}
	if n := len(w.GitHub.Requests()) - before; n != 0 {
		t.Fatalf("replay sent %d requests", n)
	}
	if rs := w.releases(); len(rs) != 1 || rs[0].Draft || !taskkey.HasMarker(rs[0].Body, r.Key) {
		t.Fatalf("releases %+v, want one published, tagged with the key", rs)
	}
}

// A maybe answer (dropped after GitHub stored it, a 504 after it) stays
// unconfirmed; the rerun finds the release, a draft included, and makes
// no second.
func TestReleaseMaybeAnswerIsFoundNotMadeTwice(t *testing.T) {
	t.Parallel()
	for _, fault := range []fixtures.FaultKind{fixtures.DropAfterCommit, fixtures.Status504AfterCommit} {
		for _, draft := range []bool{false, true} {
			t.Run(fault.String()+map[bool]string{true: " draft"}[draft], func(t *testing.T) {
				t.Parallel()
				w := newWorld(t)
				w.GitHub.Inject(fixtures.Fault{Match: postReleases, Kind: fault})
				_, err := do(w.ctx, w.engine(), releaseAction("v2", "Notes.", draft))
				var uc *outcome.UnconfirmedError
				if !errors.As(err, &uc) {
					t.Fatalf("maybe answer: %v, want *UnconfirmedError", err)
				}
				r := mustDo(t, w.engine(), releaseAction("v2", "Notes.", draft))
				if r.Outcome != outcome.Found || len(w.releases()) != 1 {
					t.Fatalf("rerun: %s with %d releases, want found and one", r.Outcome, len(w.releases()))
				}
			})
		}
	}
}

// A 502 before GitHub stored anything: the rerun looks, finds nothing
// and creates.
func TestRelease502ThenCreated(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.GitHub.Inject(fixtures.Fault{Match: postReleases, Kind: fixtures.Status502BeforeCommit})
	var uc *outcome.UnconfirmedError
	if _, err := do(w.ctx, w.engine(), releaseAction("v3", "", true)); !errors.As(err, &uc) {
		t.Fatalf("502: %v, want *UnconfirmedError (a 5xx after sending is a maybe)", err)
	}
	if r := mustDo(t, w.engine(), releaseAction("v3", "", true)); r.Outcome != outcome.Created || len(w.releases()) != 1 {
		t.Fatalf("rerun: %s, %d releases; want created, one", r.Outcome, len(w.releases()))
	}
}

// A stranger's draft carrying our marker is not ours; a stranger's
// published release of the tag is a conflict, and nothing is made.
func TestReleaseLookAlikesAreNotOurs(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	stranger := w.client(testworld.StrangerToken)
	a := releaseAction("v4", "Notes.", true)
	key := keyOf(t, a)
	if _, err := stranger.CreateRelease(w.ctx, ghcheck.Repo{Owner: owner, Name: name}, key, ghcheck.NewRelease{Tag: "v4", Draft: true}); err != nil {
		t.Fatal(err)
	}
	if r := mustDo(t, w.engine(), a); r.Outcome != outcome.Created || len(w.releases()) != 2 {
		t.Fatalf("%s with %d releases: want ours created beside the stranger's", r.Outcome, len(w.releases()))
	}

	b := releaseAction("v5", "Notes.", false)
	if _, err := stranger.CreateRelease(w.ctx, ghcheck.Repo{Owner: owner, Name: name}, keyOf(t, b), ghcheck.NewRelease{Tag: "v5"}); err != nil {
		t.Fatal(err)
	}
	writes := w.writes()
	_, err := do(w.ctx, w.engine(), b)
	var ce *outcome.ConflictError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), testworld.Stranger) {
		t.Fatalf("tag taken: %v, want a *ConflictError naming whose release it is", err)
	}
	if w.writes() != writes {
		t.Fatal("a create was sent for a tag whose published release is someone else's")
	}
}

// Racers on one ledger make one release.
func TestReleaseRacersOnOneLedger(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var wg sync.WaitGroup
	outcomes := make([]outcome.Outcome, 6)
	for i := range outcomes {
		e := w.engine(func(c *reconcile.Config) { c.Owner = reconcile.NewOwner(); c.Wait = time.Minute })
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r, err := do(w.ctx, e, releaseAction("v6", "Notes.", true)); err == nil {
				outcomes[i] = r.Outcome
			}
		}()
	}
	wg.Wait()
	created := 0
	for _, o := range outcomes {
		if o == outcome.Created {
			created++
		}
	}
	if created != 1 || len(w.releases()) != 1 {
		t.Fatalf("outcomes %v, %d releases; want one created", outcomes, len(w.releases()))
	}
}

// The tag names the act: reworded notes under a done key are that release
// (a warning), never the exit-7 question; a lost ledger finds it too.
func TestReleaseRewordedNotesAreTheSameRelease(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	first := mustDo(t, w.engine(), releaseAction("v7", "Fixes the parser.", false))
	r, err := do(w.ctx, w.engine(), releaseAction("v7", "This release fixes a parser bug.", false))
	if err != nil || r.Outcome != outcome.Skipped || r.ID != first.ID || !r.PayloadChanged || r.Warning == "" {
		t.Fatalf("reworded: %+v, %v; want the first, skipped, with a warning", r, err)
	}
	if len(w.releases()) != 1 {
		t.Fatalf("%d releases", len(w.releases()))
	}
}

// Prepare refuses what GitHub's layer would, naming the field.
func TestReleaseValidate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec  reconcile.Release
		field string
	}{
		{reconcile.Release{}, "tag_name"},
		{reconcile.Release{TagName: "v1..2"}, "tag_name"},
		{reconcile.Release{TagName: "v1", TargetCommitish: "a b"}, "target_commitish"},
		{reconcile.Release{TagName: "v1", Body: strings.Repeat("n", ghcheck.MaxReleaseBody)}, "body"},
	} {
		_, err := reconcile.Prepare(reconcile.Action{Task: "T", Repo: repo, Spec: tc.spec})
		var inv *reconcile.InvalidError
		if !errors.As(err, &inv) || inv.Field != tc.field {
			t.Errorf("%+v: %v, want an *InvalidError on %s", tc.spec, err, tc.field)
		}
	}
}

// A GitHub that cannot make releases is an error that says so, not a panic.
func TestReleaseOnAGitHubWithoutReleases(t *testing.T) {
	t.Parallel()
	env := &reconcile.Env{GitHub: struct{ reconcile.GitHub }{}}
	res := reconcile.Release{TagName: "v1"}.Find(context.Background(), env, "k")
	if res.State != effect.Unknown || ghcheck.Classify(res.Err) != ghcheck.ClassNotSent || !strings.Contains(res.Err.Error(), "lacks the methods") {
		t.Fatalf("find: %+v", res)
	}
	_, err := reconcile.Release{TagName: "v1"}.Create(context.Background(), env, "k")
	if ghcheck.Classify(err) != ghcheck.ClassNotSent {
		t.Fatalf("create: %v, want not sent", err)
	}
}

// What `ghonce audit` makes of the drafts a naive run left (GitHub lets
// drafts share a tag; a published release made twice is refused, as
// TestEveryKindsExampleMadeTwice in internal/audit finds): they group by
// the key their notes carry, or by the same author, tag, title and notes;
// a person's copy, or other notes, never.
func TestAuditGroupsDraftsOfOneTag(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	mk := func(tok, tag, title, notes string) {
		c := github.NewClient(nil).WithAuthToken(tok)
		c.BaseURL, _ = c.BaseURL.Parse(strings.TrimSuffix(w.GitHub.URL(), "/") + "/")
		if _, _, err := c.Repositories.CreateRelease(w.ctx, owner, name, &github.RepositoryRelease{TagName: &tag, Name: &title, Body: &notes, Draft: github.Bool(true)}); err != nil {
			t.Fatal(err)
		}
	}
	k := keyOf(t, releaseAction("v2", "", true))
	mk(token, "v1", "One", "Notes.")
	mk(token, "v1", "One", "Notes.")
	mk(otherT, "v1", "One", "Notes.")
	mk(token, "v1", "One", "Other notes.")
	mk(token, "v2", "Two", taskkey.WithMarker(k, "First."))
	mk(token, "v2", "Two", taskkey.WithMarker(k, "Reworded."))
	rep, err := audit.Find(w.ctx, w.client(token), audit.Options{Repo: ghcheck.Repo{Owner: owner, Name: name}, Kinds: []string{"release"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Listed["releases"] != 6 || len(rep.Groups) != 2 {
		t.Fatalf("listed %d releases, %d groups; want 6 and 2: %+v", rep.Listed["releases"], len(rep.Groups), rep.Groups)
	}
	for _, g := range rep.Groups {
		d := g.Duplicates
		if g.Kind != "release" || len(d) != 1 || d[0].ID <= g.Keep.ID || d[0].Name != g.Keep.Name {
			t.Errorf("group %+v: want one newer duplicate of the kept release, of its tag", g)
		}
		switch g.Evidence {
		case audit.EvidenceExact:
			if g.Keep.Name != "v1" || d[0].Differs != "" {
				t.Errorf("exact group: kept %s, differs %q", g.Keep.Ref(g.Kind), d[0].Differs)
			}
		case audit.EvidenceKey:
			if g.Keep.Name != "v2" || d[0].Differs == "" {
				t.Errorf("key group: kept %s, differs %q; want v2's, the reworded one reported as differing", g.Keep.Ref(g.Kind), d[0].Differs)
			}
		}
	}
}
