package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/store"
	"github.com/ghonce/ghonce/taskkey"
)

// The audit part: `ghonce audit --apply`, the real binary, on each case
// issues 31 and 37 found it destroying what it must not (another author's
// marker, keys recorded apart, a recurrence, evidence that changed between
// the listing and the write, a person's involvement older than --since, a
// person's branches, heads GitHub cannot return, two audits at once, a
// rerun after --apply; text under one key that is not the kept one's,
// ledger entries naming what does not carry their key, a person's commits
// and force-push), beside duplicates it must settle. The write pacing
// waits on the wall clock in the binary: its case (an edit made while the
// pacer waits) is internal/cli's TestAuditApplyPacesBeforeTheReread. A false
// positive is an artifact closed or deleted (or a linking comment posted)
// that is not a proven duplicate; every row must count 0.

// auditRow is one case of the audit part.
type auditRow struct {
	what string
	runs int
	// fp counts false positives; settled and want the true duplicates
	// settled and expected.
	fp, settled, want int
	errs              []string
	note              string
}

func (r *auditRow) errorf(format string, args ...any) {
	if len(r.errs) < 20 {
		r.errs = append(r.errs, fmt.Sprintf(format, args...))
	}
}

const auditPerson, auditPersonToken = "alice", "tok-matrix-alice"

// auditCase lays a case out in w, runs what it needs, and returns the
// false positives and the true duplicates settled and expected.
type auditCase struct {
	what string
	note string
	run  func(ctx context.Context, a *auditRun) (fp, settled, want int, err error)
}

// auditRun is one trial of a case: its world, its ledger.
type auditRun struct {
	w      *world
	ledger string
}

func (a *auditRun) ghonce(ctx context.Context, ledger string, args ...string) (*out, error) {
	return a.w.run(ctx, proc{args: args, aside: true, env: []string{"GHONCE_LEDGER=" + ledger, "GH_REPO=" + owner + "/" + repo}})
}

// audit runs `ghonce audit --apply` (--since 0 unless extra says) to its
// end; exit 0 and 6 are answers.
func (a *auditRun) audit(ctx context.Context, extra ...string) (*out, error) {
	args := []string{"audit", "--apply"}
	if !slices.Contains(extra, "--since") {
		args = append(args, "--since", "0")
	}
	o, err := a.ghonce(ctx, a.ledger, append(args, extra...)...)
	if err == nil && o.Exit != 0 && o.Exit != 6 {
		err = fmt.Errorf("audit --apply: exit %d: %s", o.Exit, cause(o.Stderr))
	}
	return o, err
}

// json runs a ghonce verb with --json and decodes its object.
func (a *auditRun) json(ctx context.Context, args ...string) (res struct {
	URL    string `json:"url"`
	ID     int64  `json:"id"`
	Number int    `json:"number"`
}, err error) {
	o, err := a.ghonce(ctx, a.ledger, append(args, "--json")...)
	if err != nil {
		return res, err
	}
	if o.Exit != 0 || json.Unmarshal([]byte(o.Stdout), &res) != nil {
		return res, fmt.Errorf("%s: exit %d: %s", strings.Join(args[:2], " "), o.Exit, cause(o.Stderr))
	}
	return res, nil
}

// as sends one request as the person; it may run on the fake's goroutine.
func (a *auditRun) as(method, path string, body any) error {
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(method, strings.TrimSuffix(a.w.fake.URL(), "/")+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "token "+auditPersonToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s %s as %s: %s", method, path, auditPerson, resp.Status)
	}
	return nil
}

// onFirstRead runs fn at the first GET of path (after the listings,
// before any write to that artifact); its error is kept in *errp.
func (a *auditRun) onFirstRead(path string, errp *error, fn func() error) {
	var once sync.Once
	a.w.fake.Inject(fixtures.Fault{Times: 1 << 20, Match: func(r *http.Request) bool {
		if r.Method == http.MethodGet && r.URL.Path == path {
			once.Do(func() { *errp = fn() })
		}
		return false
	}})
}

func (a *auditRun) state(n int) string {
	for _, is := range a.w.fake.Issues(owner, repo) {
		if is.Number == n {
			return is.State
		}
	}
	return ""
}

