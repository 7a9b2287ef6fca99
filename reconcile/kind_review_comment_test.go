package reconcile_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/guard"
	"github.com/ghonce/ghonce/internal/audit"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
	"github.com/google/go-github/v66/github"
)

// An inline comment's good and bad shapes, for shape_test.go's
// TestPrepareRefusesEveryShapeGitHubsLayerRefuses: paths, lines, sides,
// replies, commits, numbers and a body too long.
func init() {
	shapesOf["review-comment"] = func(add func(reconcile.Spec)) {
		const sha = "0123456789abcdef0123456789abcdef01234567"
		numbers := []int{1, 0, -3}
		bodies := []string{"b", strings.Repeat("x", taskkey.MaxBody)}
		shas := []string{sha, strings.ToUpper(sha), "abc", ""}
		rcs := []reconcile.ReviewComment{{Path: "a.go", Line: 1}, {Line: 1}, {Path: "/a.go", Line: 1}, {Path: "a.go"}, {Path: "a.go", Line: 2, Side: "middle"},
			{Path: "a.go", Line: 2, StartLine: 2}, {Path: "a.go", Line: 2, StartSide: "LEFT"}, {InReplyTo: 5}, {InReplyTo: 5, Path: "a.go"}, {InReplyTo: -1}}
		for _, n := range numbers {
			for _, body := range bodies {
				for _, rc := range rcs {
					for _, s := range shas {
						rc.Number, rc.Body = n, body
						if rc.InReplyTo == 0 {
							rc.CommitID = s
						}
						add(rc)
					}
				}
			}
		}
	}
}

// changedFile is the file reviewPR's pull request adds, one line long.
const changedFile = "change-" + login + ".txt"

// reviewPR opens a pull request whose head adds changedFile and returns
// its number and head.
func (w *world) reviewPR() (int, string) {
	w.t.Helper()
	head := w.GitHub.AddCommitBy(owner, name, "main", login)
	branch := "review-" + head[:8]
	w.GitHub.SetRef(owner, name, branch, head)
	return w.GitHub.SeedPR(owner, name, other, fixtures.SeedPR{Head: branch, Title: "feat"}), head
}

func inline(task string, n int, line int, body string) reconcile.Action {
	return reconcile.Action{Task: task, Repo: repo, Spec: reconcile.ReviewComment{Number: n, Path: changedFile, Line: line, Body: body}}
}

// Made once, on the pull request's head (read with the look-up), tagged
// with the key; a replay asks GitHub nothing. The key is the line's: two
// lines of one task are two comments without a step.
func TestReviewCommentOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	n, head := w.reviewPR()
	a := inline("T-1", n, 1, "Off by one here.")
	r := mustDo(t, w.engine(), a)
	if r.Outcome != outcome.Created || r.SHA != head || r.ID == 0 {
		t.Fatalf("first run: %+v, want created on %s", r, head)
	}
	before := len(w.GitHub.Requests())
	if r2 := mustDo(t, w.engine(), a); r2.Outcome != outcome.Skipped || r2.ID != r.ID {
		t.Fatalf("replay: %+v, want skipped", r2)
	}
	if n := len(w.GitHub.Requests()) - before; n != 0 {
		t.Errorf("the replay sent %d requests, want 0", n)
	}
	cs := w.GitHub.ReviewComments(owner, name, n)
	if len(cs) != 1 || !taskkey.HasMarker(cs[0].Body, r.Key) || cs[0].Line != 1 || cs[0].Path != changedFile {
		t.Fatalf("comments %+v, want one tagged on %s:1", cs, changedFile)
	}
	// Another line of the same task: another key, another comment (the
	// fake's diff holds only line 1 of the file, so LEFT's line 1 of a
	// file the base lacks is refused: GitHub's word, nothing is made).
	left := inline("T-1", n, 1, "Off by one here.")
	left.Spec = reconcile.ReviewComment{Number: n, Path: changedFile, Line: 1, Side: "LEFT", Body: "Off by one here."}
	if keyOf(t, left) == r.Key {
		t.Fatal("LEFT and RIGHT of one line share a key")
	}
	if _, err := do(w.ctx, w.engine(), left); err == nil || !strings.Contains(err.Error(), "diff") {
		t.Fatalf("a line the diff does not show: %v, want GitHub's refusal in words", err)
	}
	if keyOf(t, inline("T-1", n, 2, "x")) == r.Key {
		t.Fatal("two lines share a key")
	}
	// RIGHT named is the RIGHT left out.
	right := inline("T-1", n, 1, "Off by one here.")
	right.Spec = reconcile.ReviewComment{Number: n, Path: changedFile, Line: 1, Side: "RIGHT", Body: "Off by one here."}
	if keyOf(t, right) != r.Key {
		t.Error("side RIGHT named is another key than side left out")
	}
}

