package main_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/fakegithub"
	"github.com/ghonce/ghonce/taskkey"
)

func prArgs(head, title, body string) []string {
	return []string{"pr", "create", "--task", "ISSUE-42", "--base", "main", "--head", head, "--title", title, "--body", body}
}

func (w *world) ourPRs() []fakegithub.PR {
	var out []fakegithub.PR
	for _, p := range w.fake.PullRequests(owner, name) {
		if p.Author == login {
			out = append(out, p)
		}
	}
	return out
}

// An agent killed after GitHub created its PR restarts, pushes to another
// branch and rewords the body: one PR, found, payload_changed. With the
// ledger also lost, the key's label (added right after the PR) still finds
// it when the kill came after the label.
func TestPRRetryOnAnotherHeadWithRewordedBody(t *testing.T) {
	for _, tc := range []struct {
		name string
		kill fixtures.CommitKind
		lose bool
	}{
		{"killed after create, ledger kept", fakegithub.KindPull, false},
		{"killed after labelling, ledger deleted", fakegithub.KindLabel, true},
	} {
		tc := tc
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.push("agent/fix-42-attempt-1")
			w.crash(tc.kill, prArgs("agent/fix-42-attempt-1", "Fix #42", "Generated fix.")...)
			made := w.ourPRs()
			if len(made) != 1 {
				t.Fatalf("after the kill: %d PRs, want 1", len(made))
			}
			if tc.lose {
				w.deleteLedger()
			}
			w.push("agent/fix-42-attempt-2")
			retry := prArgs("agent/fix-42-attempt-2", "Fix #42", "A reworded description of the same fix.")
			r := w.ok(retry...)
			// payload_changed compares with the payload in the ledger: with
			// the ledger lost it is not asked for (ghonce does not compare
			// the found PR's head and body with this run's).
			if r.Outcome != "found" || !tc.lose && !r.PayloadChanged || r.Number != made[0].Number {
				t.Fatalf("retry on another head with a new body: %+v, want found, payload_changed, #%d", r, made[0].Number)
			}
			if prs := w.ourPRs(); len(prs) != 1 || prs[0].Head != "agent/fix-42-attempt-1" || prs[0].Title != "Fix #42" {
				t.Fatalf("PRs after the retry: %+v, want only the first, untouched", prs)
			}
			// Found, with the ledger kept: what differs is named, and the
			// default --on-change warn says the PR was left as it is.
			if !tc.lose && (strings.Join(r.Changed, ",") != "body,head" || !strings.Contains(r.Warning, "left as it is")) {
				t.Fatalf("found on another head: changed %v, warning %q; want [body head] and a warning", r.Changed, r.Warning)
			}
			again := w.ok(retry...)
			if again.Outcome != "skipped" || !tc.lose && !again.PayloadChanged || again.Number != made[0].Number {
				t.Fatalf("run after success with the new body: %+v, want skipped, payload_changed, #%d", again, made[0].Number)
			}
		})
	}
}

// A stranger's PR on another branch that carries our marker in its body
// and our label is not adopted: ghonce opens its own.
func TestStrangersPRWithOurMarkerAndLabelIsNotAdopted(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	key := w.key("ISSUE-42", "pr-create", "pr", "main")
	w.push("mallory/lookalike")
	theirs := w.fake.SeedPR(owner, name, stranger, fixtures.SeedPR{
		Title: "Fix #42", Head: "mallory/lookalike", Body: taskkey.WithMarker(key, "Copied."),
		Labels: []string{taskkey.Label(key)},
	})
	w.push("fix-42")
	r := w.ok(prArgs("fix-42", "Fix #42", "Generated fix.")...)
	if r.Outcome != "created" || r.Number == theirs || r.Key != key {
		t.Fatalf("with a look-alike by %s as #%d: %+v, want created, a new number, key %s", stranger, theirs, r, key)
	}
	ours := w.ourPRs()
	if len(ours) != 1 || ours[0].Number != r.Number || ours[0].Head != "fix-42" {
		t.Fatalf("our PRs: %+v, want one, #%d on fix-42", ours, r.Number)
	}
	if n := len(w.fake.PullRequests(owner, name)); n != 2 {
		t.Fatalf("%d PRs, want 2 (theirs and ours)", n)
	}
	// With the ledger lost, the rerun finds ours, not theirs.
	w.deleteLedger()
	again := w.ok(prArgs("fix-42", "Fix #42", "Generated fix.")...)
	if again.Outcome != "found" || again.Number != r.Number {
		t.Fatalf("rerun with the ledger lost: %+v, want found #%d (ours, not the stranger's #%d)", again, r.Number, theirs)
	}
}

