package fakegithub

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-github/v66/github"

	"github.com/ghonce/ghonce/tests/fgtest"
)

// TestActivity: reactions with who reacted (and counted in the issue's
// and the comment's reactions), and a timeline of comments, labels added
// (by whom) and mentions from other issues, oldest first.
func TestActivity(t *testing.T) {
	clock := fgtest.NewClock()
	s, gh := newTest(t, Options{Now: func() time.Time { clock.Advance(time.Second); return clock.Now() }})
	s.AddUser("alice", "tok-alice")
	ctx := context.Background()
	n := s.SeedIssue(owner, name, owner, SeedIssue{Title: "Bug", Body: "It breaks.", Labels: []string{"bug"}})
	id := s.SeedComment(owner, name, n, "alice", "Me too.")
	s.SeedReaction(owner, name, n, 0, "alice", "+1")
	s.SeedReaction(owner, name, n, 0, "alice", "+1") // once per content
	s.SeedReaction(owner, name, n, id, owner, "heart")
	s.SeedLabel(owner, name, n, "alice", "p1")
	ref := s.SeedIssue(owner, name, "alice", SeedIssue{Title: "Seen", Body: fmt.Sprintf("Like #%d.", n)})

	is, _, err := gh.Issues.Get(ctx, owner, name, n)
	if err != nil || is.GetReactions().GetTotalCount() != 1 || is.GetReactions().GetPlusOne() != 1 {
		t.Fatalf("issue reactions %+v, %v", is.GetReactions(), err)
	}
	rs, _, err := gh.Reactions.ListIssueReactions(ctx, owner, name, n, nil)
	if err != nil || len(rs) != 1 || rs[0].GetUser().GetLogin() != "alice" || rs[0].GetContent() != "+1" {
		t.Fatalf("issue reactions %v, %v", rs, err)
	}
	cm, _, err := gh.Issues.GetComment(ctx, owner, name, id)
	if err != nil || cm.GetReactions().GetHeart() != 1 {
		t.Fatalf("comment reactions %+v, %v", cm.GetReactions(), err)
	}
	evs, _, err := gh.Issues.ListIssueTimeline(ctx, owner, name, n, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range evs {
		got = append(got, ev.GetEvent()+":"+ev.GetActor().GetLogin()+":"+ev.GetLabel().GetName())
		if ev.GetEvent() == "cross-referenced" && ev.GetSource().GetIssue().GetNumber() != ref {
			t.Errorf("cross-reference from #%d, want #%d", ev.GetSource().GetIssue().GetNumber(), ref)
		}
	}
	want := []string{"labeled:" + owner + ":bug", "commented:alice:", "labeled:alice:p1", "cross-referenced:alice:"}
	if len(got) != len(want) {
		t.Fatalf("timeline %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("timeline %v, want %v", got, want)
		}
	}
	if _, _, err := gh.Issues.ListIssueTimeline(ctx, owner, name, 99, nil); err == nil {
		t.Error("the timeline of a missing issue answered")
	}
}

// TestPullCommitsAndForcePush: a pull request lists the commits its base
// lacks, oldest first, by who made them; a force-push through the API
// records head_ref_force_pushed by who pushed, a fast-forward nothing.
func TestPullCommitsAndForcePush(t *testing.T) {
	s, gh := newTest(t, Options{})
	s.AddUser("alice", "tok-alice")
	ctx := context.Background()
	first := s.AddCommitBy(owner, name, "main", owner)
	s.SetRef(owner, name, "feature", first)
	s.SetRef(owner, name, "feature", s.AddCommitBy(owner, name, "feature", "alice"))
	n := s.SeedPR(owner, name, owner, SeedPR{Title: "F", Body: "b", Head: "feature"})
	cs, _, err := gh.PullRequests.ListCommits(ctx, owner, name, n, nil)
	if err != nil || len(cs) != 2 || cs[0].GetSHA() != first || cs[0].GetAuthor().GetLogin() != owner || cs[1].GetCommitter().GetLogin() != "alice" {
		t.Fatalf("commits %v, %v: want octo's then alice's", cs, err)
	}
	alice := fgtest.Client(t, s, "tok-alice")
	ahead := s.AddCommitBy(owner, name, "feature", "alice")
	for _, sha := range []string{ahead, s.AddCommitSameTree(owner, name, first, "alice")} {
		if _, _, err := alice.Git.UpdateRef(ctx, owner, name, &github.Reference{Ref: github.String("refs/heads/feature"), Object: &github.GitObject{SHA: github.String(sha)}}, true); err != nil {
			t.Fatal(err)
		}
	}
	evs, _, err := gh.Issues.ListIssueTimeline(ctx, owner, name, n, nil)
	if err != nil || len(evs) != 1 || evs[0].GetEvent() != "head_ref_force_pushed" || evs[0].GetActor().GetLogin() != "alice" {
		t.Fatalf("timeline %v, %v: want one force-push by alice", evs, err)
	}
}