// A reworded comment on the same line is that line's key: it is never a
// second comment; the same-act rule answers with the facts (exit 7), and
// the same text set aside its markup is the first.
func TestReviewCommentRewordedIsTheSameKey(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	n, _ := w.reviewPR()
	first := mustDo(t, w.engine(), inline("T-1", n, 1, "Off by one here."))
	var so *reconcile.SameOrAnotherError
	if _, err := do(w.ctx, w.engine(), inline("T-1", n, 1, "This index is off by one.")); !errors.As(err, &so) || so.Result.ID != first.ID || so.Field != "body" {
		t.Fatalf("reworded: %v, want a *SameOrAnotherError naming comment %d", err, first.ID)
	}
	if r := mustDo(t, w.engine(), inline("T-1", n, 1, "**Off by one** here.")); r.Outcome != outcome.Skipped || r.ID != first.ID {
		t.Fatalf("the same text in markup: %+v, want the first skipped", r)
	}
	if cs := w.GitHub.ReviewComments(owner, name, n); len(cs) != 1 {
		t.Fatalf("%d comments, want 1", len(cs))
	}
}

// claude-code-action #1405: the same inline comment posted twice, 15–25
// s apart, by a retry whose first answer was lost or whose process died
// after GitHub stored it. The retry finds the first, with the ledger kept
// or lost; a 502 before GitHub stored anything leaves the entry
// unconfirmed until a look-up answers, then it is made once.
func TestReviewCommentRetryAfterALostAnswer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault fixtures.FaultKind
		lose  bool
		want  outcome.Outcome
	}{
		{"dropped, ledger kept", fixtures.DropAfterCommit, false, outcome.Found},
		{"dropped, ledger lost", fixtures.DropAfterCommit, true, outcome.Found},
		{"504 after the write", fixtures.Status504AfterCommit, false, outcome.Found},
		{"502 before the write", fixtures.Status502BeforeCommit, false, outcome.Created},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			n, _ := w.reviewPR()
			a := inline("PR-7", n, 1, "Off by one here.")
			w.GitHub.Inject(fixtures.Fault{Match: fixtures.MatchMethod(http.MethodPost), Kind: tc.fault})
			_, err := do(w.ctx, w.engine(), a)
			var uc *outcome.UnconfirmedError
			if !errors.As(err, &uc) {
				t.Fatalf("lost answer: %v, want *UnconfirmedError (a maybe is never a no)", err)
			}
			if tc.lose {
				if err := os.RemoveAll(w.Ledger); err != nil {
					t.Fatal(err)
				}
			}
			r := mustDo(t, w.engine(), a)
			if r.Outcome != tc.want {
				t.Fatalf("retry: %s, want %s", r.Outcome, tc.want)
			}
			if cs := w.GitHub.ReviewComments(owner, name, n); len(cs) != 1 || cs[0].ID != r.ID {
				t.Fatalf("comments %+v, want only #%d", cs, r.ID)
			}
		})
	}
}

// A comment by another identity carrying our key's tags (a copy, a
// forgery) is not ours: ours is made beside it, once.
func TestReviewCommentIgnoresALookAlike(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	n, head := w.reviewPR()
	a := inline("T-1", n, 1, "Off by one here.")
	gh := github.NewClient(nil).WithAuthToken(otherT)
	gh, _ = gh.WithEnterpriseURLs(w.GitHub.URL(), w.GitHub.URL())
	if _, _, err := gh.PullRequests.CreateComment(w.ctx, owner, name, n, &github.PullRequestComment{
		Body: github.String(taskkey.WithMarker(keyOf(t, a), "Off by one here.")), CommitID: github.String(head),
		Path: github.String(changedFile), Line: github.Int(1)}); err != nil {
		t.Fatal(err)
	}
	r := mustDo(t, w.engine(), a)
	if r.Outcome != outcome.Created {
		t.Fatalf("%+v, want ours created beside the look-alike", r)
	}
	if r := mustDo(t, w.engine(), a); r.Outcome != outcome.Skipped {
		t.Fatalf("replay: %s", r.Outcome)
	}
	if cs := w.GitHub.ReviewComments(owner, name, n); len(cs) != 2 {
		t.Fatalf("%d comments, want the look-alike and ours", len(cs))
	}
}

