package ghcheck_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
)

// metadataWorld is a fake with a pull request by bLogin, collaborators
// monalisa and hubot, team core of the owner and milestones v1 (closed) and v2.
func metadataWorld(t *testing.T) (*fixtures.Server, *ghcheck.Client, int) {
	t.Helper()
	s := budgetFake(t)
	for _, l := range []string{"monalisa", "hubot", bLogin} {
		s.AddCollaborator(owner, name, l)
	}
	s.AddTeam(owner, name, "core")
	s.SeedMilestone(owner, name, "v1", "closed")
	s.SeedMilestone(owner, name, "v2", "open")
	s.SetRef(owner, name, "fix", s.AddCommit(owner, name, "main"))
	n := s.SeedPR(owner, name, "someone", fixtures.SeedPR{Title: "Fix", Head: "fix"})
	return s, listingClient(t, s), n
}

func writesTo(s *fixtures.Server) []string {
	var out []string
	for _, q := range s.Requests() {
		if q.Method != "GET" {
			out = append(out, q.Method+" "+q.Path)
		}
	}
	return out
}

// ApplyMetadata sends what is missing and nothing else: a second run with
// the same asks reads and writes nothing; "@me" is the token's login; a
// reviewer who already reviewed is not asked again; a milestone is found
// by title (closed ones too) or number.
func TestApplyMetadataSendsOnlyWhatIsMissing(t *testing.T) {
	s, c, n := metadataWorld(t)
	r := ghcheck.Repo{Owner: owner, Name: name}
	s.SeedReview(owner, name, n, "hubot", "COMMENTED", "looked")
	m := ghcheck.Metadata{Assignees: []string{"@me", "MonaLisa"}, Reviewers: []string{"hubot", "monalisa", owner + "/core"}, Milestone: "V1"}
	if err := c.ApplyMetadata(context.Background(), r, n, true, m); err != nil {
		t.Fatal(err)
	}
	pr := s.PullRequests(owner, name)[0]
	if !slices.Equal(pr.Assignees, []string{bLogin, "monalisa"}) || !slices.Equal(pr.Reviewers, []string{"monalisa", owner + "/core"}) || pr.Milestone != "v1" {
		t.Fatalf("after ApplyMetadata: assignees %q, review requests %q, milestone %q", pr.Assignees, pr.Reviewers, pr.Milestone)
	}
	want := []string{"POST /repos/" + repo + "/issues/1/assignees", "POST /repos/" + repo + "/pulls/1/requested_reviewers", "PATCH /repos/" + repo + "/issues/1"}
	if got := writesTo(s); !slices.Equal(sorted(got), sorted(want)) { // sent together
		t.Fatalf("writes %q, want %q", got, want)
	}
	m.Milestone = "1" // by number: the same one
	if err := c.ApplyMetadata(context.Background(), r, n, true, m); err != nil {
		t.Fatal(err)
	}
	if got := writesTo(s); len(got) != len(want) {
		t.Fatalf("a second run wrote %q", got[len(want):])
	}
}

// What GitHub refuses or drops is an error naming it and what to do; the
// other parts are still applied.
func TestApplyMetadataFailuresSayWhat(t *testing.T) {
	s, c, n := metadataWorld(t)
	r := ghcheck.Repo{Owner: owner, Name: name}
	err := c.ApplyMetadata(context.Background(), r, n, true, ghcheck.Metadata{Assignees: []string{"stranger"}, Reviewers: []string{"outsider"}, Milestone: "v9"})
	if err == nil {
		t.Fatal("want an error")
	}
	for _, says := range []string{"did not assign stranger", "not a collaborator of " + repo, "request reviews from outsider", "GitHub answered 422", "no milestone with that title", "create it"} {
		if !strings.Contains(err.Error(), says) {
			t.Errorf("error %q does not say %q", err, says)
		}
	}
	err = c.ApplyMetadata(context.Background(), r, n, true, ghcheck.Metadata{Assignees: []string{"hubot"}, Reviewers: []string{"someone"}})
	if err == nil || !strings.Contains(err.Error(), "author") {
		t.Fatalf("the author as reviewer: %v", err)
	}
	if pr := s.PullRequests(owner, name)[0]; !slices.Equal(pr.Assignees, []string{"hubot"}) {
		t.Fatalf("the assignee was not added beside the refused review: %q", pr.Assignees)
	}
	if err := c.ApplyMetadata(context.Background(), r, 99, false, ghcheck.Metadata{Milestone: "v2"}); err == nil || !strings.Contains(err.Error(), "#99 does not exist") {
		t.Fatalf("no such issue: %v", err)
	}
}

func sorted(xs []string) []string {
	ys := slices.Clone(xs)
	slices.Sort(ys)
	return ys
}

// Every read is made at once, then every write: two round trips for
// assignees, reviewers and a milestone together; on a pull request this
// run created, the milestones are the only read.
func TestApplyMetadataInTwoRoundTrips(t *testing.T) {
	for _, created := range []bool{false, true} {
		s, c, n := metadataWorld(t)
		r := ghcheck.Repo{Owner: owner, Name: name}
		m := ghcheck.Metadata{Assignees: []string{"@me", "monalisa"}, Reviewers: []string{"hubot", owner + "/core"}, Milestone: "v1", Created: created}
		if _, err := c.Login(context.Background()); err != nil {
			t.Fatal(err)
		}
		s.WaitIdle()
		before := len(s.Requests())
		s.SetLatency(50 * time.Millisecond)
		err := c.ApplyMetadata(context.Background(), r, n, true, m)
		s.SetLatency(0)
		if err != nil {
			t.Fatal(err)
		}
		s.WaitIdle()
		reqs := s.Requests()[before:]
		var reads []string
		for _, q := range reqs {
			if q.Method == "GET" {
				reads = append(reads, q.Path)
			}
		}
		if trips := fixtures.RoundTrips(reqs); trips != 2 {
			t.Errorf("created %t: %d round trips one after another, want 2 (the reads, then the writes): %v", created, trips, reqs)
		}
		if created && (len(reads) != 1 || !strings.HasSuffix(reads[0], "/milestones")) {
			t.Errorf("created: read %q, want the milestones only", reads)
		}
		pr := s.PullRequests(owner, name)[0]
		if !slices.Equal(pr.Assignees, []string{bLogin, "monalisa"}) || !slices.Equal(pr.Reviewers, []string{"hubot", owner + "/core"}) || pr.Milestone != "v1" {
			t.Errorf("created %t: assignees %q, review requests %q, milestone %q", created, pr.Assignees, pr.Reviewers, pr.Milestone)
		}
	}
}
