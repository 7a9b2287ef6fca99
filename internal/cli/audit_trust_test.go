package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/fakegithub"
	"github.com/ghonce/ghonce/tests/audittest"
)

// The cases issue 31 reproduced against `audit --apply`, each on a
// repository of its own (octo/t) beside the corpus: what a tool allowed to
// close and delete must never do.

// trustRepo adds octo/t with one issue (#1) and points the world at it.
func trustRepo(t *testing.T, w *auditWorld) {
	t.Helper()
	w.fake.AddRepo("octo", "t", "main")
	w.env["GH_REPO"] = "octo/t"
	w.fake.SeedIssue("octo", "t", audittest.Agent, fixtures.SeedIssue{Title: "Deploy", Body: "Deploy v2."})
}

// as sends one request to the fake as the person (alice), as a
// maintainer's browser would. It may run on the fake's goroutine, so it
// reports a failure without stopping the test.
func (w *auditWorld) as(method, path string, body any) {
	w.t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req, err := http.NewRequest(method, strings.TrimSuffix(w.fake.URL(), "/")+path, rd)
	if err != nil {
		w.t.Error(err)
		return
	}
	req.Header.Set("Authorization", "token "+audittest.HumanToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Error(err) // on the fake's goroutine: never Fatal
		return
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		w.t.Errorf("%s %s as alice: %s", method, path, resp.Status)
	}
}

// onFirstRead runs fn once, at the first GET of path: after the listings,
// before any write to the artifact at path.
func (w *auditWorld) onFirstRead(path string, fn func()) {
	var once sync.Once
	w.fake.Inject(fixtures.Fault{Times: 1 << 20, Match: func(r *http.Request) bool {
		if r.Method == http.MethodGet && r.URL.Path == path {
			once.Do(fn)
		}
		return false
	}})
}

func (w *auditWorld) comment(n int, id int64) (fakegithub.Comment, bool) {
	for _, c := range w.fake.Comments("octo", "t", n) {
		if c.ID == id {
			return c, true
		}
	}
	return fakegithub.Comment{}, false
}

// issueState is issue or pull request n's state.
func (w *auditWorld) issueState(n int) string {
	for _, is := range w.fake.Issues("octo", "t") {
		if is.Number == n {
			return is.State
		}
	}
	for _, p := range w.fake.PullRequests("octo", "t") {
		if p.Number == n {
			return p.State
		}
	}
	return ""
}

// TestAuditApplyNeverActsOnAnotherAuthorsMarker: a person copies the
// first line of the agent's comment and issue (the marker) onto a comment
// and an issue of their own and reacts to them; --apply deletes and closes
// nothing, and the agent's rerun still answers with its own comment.
func TestAuditApplyNeverActsOnAnotherAuthorsMarker(t *testing.T) {
	w := newAuditWorld(t)
	trustRepo(t, w)
	first := w.run("issue", "comment", "1", "--task", "T", "--step", "progress", "--body", "Step 1 of 3 done.", "--json")
	iss := w.run("issue", "create", "--task", "T", "--step", "status", "--title", "Status", "--body", "Running.", "--json")
	var c, is struct {
		URL    string `json:"url"`
		ID     int64  `json:"id"`
		Number int    `json:"number"`
	}
	if json.Unmarshal([]byte(first.stdout), &c) != nil || json.Unmarshal([]byte(iss.stdout), &is) != nil || c.ID == 0 || is.Number == 0 {
		t.Fatalf("the agent's comment and issue: %s %s %s %s", first.stdout, first.stderr, iss.stdout, iss.stderr)
	}
	mine, _ := w.comment(1, c.ID)
	fake := w.fake.SeedComment("octo", "t", 1, audittest.Human, mine.Body)
	w.fake.SeedReaction("octo", "t", 1, fake, audittest.Human, "+1")
	var body string
	for _, x := range w.fake.Issues("octo", "t") {
		if x.Number == is.Number {
			body = x.Body
		}
	}
	copied := w.fake.SeedIssue("octo", "t", audittest.Human, fixtures.SeedIssue{Title: "Status", Body: body})
	w.fake.SeedReaction("octo", "t", copied, 0, audittest.Human, "heart")

	r := w.run("audit", "--since", "0", "--apply")
	if _, ok := w.comment(1, c.ID); !ok {
		t.Errorf("the agent's comment was deleted\n%s\n%s", r.stdout, r.stderr)
	}
	if st := w.issueState(is.Number); st != "open" {
		t.Errorf("the agent's issue is %s\n%s\n%s", st, r.stdout, r.stderr)
	}
	if st := w.issueState(copied); st != "open" {
		t.Errorf("the person's issue is %s", st)
	}
	if _, ok := w.comment(1, fake); !ok {
		t.Errorf("the person's comment was deleted")
	}
	again := w.run("issue", "comment", "1", "--task", "T", "--step", "progress", "--body", "Step 1 of 3 done.")
	if strings.TrimSpace(again.stdout) != c.URL {
		t.Errorf("the agent's rerun answers %q, want its own comment %s", again.stdout, c.URL)
	}
}