// A reply's key is the comment it answers: replied once, in its thread;
// a reply to a comment that is not there, or on a pull request that is
// not, is refused and makes nothing.
func TestReviewCommentReply(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	n, _ := w.reviewPR()
	root := mustDo(t, w.engine(), inline("T-1", n, 1, "Off by one here."))
	reply := reconcile.Action{Task: "T-1", Repo: repo, Spec: reconcile.ReviewComment{Number: n, InReplyTo: root.ID, Body: "Fixed in the next push."}}
	r := mustDo(t, w.engine(), reply)
	if r.Outcome != outcome.Created || r.ID == root.ID {
		t.Fatalf("reply: %+v", r)
	}
	if r2 := mustDo(t, w.engine(), reply); r2.Outcome != outcome.Skipped || r2.ID != r.ID {
		t.Fatalf("reply again: %+v", r2)
	}
	cs := w.GitHub.ReviewComments(owner, name, n)
	if len(cs) != 2 || cs[1].InReplyTo != root.ID {
		t.Fatalf("comments %+v, want the root and one reply in its thread", cs)
	}
	for _, spec := range []reconcile.ReviewComment{
		{Number: n, InReplyTo: root.ID + 1000, Body: "x"},
		{Number: n + 1000, Path: changedFile, Line: 1, Body: "x"},
	} {
		_, err := do(w.ctx, w.engine(), reconcile.Action{Task: "T-2", Repo: repo, Spec: spec})
		if err == nil || errors.As(err, new(*outcome.UnconfirmedError)) {
			t.Errorf("%+v: %v, want a refusal", spec, err)
		}
	}
	if cs := w.GitHub.ReviewComments(owner, name, n); len(cs) != 2 {
		t.Fatalf("%d comments after the refusals, want 2", len(cs))
	}
}

// The stored description holds the commit the look-up chose, and a done
// key's entry names the kind.
func TestReviewCommentRecordsTheChosenCommit(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	n, head := w.reviewPR()
	r := mustDo(t, w.engine(), inline("T-1", n, 1, "Off by one here."))
	l := w.OpenLedger()
	defer l.Close()
	e, err := l.Get(w.ctx, r.Key)
	if err != nil {
		t.Fatal(err)
	}
	if e.Status != ledger.Done || e.Kind != "review-comment" || !strings.Contains(string(e.Payload), head) {
		t.Fatalf("entry %s %s %s, want done review-comment on %s", e.Status, e.Kind, e.Payload, head)
	}
}