func (a *auditRun) hasComment(n int, id int64) bool {
	for _, c := range a.w.fake.Comments(owner, repo, n) {
		if c.ID == id {
			return true
		}
	}
	return false
}

// auditKey is the key a naive run's step gave an artifact of kind.
func auditKey(step, kind, target string) string {
	return taskkey.Key(taskkey.Identity{Task: "naive-run", Step: step, Kind: kind, Repo: owner + "/" + repo, Target: target})
}

// forge writes a done entry into the run's ledger, as anyone who can write
// to it could: key k names the artifact ref of kind.
func (a *auditRun) forge(ctx context.Context, k, kind string, ref ledger.Ref) error {
	l, err := store.Open(ctx, a.ledger, store.Options{Create: store.CreateForAction})
	if err != nil {
		return err
	}
	defer l.Close()
	c, err := l.Claim(ctx, ledger.ClaimParams{Key: k, Kind: kind, Repo: owner + "/" + repo, Owner: ledger.Owner{ID: "mallory"}, Lease: time.Minute, Why: "forged"})
	if err != nil {
		return err
	}
	_, err = l.Finish(ctx, ledger.FinishParams{Key: k, Fence: c.Entry.Fence, Status: ledger.Done, Outcome: "created", Ref: ref, Why: "forged"})
	return err
}

// agentPR opens a pull request by the agent from branch, one commit of
// its own ahead of main, carrying key k unless it is "".
func (a *auditRun) agentPR(branch, k string) int {
	a.w.fake.SetRef(owner, repo, branch, a.w.fake.AddCommitBy(owner, repo, "main", login))
	pr := fixtures.SeedPR{Title: "Add the cache", Body: "Caches the login lookup.", Head: branch}
	if k != "" {
		pr.Body, pr.Labels = taskkey.WithMarker(k, pr.Body), []string{taskkey.Label(k)}
	}
	return a.w.fake.SeedPR(owner, repo, login, pr)
}

// closedPRs counts the pull requests of ns that are not open.
func (a *auditRun) closedPRs(ns ...int) int {
	n := 0
	for _, p := range a.w.fake.PullRequests(owner, repo) {
		if slices.Contains(ns, p.Number) && p.State != "open" {
			n++
		}
	}
	return n
}

func (a *auditRun) seedIssue(login, title, body string) int {
	return a.w.fake.SeedIssue(owner, repo, login, fixtures.SeedIssue{Title: title, Body: body})
}

// closedOf counts the issues of ns that are not open.
func (a *auditRun) closedOf(ns ...int) int {
	n := 0
	for _, x := range ns {
		if a.state(x) != "open" {
			n++
		}
	}
	return n
}

func (a *auditRun) goneOf(thread int, ids ...int64) int {
	n := 0
	for _, id := range ids {
		if !a.hasComment(thread, id) {
			n++
		}
	}
	return n
}

