package ghcheck_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/taskkey"
	"github.com/ghonce/ghonce/tests/testworld"
)

var releaseRepo = ghcheck.Repo{Owner: owner, Name: name}

// releaseWorld is the test world's fake and clients for our identity and
// a stranger's.
func releaseWorld(t *testing.T) (w *testworld.World, ours, stranger *ghcheck.Client) {
	t.Helper()
	w = testworld.New(t)
	sleep := func(context.Context, time.Duration) error { return nil }
	return w, w.Client(ghcheck.Options{Sleep: sleep}), w.Client(ghcheck.Options{Token: testworld.StrangerToken, Sleep: sleep})
}

func releaseKey(tag string) string {
	return taskkey.Key(taskkey.Identity{Task: "T-1", Step: "release-create", Kind: "release", Repo: repo, Target: tag})
}

func wantRelease(t *testing.T, res ghcheck.Result, st ghcheck.State) {
	t.Helper()
	if res.State != st {
		t.Fatalf("state %s (%v), want %s", res.State, res.Err, st)
	}
}

// A published release is found by its tag; GitHub made the tag at the
// default branch; a second create of the tag is ClassExists.
func TestReleaseCreatedIsFoundAndTagIsUnique(t *testing.T) {
	t.Parallel()
	w, c, _ := releaseWorld(t)
	ctx, key := context.Background(), releaseKey("v1.0.0")
	wantRelease(t, c.FindRelease(ctx, releaseRepo, key, "v1.0.0"), ghcheck.Absent)
	art, err := c.CreateRelease(ctx, releaseRepo, key, ghcheck.NewRelease{Tag: "v1.0.0", Name: "One", Body: "Notes."})
	if err != nil || art.ID == 0 || art.State != "published" || !taskkey.HasMarker(art.Body, key) {
		t.Fatalf("create: %+v, %v; want a published release whose notes carry the marker", art, err)
	}
	if sha, ok := w.GitHub.Branch(owner, name, "main"); !ok || sha != w.Main {
		t.Fatalf("main at %s", sha)
	}
	res := c.FindRelease(ctx, releaseRepo, key, "v1.0.0")
	wantRelease(t, res, ghcheck.Found)
	if res.Artifact.ID != art.ID || res.Artifact.Title != "One" {
		t.Fatalf("found %+v, want release %d", res.Artifact, art.ID)
	}
	_, err = c.CreateRelease(ctx, releaseRepo, key, ghcheck.NewRelease{Tag: "v1.0.0", Body: "Notes."})
	if ghcheck.Classify(err) != ghcheck.ClassExists || !strings.Contains(err.Error(), "one published release per tag") {
		t.Fatalf("second create: %v, want ClassExists saying a tag has one release", err)
	}
}

// A draft is not served by tag: it is found in the listing, on any page;
// a stranger's draft with our marker, and ours with another key, are not.
func TestReleaseDraftIsFoundInTheListing(t *testing.T) {
	t.Parallel()
	w, c, stranger := releaseWorld(t)
	ctx, key := context.Background(), releaseKey("v2.0.0")
	if _, err := stranger.CreateRelease(ctx, releaseRepo, key, ghcheck.NewRelease{Tag: "v2.0.0", Draft: true}); err != nil {
		t.Fatal(err)
	}
	mine, err := c.CreateRelease(ctx, releaseRepo, key, ghcheck.NewRelease{Tag: "v2.0.0", Draft: true, Body: "Draft."})
	if err != nil || mine.State != "draft" {
		t.Fatalf("draft: %+v, %v", mine, err)
	}
	// Our draft on the listing's second page (newest first), behind
	// releases made straight through go-github (ghcheck paces its writes).
	gh := github.NewClient(nil).WithAuthToken(testworld.Token)
	gh.BaseURL, _ = gh.BaseURL.Parse(w.GitHub.URL())
	for range 120 {
		if _, _, err := gh.Repositories.CreateRelease(ctx, owner, name, &github.RepositoryRelease{TagName: github.String("v2.0.0"), Draft: github.Bool(true)}); err != nil {
			t.Fatal(err)
		}
	}
	res := c.FindRelease(ctx, releaseRepo, key, "v2.0.0")
	wantRelease(t, res, ghcheck.Found)
	if res.Artifact.ID != mine.ID {
		t.Fatalf("found %d, want our draft %d", res.Artifact.ID, mine.ID)
	}
}