// seedThread makes an issue with n earlier comments: ours without a
// marker, a stranger's, and ours carrying other keys' markers.
func (w *world) seedThread(n int) int {
	number := w.fake.SeedIssue(owner, name, stranger, fixtures.SeedIssue{Title: "Long discussion", Body: "Let's talk."})
	other := w.key("ISSUE-7", "issue-comment", "comment", strconv.Itoa(number))
	for i := range n {
		switch i % 3 {
		case 0:
			w.fake.SeedComment(owner, name, number, login, fmt.Sprintf("Status update %d.", i))
		case 1:
			w.fake.SeedComment(owner, name, number, stranger, fmt.Sprintf("Thanks %d!", i))
		default:
			w.fake.SeedComment(owner, name, number, login, taskkey.WithMarker(other, fmt.Sprintf("Another task's note %d.", i)))
		}
	}
	return number
}

func commentArgs(number int, body string) []string {
	return []string{"issue", "comment", strconv.Itoa(number), "--task", "ISSUE-42", "--body", body}
}

// A thread of 150 comments: ours is the 151st, on the second page of 100.
// Killed at commit, the rerun finds it, with the ledger kept or lost.
func TestCommentPastTheFirstPageIsFound(t *testing.T) {
	for _, lose := range []bool{false, true} {
		lose := lose
		t.Run(fmt.Sprintf("ledger deleted=%v", lose), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			number := w.seedThread(150)
			key := w.key("ISSUE-42", "issue-comment", "comment", strconv.Itoa(number))
			w.crash(fakegithub.KindComment, commentArgs(number, "Opened a fix.")...)
			mine := w.ourComments(number, key)
			if len(mine) != 1 || len(w.fake.Comments(owner, name, number)) != 151 {
				t.Fatalf("after the kill: %d comments of ours, %d in all; want 1 and 151", len(mine), len(w.fake.Comments(owner, name, number)))
			}
			if lose {
				w.deleteLedger()
			}
			start := len(w.fake.Requests())
			r := w.ok(commentArgs(number, "Opened a fix.")...)
			if r.Outcome != "found" || r.ID != mine[0].ID {
				t.Fatalf("rerun: %+v, want found, id %d", r, mine[0].ID)
			}
			if n := len(w.ourComments(number, key)); n != 1 || len(w.fake.Comments(owner, name, number)) != 151 {
				t.Fatalf("after the rerun: %d comments of ours, want 1", n)
			}
			paged := false
			for _, q := range w.fake.Requests()[start:] {
				paged = paged || strings.HasSuffix(q.Path, fmt.Sprintf("/issues/%d/comments", number)) && strings.Contains(q.RawQuery, "page=2")
			}
			if !paged {
				t.Fatalf("the rerun never read page 2 of the thread")
			}
		})
	}
}

// A comment by a stranger carrying our marker, posted before our first
// run, is not ours: ghonce posts its own, once, and later finds its own.
func TestStrangersLookAlikeCommentIsNotAdopted(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	number := w.seedThread(10)
	key := w.key("ISSUE-42", "issue-comment", "comment", strconv.Itoa(number))
	theirs := w.fake.SeedComment(owner, name, number, stranger, taskkey.WithMarker(key, "Opened a fix."))
	r := w.ok(commentArgs(number, "Opened a fix.")...)
	if r.Outcome != "created" || r.ID == theirs {
		t.Fatalf("with a look-alike by %s: %+v, want created, not id %d", stranger, r, theirs)
	}
	mine := w.ourComments(number, key)
	if len(mine) != 1 || mine[0].ID != r.ID {
		t.Fatalf("our comments: %+v, want one, id %d", mine, r.ID)
	}
	if again := w.ok(commentArgs(number, "Opened a fix.")...); again.Outcome != "skipped" || again.ID != r.ID {
		t.Fatalf("second run: %+v, want skipped, id %d", again, r.ID)
	}
	w.deleteLedger()
	if again := w.ok(commentArgs(number, "Opened a fix.")...); again.Outcome != "found" || again.ID != r.ID {
		t.Fatalf("run with the ledger lost: %+v, want found, id %d (ours, not the older look-alike %d)", again, r.ID, theirs)
	}
	if n := len(w.ourComments(number, key)); n != 1 {
		t.Fatalf("%d comments of ours, want 1", n)
	}
}