// TestAuditApplyRechecksBeforeWriting: a person acts between the listing
// and the write (deletes the kept comment, edits the duplicate, comments
// on the duplicate issue): --apply leaves the pair alone, says why, and
// exits 6.
func TestAuditApplyRechecksBeforeWriting(t *testing.T) {
	for _, tc := range []struct {
		name string
		// act is what the person does; it returns the check after --apply.
		act func(w *auditWorld) func() string
	}{
		{"kept comment deleted", func(w *auditWorld) func() string {
			keep := w.fake.SeedComment("octo", "t", 1, audittest.Agent, "Done.")
			dup := w.fake.SeedComment("octo", "t", 1, audittest.Agent, "Done.")
			w.onFirstRead(fmt.Sprintf("/repos/octo/t/issues/comments/%d", dup), func() {
				w.as("DELETE", fmt.Sprintf("/repos/octo/t/issues/comments/%d", keep), nil)
			})
			return func() string {
				if _, ok := w.comment(1, dup); !ok {
					return "both copies of the comment are gone"
				}
				return ""
			}
		}},
		{"duplicate comment edited", func(w *auditWorld) func() string {
			w.fake.SeedComment("octo", "t", 1, audittest.Agent, "Done.")
			dup := w.fake.SeedComment("octo", "t", 1, audittest.Agent, "Done.")
			w.onFirstRead(fmt.Sprintf("/repos/octo/t/issues/comments/%d", dup), func() {
				w.as("PATCH", fmt.Sprintf("/repos/octo/t/issues/comments/%d", dup), map[string]string{"body": "Done. And the staging logs are attached."})
			})
			return func() string {
				if _, ok := w.comment(1, dup); !ok {
					return "the person's edited comment was deleted"
				}
				return ""
			}
		}},
		{"person comments on the duplicate issue", func(w *auditWorld) func() string {
			w.fake.SeedIssue("octo", "t", audittest.Agent, fixtures.SeedIssue{Title: "Flaky", Body: "TestX fails."})
			dup := w.fake.SeedIssue("octo", "t", audittest.Agent, fixtures.SeedIssue{Title: "Flaky", Body: "TestX fails."})
			w.onFirstRead(fmt.Sprintf("/repos/octo/t/issues/%d", dup), func() {
				w.as("POST", fmt.Sprintf("/repos/octo/t/issues/%d/comments", dup), map[string]string{"body": "I am on this one."})
			})
			return func() string {
				if st := w.issueState(dup); st != "open" {
					return "the issue a person just commented on is " + st
				}
				return ""
			}
		}},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			w := newAuditWorld(t)
			trustRepo(t, w)
			check := tc.act(w)
			r := w.run("audit", "--since", "0", "--apply")
			if bad := check(); bad != "" {
				t.Fatalf("%s\n%s\n%s", bad, r.stdout, r.stderr)
			}
			if r.code != failure.ExitDuplicates || !strings.Contains(r.stdout, "left alone") {
				t.Fatalf("exit %d, want %d with the reason in the table\n%s\n%s", r.code, failure.ExitDuplicates, r.stdout, r.stderr)
			}
		})
	}
}