// A published release of the tag that is not ours is a conflict: a
// stranger's with our marker, or our identity's without it.
func TestReleaseTagTakenByAnotherIsAConflict(t *testing.T) {
	t.Parallel()
	_, c, stranger := releaseWorld(t)
	ctx := context.Background()
	if _, err := stranger.CreateRelease(ctx, releaseRepo, releaseKey("v3"), ghcheck.NewRelease{Tag: "v3"}); err != nil {
		t.Fatal(err)
	}
	res := c.FindRelease(ctx, releaseRepo, releaseKey("v3"), "v3")
	wantRelease(t, res, ghcheck.Conflict)
	if !strings.Contains(res.Err.Error(), testworld.Stranger) || !strings.Contains(res.Err.Error(), "choose another tag") {
		t.Fatalf("conflict says %q, want whose release it is and what to do", res.Err)
	}
	if _, err := c.CreateRelease(ctx, releaseRepo, releaseKey("other"), ghcheck.NewRelease{Tag: "v4"}); err != nil {
		t.Fatal(err)
	}
	wantRelease(t, c.FindRelease(ctx, releaseRepo, releaseKey("v4"), "v4"), ghcheck.Conflict)
}

// What GitHub would refuse is refused before anything is sent.
func TestCheckReleaseRefusesBeforeSending(t *testing.T) {
	t.Parallel()
	w, c, _ := releaseWorld(t)
	key := releaseKey("v1")
	for _, tc := range []struct{ tag, target, body, want string }{
		{"", "", "", "empty"},
		{"v1..2", "", "", `".."`},
		{"v1 beta", "", "", "' '"},
		{"v1", "main~1", "", "target"},
		{"v1", "", strings.Repeat("n", ghcheck.MaxReleaseBody), "shorten them by"},
	} {
		err := ghcheck.CheckRelease(key, tc.tag, tc.target, tc.body)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("CheckRelease(%q, %q, %d runes): %v, want it to say %s", tc.tag, tc.target, len(tc.body), err, tc.want)
		}
		_, err = c.CreateRelease(context.Background(), releaseRepo, key, ghcheck.NewRelease{Tag: tc.tag, Target: tc.target, Body: tc.body})
		if ghcheck.Classify(err) != ghcheck.ClassRefused {
			t.Errorf("create %q: %v, want refused", tc.tag, err)
		}
	}
	if n := w.GitHub.Writes(); n != 0 {
		t.Fatalf("%d writes reached GitHub", n)
	}
	if err := ghcheck.CheckRelease(key, "release/v1#2", "0123456789abcdef0123456789abcdef01234567", ""); err != nil {
		t.Fatalf("a tag with / and # and a SHA target: %v", err)
	}
}

// A tag that needs escaping in a path, and a target GitHub does not know.
func TestReleaseOddTagAndUnknownTarget(t *testing.T) {
	t.Parallel()
	_, c, _ := releaseWorld(t)
	ctx, tag := context.Background(), "release/v1#2"
	key := releaseKey(tag)
	if _, err := c.CreateRelease(ctx, releaseRepo, key, ghcheck.NewRelease{Tag: tag}); err != nil {
		t.Fatal(err)
	}
	wantRelease(t, c.FindRelease(ctx, releaseRepo, releaseKey("v9"), tag), ghcheck.Conflict)
	_, err := c.CreateRelease(ctx, releaseRepo, releaseKey("v5"), ghcheck.NewRelease{Tag: "v5", Target: "no-such-branch"})
	if ghcheck.Classify(err) != ghcheck.ClassRefused || !strings.Contains(err.Error(), "no-such-branch") {
		t.Fatalf("unknown target: %v, want refused naming it", err)
	}
}

// A failed read is unknown, never absent; a dropped create's answer is
// maybe, and the create is not sent again.
func TestReleaseMaybeAnswers(t *testing.T) {
	t.Parallel()
	w, c, _ := releaseWorld(t)
	ctx, key := context.Background(), releaseKey("v6")
	w.GitHub.Inject(fixtures.Fault{Match: fixtures.MatchMethodPath("GET", "/repos/"+repo+"/releases"), Kind: fixtures.Status502BeforeCommit, Times: 100})
	wantRelease(t, c.FindRelease(ctx, releaseRepo, key, "v6"), ghcheck.Unknown)
	w.GitHub.ClearFaults()
	w.GitHub.Inject(fixtures.Fault{Match: fixtures.MatchMethodPath("POST", "/repos/"+repo+"/releases"), Kind: fixtures.DropAfterCommit})
	_, err := c.CreateRelease(ctx, releaseRepo, key, ghcheck.NewRelease{Tag: "v6"})
	var ce *ghcheck.CreateError
	if !errors.As(err, &ce) || ce.Class != ghcheck.ClassMaybe {
		t.Fatalf("dropped answer: %v, want ClassMaybe", err)
	}
	if n := len(w.GitHub.Releases(owner, name)); n != 1 {
		t.Fatalf("%d releases, want the one the dropped create made", n)
	}
	wantRelease(t, c.FindRelease(ctx, releaseRepo, key, "v6"), ghcheck.Found)
}
