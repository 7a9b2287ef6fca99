package cli

import (
	"encoding/json"
	"strconv"
	"testing"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/tests/testworld"
)

// `ghonce pr comment N --path F --line L` is an inline comment, once per
// line: the same command again (claude-code-action #1405's second post) is
// the first comment, another line another comment, and without --path the
// verb stays the top-level comment. --reply-to replies in a thread once.
func TestPRCommentInline(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	head := w.fake.AddCommitBy(testOwner, testName, "main", testLogin)
	w.fake.SetRef(testOwner, testName, "feat", head)
	n := w.fake.SeedPR(testOwner, testName, testworld.Stranger, fixtures.SeedPR{Head: "feat", Title: "feat"})
	file := "change-" + testLogin + ".txt"
	pr := strconv.Itoa(n)
	result := func(args ...string) outcome.Result {
		t.Helper()
		r := w.run("", nil, append([]string{"pr", "comment", pr, "--task", "T", "--repo", testRepo, "--json"}, args...)...)
		var res outcome.Result
		if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || r.code != 0 {
			t.Fatalf("%v: exit %d, %s%s", args, r.code, r.stdout, r.stderr)
		}
		return res
	}
	first := result("--path", file, "--line", "1", "--body", "Off by one here.")
	again := result("--path", file, "--line", "1", "--side", "RIGHT", "--body", "Off by one here.")
	if first.Outcome != outcome.Created || again.Outcome != outcome.Skipped || again.ID != first.ID {
		t.Fatalf("first %+v, again %+v: want created, then the same skipped", first, again)
	}
	reply := result("--reply-to", strconv.FormatInt(first.ID, 10), "--body", "Fixed.")
	if replyAgain := result("--reply-to", strconv.FormatInt(first.ID, 10), "--body", "Fixed."); reply.Outcome != outcome.Created || replyAgain.ID != reply.ID {
		t.Fatalf("reply %+v, again %+v", reply, replyAgain)
	}
	if cs := w.fake.ReviewComments(testOwner, testName, n); len(cs) != 2 || cs[1].InReplyTo != first.ID {
		t.Fatalf("inline comments %+v, want the comment and its reply", cs)
	}
	if top := result("--body", "Thanks for the review."); top.Outcome != outcome.Created || len(w.fake.Comments(testOwner, testName, n)) != 1 {
		t.Fatalf("without --path: %+v, want a top-level comment", top)
	}
	// A line the diff does not show is GitHub's refusal, in words; no
	// --line is the kind's, before anything is recorded.
	for _, args := range [][]string{{"--path", file, "--line", "9", "--body", "x"}, {"--path", file, "--body", "x"}} {
		if r := w.run("", nil, append([]string{"pr", "comment", pr, "--task", "T2", "--repo", testRepo}, args...)...); r.code == 0 || r.stderr == "" {
			t.Errorf("%v: exit %d, stderr %q: want a refusal", args, r.code, r.stderr)
		}
	}
}