// `ghonce pr comment N --path F --line L` is an inline comment, once per
// line: the same command again (claude-code-action #1405's second post) is
// the first comment, another line another comment, and without --path the
// verb stays the top-level comment. --reply-to replies in a thread once.
func TestPRCommentVerbInline(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	n, _ := w.reviewPR()
	pr := strconv.Itoa(n)
	result := func(args ...string) outcome.Result {
		t.Helper()
		code, stdout, stderr := w.ghonce(append([]string{"pr", "comment", pr, "--task", "T", "--repo", repo, "--json"}, args...)...)
		var res outcome.Result
		if err := json.Unmarshal([]byte(stdout), &res); err != nil || code != 0 {
			t.Fatalf("%v: exit %d, %s%s", args, code, stdout, stderr)
		}
		return res
	}
	first := result("--path", changedFile, "--line", "1", "--body", "Off by one here.")
	again := result("--path", changedFile, "--line", "1", "--side", "RIGHT", "--body", "Off by one here.")
	if first.Outcome != outcome.Created || again.Outcome != outcome.Skipped || again.ID != first.ID {
		t.Fatalf("first %+v, again %+v: want created, then the same skipped", first, again)
	}
	reply := result("--reply-to", strconv.FormatInt(first.ID, 10), "--body", "Fixed.")
	if replyAgain := result("--reply-to", strconv.FormatInt(first.ID, 10), "--body", "Fixed."); reply.Outcome != outcome.Created || replyAgain.ID != reply.ID {
		t.Fatalf("reply %+v, again %+v", reply, replyAgain)
	}
	if cs := w.GitHub.ReviewComments(owner, name, n); len(cs) != 2 || cs[1].InReplyTo != first.ID {
		t.Fatalf("inline comments %+v, want the comment and its reply", cs)
	}
	if top := result("--body", "Thanks for the review."); top.Outcome != outcome.Created || len(w.GitHub.Comments(owner, name, n)) != 1 {
		t.Fatalf("without --path: %+v, want a top-level comment", top)
	}
	// A line the diff does not show is GitHub's refusal, in words; no
	// --line is the kind's, before anything is recorded.
	for _, args := range [][]string{{"--path", changedFile, "--line", "9", "--body", "x"}, {"--path", changedFile, "--body", "x"}} {
		if code, _, stderr := w.ghonce(append([]string{"pr", "comment", pr, "--task", "T2", "--repo", repo}, args...)...); code == 0 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q: want a refusal", args, code, stderr)
		}
	}
}

// reviewFile opens a pull request whose head adds src/app.go, three lines,
// all on its diff; it returns the pull request and its head.
func (w *world) reviewFile() (int, string) {
	w.t.Helper()
	n, head := w.reviewPR()
	plain := github.NewClient(nil).WithAuthToken(token)
	plain.BaseURL, _ = plain.BaseURL.Parse(w.GitHub.URL())
	c, _, err := plain.Repositories.CreateFile(w.ctx, owner, name, "src/app.go", &github.RepositoryContentFileOptions{
		Message: github.String("app"), Content: []byte("package app\n\nfunc f() {}\n"), Branch: github.String("review-" + head[:8]),
	})
	if err != nil {
		w.t.Fatal(err)
	}
	return n, c.GetSHA()
}

// postInline is an agent's inline comment through go-github over guard's
// transport (a new process each time, on w's ledger), under task with no
// step (the kind's default): the key is the line's.
func (w *world) postInline(task string, pr int, head string, line int, body string) (*github.PullRequestComment, *github.Response, error) {
	return w.goGitHub().PullRequests.CreateComment(guard.WithStep(w.ctx, task, ""), owner, name, pr, &github.PullRequestComment{
		Body: github.String(body), CommitID: github.String(head), Path: github.String("src/app.go"), Line: github.Int(line)})
}

// ourInline counts our inline comments on pull request n.
func (w *world) ourInline(n int) int {
	c := 0
	for _, rc := range w.GitHub.ReviewComments(owner, name, n) {
		if rc.Author == login {
			c++
		}
	}
	return c
}

// anthropics/claude-code-action #1405: under the default review
// configuration every inline comment was posted twice, 15–25 s apart
// (the buffer's flush after the direct post). Through the transport the
// second of each is the first, and two lines of one task stay two
// comments without naming a step.
func TestInlineCommentsPostedTwiceLandOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	n, head := w.reviewFile()
	comments := map[int]string{1: "Package name shadows the module's.", 3: "f does nothing."}
	ids := map[int]int64{}
	for _, round := range []string{"created", "skipped"} {
		for line, body := range comments {
			c, resp, err := w.postInline("PR-review", n, head, line, body)
			if err != nil {
				t.Fatalf("%s line %d: %v", round, line, err)
			}
			if got := resp.Header.Get("X-Ghonce-Outcome"); got != round {
				t.Errorf("line %d: outcome %q, want %q", line, got, round)
			}
			if round == "skipped" && c.GetID() != ids[line] {
				t.Errorf("line %d: the repeat got comment %d, want the first, %d", line, c.GetID(), ids[line])
			}
			ids[line] = c.GetID()
		}
	}
	if got := w.ourInline(n); got != 2 {
		t.Fatalf("%d inline comments, want 2", got)
	}
}