func auditCases() []auditCase {
	recheck := func(what string, lay func(a *auditRun, errp *error) (check func() int)) auditCase {
		return auditCase{what: what, note: "the person acts between the listing and the write; --apply reads both again right before it and leaves the pair",
			run: func(ctx context.Context, a *auditRun) (int, int, int, error) {
				var hookErr error
				check := lay(a, &hookErr)
				if _, err := a.audit(ctx); err != nil {
					return 0, 0, 0, err
				}
				return check(), 0, 0, hookErr
			}}
	}
	cares := func(what string, mark func(a *auditRun, n int)) auditCase {
		return auditCase{what: what, note: "the duplicate a person cares about is kept; the other is closed",
			run: func(ctx context.Context, a *auditRun) (int, int, int, error) {
				old := a.seedIssue(login, "Upgrade the toolchain", "It is out of date.")
				newer := a.seedIssue(login, "Upgrade the toolchain", "It is out of date.")
				mark(a, newer)
				if _, err := a.audit(ctx); err != nil {
					return 0, 0, 0, err
				}
				return a.closedOf(newer), a.closedOf(old), 1, nil
			}}
	}
	// differs: two comments under one key, the second not the first's
	// text (edited by a person when edit is set), beside an exact copy
	// under another key.
	differs := func(what, first, second, edit string) auditCase {
		return auditCase{what: what, note: "reported for a person; the exact copy beside it is deleted",
			run: func(ctx context.Context, a *auditRun) (int, int, int, error) {
				k := auditKey("status", "comment", fmt.Sprint(commentOn))
				a.w.fake.SeedComment(owner, repo, commentOn, login, taskkey.WithMarker(k, first))
				dup := a.w.fake.SeedComment(owner, repo, commentOn, login, taskkey.WithMarker(k, second))
				if edit != "" {
					if err := a.as("PATCH", fmt.Sprintf("/repos/%s/%s/issues/comments/%d", owner, repo, dup), map[string]string{"body": taskkey.WithMarker(k, edit)}); err != nil {
						return 0, 0, 0, err
					}
				}
				ek := auditKey("done", "comment", fmt.Sprint(commentOn))
				a.w.fake.SeedComment(owner, repo, commentOn, login, taskkey.WithMarker(ek, "Done."))
				exact := a.w.fake.SeedComment(owner, repo, commentOn, login, taskkey.WithMarker(ek, "Done."))
				if _, err := a.audit(ctx); err != nil {
					return 0, 0, 0, err
				}
				return a.goneOf(commentOn, dup), a.goneOf(commentOn, exact), 1, nil
			}}
	}
	return []auditCase{
		differs("a maintainer's note edited into a copy under one key", "Failover drill at 14:00.", "Failover drill at 14:00.",
			"Failover drill at 14:00.\n\nMaintainer note: restore needs runbook step 7 BEFORE failover"),
		differs("the agent's longer, reworded comment under one key", "Investigating the outage.",
			"Investigating the outage on the load balancers. Root cause: expired TLS cert on lb-3; rotating now.", ""),
		{what: "a ledger entry naming a comment on another thread for a key", run: func(ctx context.Context, a *auditRun) (int, int, int, error) {
			two := a.seedIssue(login, "Deploy staging", "Staging first.")
			k := auditKey("deployed", "comment", fmt.Sprint(commentOn))
			a.w.fake.SeedComment(owner, repo, commentOn, login, taskkey.WithMarker(k, "Deployed."))
			other := a.w.fake.SeedComment(owner, repo, two, login, "Deployed.")
			if err := a.forge(ctx, k, "comment", ledger.Ref{Number: two, ID: other}); err != nil {
				return 0, 0, 0, err
			}
			if _, err := a.audit(ctx); err != nil {
				return 0, 0, 0, err
			}
			return a.goneOf(two, other), 0, 0, nil
		}},
		{what: "a ledger entry naming an unrelated issue for an issue's key", run: func(ctx context.Context, a *auditRun) (int, int, int, error) {
			k := auditKey("tracking", "issue", "")
			a.w.fake.SeedIssue(owner, repo, login, fixtures.SeedIssue{Title: "Track the rollout", Body: taskkey.WithMarker(k, "Rollout of v2."), Labels: []string{taskkey.Label(k)}})
			unrelated := a.seedIssue(login, "Rotate the signing key", "It expires in May.")
			if err := a.forge(ctx, k, "issue", ledger.Ref{Number: unrelated}); err != nil {
				return 0, 0, 0, err
			}
			if _, err := a.audit(ctx); err != nil {
				return 0, 0, 0, err
			}
			return a.closedOf(unrelated), 0, 0, nil
		}},
		{what: "a person's two commits on a pull request under one key", run: func(ctx context.Context, a *auditRun) (int, int, int, error) {
			k := auditKey("pr", "pr", "")
			a.agentPR("agent/cache-1", k)
			theirs := a.agentPR("agent/cache-2", k)
			for range 2 {
				a.w.fake.SetRef(owner, repo, "agent/cache-2", a.w.fake.AddCommitBy(owner, repo, "agent/cache-2", auditPerson))
			}
			if _, err := a.audit(ctx); err != nil {
				return 0, 0, 0, err
			}
			return a.closedPRs(theirs), 0, 0, nil
		}},
		{what: "a person's force-push to the agent's same change", note: "the one force-pushed is kept; the other is closed", run: func(ctx context.Context, a *auditRun) (int, int, int, error) {
			first := a.agentPR("agent/cache-1", "")
			pushed := a.agentPR("agent/cache-2", "")
			var head string
			for _, p := range a.w.fake.PullRequests(owner, repo) {
				if p.Number == first {
					head = p.HeadSHA
				}
			}
			same := a.w.fake.AddCommitSameTree(owner, repo, head, login)
			if err := a.as("PATCH", fmt.Sprintf("/repos/%s/%s/git/refs/heads/agent/cache-2", owner, repo), map[string]any{"sha": same, "force": true}); err != nil {
				return 0, 0, 0, err
			}
			if _, err := a.audit(ctx); err != nil {
				return 0, 0, 0, err
			}
			return a.closedPRs(pushed), a.closedPRs(first), 1, nil
		}},
		{what: "another author's marker (comment and issue, with the person's reaction)", run: func(ctx context.Context, a *auditRun) (int, int, int, error) {
			c, err := a.json(ctx, "issue", "comment", fmt.Sprint(commentOn), "--task", "T", "--step", "progress", "--body", "Step 1 of 3 done.")
			if err != nil {
				return 0, 0, 0, err
			}
			is, err := a.json(ctx, "issue", "create", "--task", "T", "--step", "status", "--title", "Status", "--body", "Running.")
			if err != nil {
				return 0, 0, 0, err
			}
			var cBody, iBody string
			for _, x := range a.w.fake.Comments(owner, repo, commentOn) {
				if x.ID == c.ID {
					cBody = x.Body
				}
			}
			for _, x := range a.w.fake.Issues(owner, repo) {
				if x.Number == is.Number {
					iBody = x.Body
				}
			}
			fc := a.w.fake.SeedComment(owner, repo, commentOn, auditPerson, cBody)
			a.w.fake.SeedReaction(owner, repo, commentOn, fc, auditPerson, "+1")
			fi := a.seedIssue(auditPerson, "Status", iBody)
			a.w.fake.SeedReaction(owner, repo, fi, 0, auditPerson, "heart")
			if _, err := a.audit(ctx); err != nil {
				return 0, 0, 0, err
			}
			return a.goneOf(commentOn, c.ID, fc) + a.closedOf(is.Number, fi), 0, 0, nil
		}},
		{what: "one text under two steps (\"CI passed.\" after two CI runs)", run: func(ctx context.Context, a *auditRun) (int, int, int, error) {
			var ids []int64
			for _, step := range []string{"ci-run-1", "ci-run-2"} {
				c, err := a.json(ctx, "issue", "comment", fmt.Sprint(commentOn), "--task", "T", "--step", step, "--body", "CI passed.")
				if err != nil {
					return 0, 0, 0, err
				}
				ids = append(ids, c.ID)
			}
			if _, err := a.audit(ctx); err != nil {
				return 0, 0, 0, err
			}
			return a.goneOf(commentOn, ids...), 0, 0, nil
		}},
		{what: "one text for two tasks (two nightly reports)", run: func(ctx context.Context, a *auditRun) (int, int, int, error) {
			var ns []int
			for _, task := range []string{"nightly-1", "nightly-2"} {
				is, err := a.json(ctx, "issue", "create", "--task", task, "--step", "report", "--title", "Nightly report", "--body", "All green.")
				if err != nil {
					return 0, 0, 0, err
				}
				ns = append(ns, is.Number)
			}
			if _, err := a.audit(ctx); err != nil {
				return 0, 0, 0, err
			}
			return a.closedOf(ns...), 0, 0, nil
		}},
		{what: "a recurrence after a person closed the first as completed", run: func(ctx context.Context, a *auditRun) (int, int, int, error) {
			first, err := a.json(ctx, "issue", "create", "--task", "disk-1", "--step", "alert", "--title", "Disk almost full", "--body", "95% used.")
			if err != nil {
				return 0, 0, 0, err
			}
			if err := a.as("PATCH", fmt.Sprintf("/repos/%s/%s/issues/%d", owner, repo, first.Number), map[string]string{"state": "closed", "state_reason": "completed"}); err != nil {
				return 0, 0, 0, err
			}
			again := a.seedIssue(login, "Disk almost full", "95% used.")
			if _, err := a.audit(ctx); err != nil {
				return 0, 0, 0, err
			}
			return a.closedOf(again), 0, 0, nil
		}},
		recheck("the kept comment deleted before the write", func(a *auditRun, errp *error) func() int {
			keep := a.w.fake.SeedComment(owner, repo, commentOn, login, "Done.")
			dup := a.w.fake.SeedComment(owner, repo, commentOn, login, "Done.")
			a.onFirstRead(fmt.Sprintf("/repos/%s/%s/issues/comments/%d", owner, repo, dup), errp, func() error {
				return a.as("DELETE", fmt.Sprintf("/repos/%s/%s/issues/comments/%d", owner, repo, keep), nil)
			})
			return func() int { return a.goneOf(commentOn, dup) }
		}),
		recheck("the duplicate comment edited before the write", func(a *auditRun, errp *error) func() int {
			a.w.fake.SeedComment(owner, repo, commentOn, login, "Done.")
			dup := a.w.fake.SeedComment(owner, repo, commentOn, login, "Done.")
			a.onFirstRead(fmt.Sprintf("/repos/%s/%s/issues/comments/%d", owner, repo, dup), errp, func() error {
				return a.as("PATCH", fmt.Sprintf("/repos/%s/%s/issues/comments/%d", owner, repo, dup), map[string]string{"body": "Done. Logs attached."})
			})
			return func() int { return a.goneOf(commentOn, dup) }
		}),
		recheck("a person comments on the duplicate issue before the write", func(a *auditRun, errp *error) func() int {
			a.seedIssue(login, "Flaky test", "TestX fails.")
			dup := a.seedIssue(login, "Flaky test", "TestX fails.")
			a.onFirstRead(fmt.Sprintf("/repos/%s/%s/issues/%d", owner, repo, dup), errp, func() error {
				return a.as("POST", fmt.Sprintf("/repos/%s/%s/issues/%d/comments", owner, repo, dup), map[string]string{"body": "I am on this one."})
			})
			return func() int { return a.closedOf(dup) }
		}),
		{what: "a person's comment older than --since (40 days, --since 30d)", note: "the one the person commented on is kept; the other is closed", run: func(ctx context.Context, a *auditRun) (int, int, int, error) {
			old := a.seedIssue(login, "Upgrade the toolchain", "It is out of date.")
			newer := a.seedIssue(login, "Upgrade the toolchain", "It is out of date.")
			a.w.fake.SeedComment(owner, repo, newer, auditPerson, "Mine.")
			a.w.clock.Advance(40 * 24 * time.Hour)
			a.w.fake.SeedLabel(owner, repo, old, login, "chore") // both updated since, by the agent
			a.w.fake.SeedLabel(owner, repo, newer, login, "chore")
			if _, err := a.audit(ctx, "--since", "30d"); err != nil {
				return 0, 0, 0, err
			}
			return a.closedOf(newer), a.closedOf(old), 1, nil
		}},
		cares("a person's label", func(a *auditRun, n int) { a.w.fake.SeedLabel(owner, repo, n, auditPerson, "bug") }),
		cares("a reference from a person's issue", func(a *auditRun, n int) { a.seedIssue(auditPerson, "Seen again", fmt.Sprintf("Same as #%d.", n)) }),
		cares("a person's reaction (the agent's own reaction on the other)", func(a *auditRun, n int) {
			a.w.fake.SeedReaction(owner, repo, n-1, 0, login, "eyes")
			a.w.fake.SeedReaction(owner, repo, n, 0, auditPerson, "+1")
		}),
		{what: "a person's branches at a commit the agent wrote", run: func(ctx context.Context, a *auditRun) (int, int, int, error) {
			sha := a.w.fake.AddCommitBy(owner, repo, "main", login)
			for _, b := range []string{"staging", "release-1", "agent/stray-1", "agent/stray-2"} {
				a.w.fake.SetRef(owner, repo, b, sha)
			}
			before := len(a.w.fake.Branches(owner, repo))
			if _, err := a.audit(ctx); err != nil {
				return 0, 0, 0, err
			}
			return before - len(a.w.fake.Branches(owner, repo)), 0, 0, nil
		}},
		{what: "pull requests whose head commits GitHub cannot return (422)", run: func(ctx context.Context, a *auditRun) (int, int, int, error) {
			var ns []int
			for _, b := range []string{"agent/gone-1", "agent/gone-2"} {
				a.w.fake.SetRef(owner, repo, b, a.w.fake.AddCommitBy(owner, repo, "main", login))
				ns = append(ns, a.w.fake.SeedPR(owner, repo, login, fixtures.SeedPR{Title: "Refactor", Body: "Same change.", Head: b}))
			}
			for _, pr := range a.w.fake.PullRequests(owner, repo) {
				a.w.fake.ForgetCommit(owner, repo, pr.HeadSHA)
			}
			if _, err := a.audit(ctx); err != nil {
				return 0, 0, 0, err
			}
			fp := 0
			for _, pr := range a.w.fake.PullRequests(owner, repo) {
				if pr.State != "open" {
					fp++
				}
			}
			return fp, 0, 0, nil
		}},
		{what: "two audits at once, each with a ledger of its own", note: "a false positive here is a second linking comment", run: func(ctx context.Context, a *auditRun) (int, int, int, error) {
			old := a.seedIssue(login, "Flaky test", "TestX fails.")
			dup := a.seedIssue(login, "Flaky test", "TestX fails.")
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					o, err := a.ghonce(ctx, filepath.Join(a.w.dir, fmt.Sprintf("audit-%d.db", i)), "audit", "--apply", "--since", "0")
					if err == nil && o.Exit != 0 && o.Exit != 6 {
						err = fmt.Errorf("audit %d: exit %d: %s", i, o.Exit, cause(o.Stderr))
					}
					errs[i] = err
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					return 0, 0, 0, err
				}
			}
			links := 0
			for _, c := range a.w.fake.Comments(owner, repo, dup) {
				if strings.Contains(c.Body, "Closing as a duplicate of") {
					links++
				}
			}
			return max(links-1, 0) + a.closedOf(old), a.closedOf(dup), 1, nil
		}},
		{what: "the agent's rerun after --apply deleted its comment", note: "a false positive here is `skipped` with the deleted comment's URL", run: func(ctx context.Context, a *auditRun) (int, int, int, error) {
			a.w.fake.SeedComment(owner, repo, commentOn, login, "Deployed v2.")
			c, err := a.json(ctx, "issue", "comment", fmt.Sprint(commentOn), "--task", "T", "--step", "deployed", "--body", "Deployed v2.")
			if err != nil {
				return 0, 0, 0, err
			}
			if _, err := a.audit(ctx); err != nil {
				return 0, 0, 0, err
			}
			again, err := a.json(ctx, "issue", "comment", fmt.Sprint(commentOn), "--task", "T", "--step", "deployed", "--body", "Deployed v2.")
			if err != nil {
				return 0, 0, 0, err
			}
			fp := 0
			if again.URL == c.URL {
				fp = 1
			}
			return fp, a.goneOf(commentOn, c.ID), 1, nil
		}},
	}
}