// TestAuditApplyReadsPeopleWhateverSince: a person commented on the newer
// of two duplicate issues 40 days ago; both were updated since. With
// --since 30d the person's comment is not in the listing, and still the
// one they commented on is kept.
func TestAuditApplyReadsPeopleWhateverSince(t *testing.T) {
	clock := audittest.NewClock(time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC))
	fake := fixtures.NewServer(fixtures.Options{Now: clock.Now})
	t.Cleanup(fake.Close)
	audittest.Seed(fake, "octo", "corpus")
	w := &auditWorld{t: t, fake: fake, now: clock.Now, env: map[string]string{
		"GH_TOKEN": audittest.AgentToken, "GITHUB_API_URL": fake.URL(), "GHONCE_LEDGER": t.TempDir() + "/ledger.db"}}
	trustRepo(t, w)
	old := fake.SeedIssue("octo", "t", audittest.Agent, fixtures.SeedIssue{Title: "Upgrade Go", Body: "1.26 is out."})
	newer := fake.SeedIssue("octo", "t", audittest.Agent, fixtures.SeedIssue{Title: "Upgrade Go", Body: "1.26 is out."})
	fake.SeedComment("octo", "t", newer, audittest.Human, "I'll do it this week.")
	clock.Add(40 * 24 * time.Hour)
	fake.SeedLabel("octo", "t", old, audittest.Agent, "chore") // both updated since
	fake.SeedLabel("octo", "t", newer, audittest.Agent, "chore")
	r := w.run("audit", "--since", "30d", "--apply")
	if st := w.issueState(newer); st != "open" {
		t.Fatalf("the issue a person commented on is %s\n%s\n%s", st, r.stdout, r.stderr)
	}
	if st := w.issueState(old); st != "closed" {
		t.Fatalf("its duplicate is %s, want closed as a duplicate of #%d\n%s\n%s", st, newer, r.stdout, r.stderr)
	}
}