// Killed after posting; the retry rewords the comment: still one comment.
func TestRewordedCommentRetryFindsTheFirst(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	number := w.seedThread(3)
	key := w.key("ISSUE-42", "issue-comment", "comment", strconv.Itoa(number))
	w.crash(fakegithub.KindComment, commentArgs(number, "Opened a fix in a PR.")...)
	r := w.ok(commentArgs(number, "I have opened a pull request that fixes this.")...)
	mine := w.ourComments(number, key)
	if r.Outcome != "found" || !r.PayloadChanged || len(mine) != 1 || r.ID != mine[0].ID {
		t.Fatalf("reworded retry: %+v with our comments %+v; want found, payload_changed, one comment", r, mine)
	}
	if !strings.HasSuffix(mine[0].Body, "Opened a fix in a PR.") {
		t.Fatalf("our comment was changed: %q", mine[0].Body)
	}
}

// A branch of that name at an unrelated commit is someone else's: exit 1
// with a message that says so, the branch left alone, nothing written.
func TestBranchTakenBySomeoneElseIsAConflict(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	orphan := w.fake.AddOrphanCommit(owner, name)
	w.fake.SetRef(owner, name, "release-prep", orphan)
	o := w.run("branch", "create", "release-prep", "--task", "ISSUE-42", "--sha", w.main)
	wantExit(t, o, 1, "branch create over someone else's branch")
	if !strings.Contains(o.Stderr, "someone else's") || !strings.Contains(o.Stderr, "release-prep") {
		t.Errorf("stderr does not say the branch is someone else's: %s", o.Stderr)
	}
	if o.Stdout != "" {
		t.Errorf("stdout %q, want nothing on failure", o.Stdout)
	}
	if sha, _ := w.fake.Branch(owner, name, "release-prep"); sha != orphan {
		t.Fatalf("branch moved to %s, want it left at %s", sha, orphan)
	}
	if writes, _ := w.counts(); writes != 0 {
		t.Fatalf("%d write requests, want 0", writes)
	}
}

// A branch of that name at a descendant of the intended commit, with no
// earlier attempt in the ledger, may be a stranger's (a ref has no
// author): a conflict, left alone. Started from the branch itself, the
// same name is recorded as it is (docs/guide/trust.md, "Branches").
func TestBranchAtADescendantNeedsEvidence(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	child := w.fake.AddCommit(owner, name, "main")
	w.fake.SetRef(owner, name, "release-prep", child)
	o := w.run("branch", "create", "release-prep", "--task", "ISSUE-42", "--sha", w.main)
	wantExit(t, o, 1, "a branch at a descendant without evidence")
	if !strings.Contains(o.Stderr, "nothing shows ghonce made it") || !strings.Contains(o.Stderr, "start it from release-prep") {
		t.Errorf("stderr %q: want the rule and the way out", o.Stderr)
	}
	r := w.ok("branch", "create", "release-prep", "--task", "ISSUE-42", "--from", "release-prep")
	if r.Outcome != "found" || r.SHA != child {
		t.Fatalf("branch started from itself: %+v, want found at %s", r, child)
	}
	if sha, _ := w.fake.Branch(owner, name, "release-prep"); sha != child {
		t.Fatalf("branch moved to %s, want it left at %s", sha, child)
	}
	if writes, _ := w.counts(); writes != 0 {
		t.Fatalf("%d write requests, want 0", writes)
	}
}