// anthropics/claude-code-action #1542: a buffer shared by jobs on a
// self-hosted runner posted one pull request's comments three more times.
// Each re-post under the task that made them is the comment already
// there. (A re-post onto another pull request is another key, the pull
// request being part of it: ghonce cannot call a comment meant for one
// pull request a retry of one on another; GitHub refuses it where that
// pull request's diff lacks the line.)
func TestBufferRepostsLandOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	n, head := w.reviewFile()
	first, _, err := w.postInline("PR-review", n, head, 3, "f does nothing.")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 { // each re-post a new process on the same ledger
		c, resp, err := w.postInline("PR-review", n, head, 3, "f does nothing.")
		if err != nil || c.GetID() != first.GetID() || resp.Header.Get("X-Ghonce-Outcome") != "skipped" {
			t.Fatalf("re-post %d: %v, comment %d (%s), want the first, %d, skipped", i+1, err, c.GetID(), resp.Header.Get("X-Ghonce-Outcome"), first.GetID())
		}
	}
	if got := w.ourInline(n); got != 1 {
		t.Fatalf("%d inline comments, want 1", got)
	}
}

// A killed agent that retries add_reply_to_pull_request_comment gets the
// first reply back: one reply per comment replied to and task.
func TestReplyToolOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	n, head := w.reviewPR()
	gh := github.NewClient(nil).WithAuthToken(otherT)
	gh.BaseURL, _ = gh.BaseURL.Parse(w.GitHub.URL())
	root, _, err := gh.PullRequests.CreateComment(w.ctx, owner, name, n, &github.PullRequestComment{
		Body: github.String("Why this change?"), CommitID: github.String(head), Path: github.String(changedFile), Line: github.Int(1)})
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"pullNumber": n, "commentId": root.GetID(), "body": "To fix the crash.", "task": "PR-7"}
	first, isErr, text := w.mcpCall("add_reply_to_pull_request_comment", args)
	again, isErr2, text2 := w.mcpCall("add_reply_to_pull_request_comment", args)
	if isErr || isErr2 || first.Outcome != "created" || again.Outcome != "skipped" || again.URL != first.URL {
		t.Fatalf("first %+v (%s), again %+v (%s): want created, then the same skipped", first, text, again, text2)
	}
	if cs := w.GitHub.ReviewComments(owner, name, n); len(cs) != 2 || cs[1].InReplyTo != root.GetID() {
		t.Fatalf("inline comments %+v, want the comment and one reply", cs)
	}
}

// What `ghonce audit` makes of what claude-code-action #1405 left: every
// inline comment twice (the example made twice, byte for byte, 20 s
// apart, and what --apply does with it are TestEveryKindsExampleMadeTwice's
// in internal/audit). The pair, one with a trailing newline, is one group,
// the older kept; the same text by a person, or another text on the same
// line, is not a duplicate of it.
func TestAuditGroupsAnInlineCommentPostedTwice(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	n, head := w.reviewPR()
	post := func(tok, body string) int64 {
		t.Helper()
		gh := github.NewClient(nil).WithAuthToken(tok)
		gh, _ = gh.WithEnterpriseURLs(w.GitHub.URL(), w.GitHub.URL())
		c, _, err := gh.PullRequests.CreateComment(w.ctx, owner, name, n, &github.PullRequestComment{
			Body: github.String(body), CommitID: github.String(head), Path: github.String(changedFile), Line: github.Int(1), Side: github.String("RIGHT")})
		if err != nil {
			t.Fatal(err)
		}
		return c.GetID()
	}
	first := post(token, "Off by one here.")
	again := post(token, "Off by one here.\n")
	post(otherT, "Off by one here.")
	post(token, "Another finding.")
	rep, err := audit.Find(w.ctx, w.client(token), audit.Options{Repo: ghcheck.Repo{Owner: owner, Name: name}, Kinds: []string{"review-comment"}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Listed["review_comments"] != 4 || len(rep.Groups) != 1 {
		t.Fatalf("listed %+v, groups %+v: want 4 inline comments and one group", rep.Listed, rep.Groups)
	}
	if g := rep.Groups[0]; g.Kind != "review-comment" || g.Keep.ID != first || len(g.Duplicates) != 1 || g.Duplicates[0].ID != again ||
		g.Duplicates[0].Differs != "" || g.Keep.Thread != n {
		t.Fatalf("group %+v, want %d kept and %d its duplicate", g, first, again)
	}
}