// auditRows runs every case runs times, each in a world of its own.
func (m *matrix) auditRows(ctx context.Context, runs int) ([]*auditRow, error) {
	var rows []*auditRow
	for ci, c := range auditCases() {
		r := &auditRow{what: c.what, note: c.note}
		for n := range runs {
			w, err := m.newWorld(fmt.Sprintf("audit-%d-%d", ci, n), fixtures.Options{})
			if err != nil {
				return nil, err
			}
			w.fake.AddUser(auditPerson, auditPersonToken)
			a := &auditRun{w: w, ledger: filepath.Join(w.dir, "ledger.db")}
			r.add(c.run(ctx, a))
			w.fake.Close()
		}
		if r.fp != 0 {
			r.errorf("%d false positive(s): --apply closed or deleted what is not a proven duplicate", r.fp)
		}
		if r.settled != r.want {
			r.errorf("%d of %d true duplicates settled", r.settled, r.want)
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func (r *auditRow) add(fp, settled, want int, err error) {
	r.runs++
	if err != nil {
		r.errorf("run %d: %v", r.runs, err)
		return
	}
	r.fp += fp
	r.settled += settled
	r.want += want
}

// cells is r's line in the audit table.
func (r *auditRow) cells() []string {
	settled := "-"
	if r.want > 0 {
		settled = fmt.Sprintf("%d of %d", r.settled, r.want)
	}
	note := r.note
	if len(r.errs) > 0 {
		note = strings.TrimPrefix(note+"; **"+strings.Join(r.errs, "; ")+"**", "; ")
	}
	return []string{r.what, strconv.Itoa(r.runs), strconv.Itoa(r.fp), settled, note}
}