// TestAuditApplyRepointsTheLedger: the agent's comment (recorded in the
// ledger) is the newer copy of one a naive run posted: --apply deletes
// it, and the agent's rerun then answers with the kept comment, never
// `skipped` with the URL of the deleted one.
func TestAuditApplyRepointsTheLedger(t *testing.T) {
	w := newAuditWorld(t)
	trustRepo(t, w)
	kept := w.fake.SeedComment("octo", "t", 1, audittest.Agent, "Deployed v2.")
	first := w.run("issue", "comment", "1", "--task", "T", "--step", "deployed", "--body", "Deployed v2.", "--json")
	var c struct {
		URL string `json:"url"`
		ID  int64  `json:"id"`
	}
	if json.Unmarshal([]byte(first.stdout), &c) != nil || c.ID == 0 {
		t.Fatalf("the agent's comment: %s %s", first.stdout, first.stderr)
	}
	if r := w.run("audit", "--since", "0", "--apply"); r.code != failure.ExitOK {
		t.Fatalf("--apply: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, ok := w.comment(1, c.ID); ok {
		t.Fatalf("the newer copy %d was not deleted", c.ID)
	}
	again := w.run("issue", "comment", "1", "--task", "T", "--step", "deployed", "--body", "Deployed v2.", "--json")
	var res struct {
		URL string `json:"url"`
		ID  int64  `json:"id"`
	}
	if err := json.Unmarshal([]byte(again.stdout), &res); err != nil {
		t.Fatalf("rerun: %v\n%s\n%s", err, again.stdout, again.stderr)
	}
	if res.URL == c.URL || res.ID != kept {
		t.Fatalf("the rerun answers %s (id %d), want the kept comment %d, never the deleted %s", res.URL, res.ID, kept, c.URL)
	}
}

// TestAuditAcknowledgedStopsPaging: a pair left alone because a person
// commented exits 6 until a person labels the duplicate ghonce-audit:keep;
// then it is reported as acknowledged and the audit exits 0. After
// --apply, the table names a deletion as a deletion.
func TestAuditAcknowledgedStopsPaging(t *testing.T) {
	w := newAuditWorld(t)
	trustRepo(t, w)
	w.fake.SeedIssue("octo", "t", audittest.Agent, fixtures.SeedIssue{Title: "Flaky", Body: "TestX fails."})
	dup := w.fake.SeedIssue("octo", "t", audittest.Agent, fixtures.SeedIssue{Title: "Flaky", Body: "TestX fails."})
	w.fake.SeedReaction("octo", "t", dup-1, 0, audittest.Human, "eyes") // the older is kept for it
	w.fake.SeedComment("octo", "t", dup, audittest.Human, "Different stack trace here.")
	w.fake.SeedComment("octo", "t", 1, audittest.Agent, "Done.")
	w.fake.SeedComment("octo", "t", 1, audittest.Agent, "Done.")
	r := w.run("audit", "--since", "0", "--apply")
	if r.code != failure.ExitDuplicates || !strings.Contains(r.stdout, "left alone: a person acted on it") {
		t.Fatalf("exit %d, want %d, the person's pair left alone\n%s\n%s", r.code, failure.ExitDuplicates, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "  deleted") {
		t.Errorf("the table does not name the comment's deletion:\n%s", r.stdout)
	}
	w.fake.SeedLabel("octo", "t", dup, audittest.Agent, "ghonce-audit:keep")
	if r := w.run("audit", "--since", "0"); r.code != failure.ExitDuplicates {
		t.Fatalf("the agent's own label acknowledged the pair: exit %d\n%s", r.code, r.stdout)
	}
	w.as("DELETE", fmt.Sprintf("/repos/octo/t/issues/%d/labels/ghonce-audit:keep", dup), nil)
	w.as("POST", fmt.Sprintf("/repos/octo/t/issues/%d/labels", dup), map[string][]string{"labels": {"ghonce-audit:keep"}})
	r = w.run("audit", "--since", "0")
	if r.code != failure.ExitOK || !strings.Contains(r.stdout, "acknowledged by alice") {
		t.Fatalf("after alice's label: exit %d, want 0 with the acknowledgement\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestAuditTwoAuditsLinkOnce: two audits at once, each with its own
// ledger, both look for the linking comment before either posts it (the
// fake holds the first POST until the second arrives): each duplicate
// ends with one linking comment, and closed.
func TestAuditTwoAuditsLinkOnce(t *testing.T) {
	w := newAuditWorld(t)
	trustRepo(t, w)
	w.fake.SeedIssue("octo", "t", audittest.Agent, fixtures.SeedIssue{Title: "Flaky", Body: "TestX fails."})
	dup := w.fake.SeedIssue("octo", "t", audittest.Agent, fixtures.SeedIssue{Title: "Flaky", Body: "TestX fails."})
	post := fmt.Sprintf("/repos/octo/t/issues/%d/comments", dup)
	var mu sync.Mutex
	arrived := 0
	both := make(chan struct{})
	w.fake.BeforeWrite(func(pw *fixtures.PendingWrite) bool {
		if pw.Method != http.MethodPost || pw.Path != post {
			return true
		}
		mu.Lock()
		arrived++
		if arrived == 2 {
			close(both)
		}
		mu.Unlock()
		select {
		case <-both:
		case <-time.After(5 * time.Second): // the other audit found the first comment: it never posts
		}
		return true
	})
	envs := []map[string]string{{}, {}}
	for i := range envs {
		for k, v := range w.env {
			envs[i][k] = v
		}
		envs[i]["GHONCE_LEDGER"] = fmt.Sprintf("%s/ledger-%d.db", t.TempDir(), i)
	}
	var wg sync.WaitGroup
	runs := make([]cliRun, 2)
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var out, errb bytes.Buffer
			sys := IO{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(k string) string { return envs[i][k] }, Now: w.now, Executable: os.Executable}
			code := Main(context.Background(), []string{"audit", "--since", "0", "--apply"}, sys)
			runs[i] = cliRun{code: code, stdout: out.String(), stderr: errb.String()}
		}()
	}
	wg.Wait()
	links := 0
	for _, c := range w.fake.Comments("octo", "t", dup) {
		if strings.Contains(c.Body, "Closing as a duplicate of") {
			links++
		}
	}
	if links != 1 || w.issueState(dup) != "closed" {
		t.Fatalf("#%d: %d linking comments, %s; want 1, closed\n%s\n%s\n%s\n%s", dup, links, w.issueState(dup), runs[0].stdout, runs[0].stderr, runs[1].stdout, runs[1].stderr)
	}
}
