package fakegithub

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/ghonce/ghonce/internal/fakegithub/fgtest"
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
