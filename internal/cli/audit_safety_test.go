package cli

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/store"
	"github.com/ghonce/ghonce/taskkey"
	"github.com/ghonce/ghonce/tests/audittest"
)

// The cases issue 37 measured `audit --apply` destroying: each is laid
// out on octo/t (trustRepo) and checked by what a person would look for
// afterwards: their words, still on GitHub.

// naiveKey is the key a naive run's step gave a comment on thread n of
// octo/t, or an issue or pull request (n 0).
func naiveKey(step, kind string, n int) string {
	target := ""
	if n != 0 {
		target = fmt.Sprint(n)
	}
	return audittest.Key("octo", "t", step, kind, target)
}

// body is comment id's text on thread n, and whether it is there.
func (w *auditWorld) body(n int, id int64) (string, bool) {
	c, ok := w.comment(n, id)
	return c.Body, ok
}

// TestAuditApplyKeepsWhatDiffers: in a group of one key, a comment whose
// text is not the kept one's (a maintainer edited it before the audit, or
// the agent's own retry said more) is never deleted: it is reported, and
// the audit exits 6. An exact copy under the key still is deleted.
func TestAuditApplyKeepsWhatDiffers(t *testing.T) {
	for _, tc := range []struct {
		name, first, second, edit string
	}{
		{name: "maintainer edited the copy", first: "Failover drill at 14:00.", second: "Failover drill at 14:00.",
			edit: "Failover drill at 14:00.\n\nMaintainer note: restore needs runbook step 7 BEFORE failover"},
		{name: "the agent's longer reworded retry", first: "Investigating the outage.",
			second: "Investigating the outage on the load balancers. Root cause: expired TLS cert on lb-3; rotating now."},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			w := newAuditWorld(t)
			trustRepo(t, w)
			k := naiveKey("status", "comment", 1)
			w.fake.SeedComment("octo", "t", 1, audittest.Agent, taskkey.WithMarker(k, tc.first))
			dup := w.fake.SeedComment("octo", "t", 1, audittest.Agent, taskkey.WithMarker(k, tc.second))
			words := tc.second
			if tc.edit != "" {
				w.as("PATCH", fmt.Sprintf("/repos/octo/t/issues/comments/%d", dup), map[string]string{"body": taskkey.WithMarker(k, tc.edit)})
				words = tc.edit
			}
			// Beside them, an exact copy under another key: deleted.
			ek := naiveKey("done", "comment", 1)
			w.fake.SeedComment("octo", "t", 1, audittest.Agent, taskkey.WithMarker(ek, "Done."))
			copyID := w.fake.SeedComment("octo", "t", 1, audittest.Agent, taskkey.WithMarker(ek, "Done."))

			r := w.run("audit", "--since", "0", "--apply")
			if got, ok := w.body(1, dup); !ok || !strings.Contains(got, words) {
				t.Fatalf("the comment %d with %q is gone or changed (%q)\n%s\n%s", dup, words, got, r.stdout, r.stderr)
			}
			if _, ok := w.comment(1, copyID); ok {
				t.Errorf("the exact copy %d under one key was not deleted\n%s\n%s", copyID, r.stdout, r.stderr)
			}
			if r.code != ExitDuplicates || !strings.Contains(r.stdout, "left alone: its text differs from the kept one's") {
				t.Fatalf("exit %d, want %d with the reason in the table\n%s\n%s", r.code, ExitDuplicates, r.stdout, r.stderr)
			}
		})
	}
}

// TestAuditApplyPacesBeforeTheReread: nine copies of one comment and
// GHONCE_WRITES_PER_MINUTE=5 (the setting for a shared token), on a
// SQLite ledger and on the repository's own (whose writes are paced too):
// deletes wait for the pacer. A person edits every copy left at the first
// wait after a delete; none of their edits is deleted, since each copy is
// read again after the wait, right before its DELETE. The clock is the
// test's and moves only when the pacer waits.
func TestAuditApplyPacesBeforeTheReread(t *testing.T) {
	for _, ledger := range []string{"sqlite", "repository"} {
		t.Run(ledger, func(t *testing.T) {
			var mu sync.Mutex
			at := time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
			now := func() time.Time {
				mu.Lock()
				defer mu.Unlock()
				return at
			}
			fake := fixtures.NewServer(fixtures.Options{Now: now})
			t.Cleanup(fake.Close)
			audittest.Seed(fake, "octo", "corpus")
			w := &auditWorld{t: t, fake: fake, now: now, env: map[string]string{
				"GH_TOKEN": audittest.AgentToken, "GITHUB_API_URL": fake.URL(), "GHONCE_LEDGER": t.TempDir() + "/ledger.db",
				"GHONCE_WRITES_PER_MINUTE": "5"}}
			if ledger == "repository" {
				home := t.TempDir()
				w.env["GHONCE_LEDGER"], w.env["GITHUB_REPOSITORY"], w.env["HOME"] = "github", "octo/t", home
			}
			trustRepo(t, w)
			var ids []int64
			for range 9 {
				ids = append(ids, fake.SeedComment("octo", "t", 1, audittest.Agent, "Deployed v2 to staging."))
			}
			const note = "Deployed v2 to staging.\n\nalice: keep this one, the rollback link is here."
			// On the test's clock, the longest time from a re-read to the
			// DELETE it allowed: the re-read reads the kept comment last
			// (the engine's own look-up reads only the duplicate).
			var seen sync.Mutex
			var reread time.Time
			var gap time.Duration
			deletes := 0
			kept := fmt.Sprint(ids[0])
			fake.Inject(fixtures.Fault{Times: 1 << 20, Match: func(q *http.Request) bool {
				seen.Lock()
				defer seen.Unlock()
				if p, ok := strings.CutPrefix(q.URL.Path, "/repos/octo/t/issues/comments/"); ok && !strings.Contains(p, "/") {
					switch {
					case q.Method == http.MethodGet && p == kept:
						reread = now()
					case q.Method == http.MethodDelete:
						gap, deletes = max(gap, now().Sub(reread)), deletes+1
					}
				}
				return false
			}})
			edited := map[int64]bool{}
			waits := 0
			w.sleep = func(_ context.Context, d time.Duration) error {
				seen.Lock()
				first := deletes > 0 && len(edited) == 0
				seen.Unlock()
				if waits++; first {
					for _, id := range ids[1:] {
						if _, ok := w.comment(1, id); ok {
							w.as("PATCH", fmt.Sprintf("/repos/octo/t/issues/comments/%d", id), map[string]string{"body": note})
							edited[id] = true
						}
					}
				}
				mu.Lock()
				at = at.Add(d)
				mu.Unlock()
				return nil
			}
			r := w.run("audit", "--since", "0", "--apply")
			seen.Lock()
			defer seen.Unlock()
			t.Logf("%d pacer waits; the longest time from a re-read to its DELETE: %s", waits, gap)
			if gap > 0 {
				t.Errorf("a DELETE came %s after its re-read: the pacer waited between them", gap)
			}
			if len(edited) == 0 {
				t.Fatalf("the pacer never waited after a delete (%d waits): the case is not made\n%s\n%s", waits, r.stdout, r.stderr)
			}
			for id := range edited {
				if got, ok := w.body(1, id); !ok || got != note {
					t.Errorf("alice's edit of comment %d, made while the pacer waited, is gone (%q)", id, got)
				}
			}
			deleted := 0
			for _, id := range ids[1:] {
				if _, ok := w.comment(1, id); !ok {
					deleted++
				}
			}
			if deleted != len(ids)-1-len(edited) {
				t.Errorf("%d copies deleted, want the %d nobody edited\n%s\n%s", deleted, len(ids)-1-len(edited), r.stdout, r.stderr)
			}
			if r.code != ExitDuplicates {
				t.Errorf("exit %d, want %d: the edited copies are left for a person\n%s\n%s", r.code, ExitDuplicates, r.stdout, r.stderr)
			}
		})
	}
}

// forge writes a done entry into the world's ledger, as anyone who can
// write to it could: key k names the artifact ref of kind.
func (w *auditWorld) forge(k, kind string, ref ledger.Ref) {
	w.t.Helper()
	ctx := context.Background()
	l, err := store.Open(ctx, w.env["GHONCE_LEDGER"], store.Options{Create: store.CreateForAction})
	if err != nil {
		w.t.Fatal(err)
	}
	defer l.Close()
	c, err := l.Claim(ctx, ledger.ClaimParams{Key: k, Kind: kind, Repo: "octo/t", Owner: ledger.Owner{ID: "mallory"}, Lease: time.Minute, Why: "forged"})
	if err != nil {
		w.t.Fatal(err)
	}
	if _, err := l.Finish(ctx, ledger.FinishParams{Key: k, Fence: c.Entry.Fence, Status: ledger.Done, Outcome: "created", Ref: ref, Why: "forged"}); err != nil {
		w.t.Fatal(err)
	}
}

// TestAuditApplyConfirmsLedgerEntries: a ledger entry claims the key of
// the agent's comment on #1 for a comment with the same words on #2, and
// the key of the agent's issue for an unrelated issue. Neither joins the
// key's group: a group never spans threads, and a key joins an artifact
// only when the artifact carries it (its marker or label) on GitHub. A
// third entry names a true duplicate on #2 under a key it does not carry:
// the duplicate is deleted, and the entry is not pointed at the kept one
// (the audit confirms no entry GitHub does not).
func TestAuditApplyConfirmsLedgerEntries(t *testing.T) {
	w := newAuditWorld(t)
	trustRepo(t, w)
	two := w.fake.SeedIssue("octo", "t", audittest.Agent, fixtures.SeedIssue{Title: "Deploy staging", Body: "Staging first."})
	k := naiveKey("deployed", "comment", 1)
	w.fake.SeedComment("octo", "t", 1, audittest.Agent, taskkey.WithMarker(k, "Deployed."))
	other := w.fake.SeedComment("octo", "t", two, audittest.Agent, "Deployed.")
	w.forge(k, "comment", ledger.Ref{Number: two, ID: other})

	ik := naiveKey("tracking", "issue", 0)
	w.fake.SeedIssue("octo", "t", audittest.Agent, fixtures.SeedIssue{Title: "Track the rollout", Body: taskkey.WithMarker(ik, "Rollout of v2."), Labels: []string{taskkey.Label(ik)}})
	unrelated := w.fake.SeedIssue("octo", "t", audittest.Agent, fixtures.SeedIssue{Title: "Rotate the signing key", Body: "It expires in May."})
	w.forge(ik, "issue", ledger.Ref{Number: unrelated})

	kept := w.fake.SeedComment("octo", "t", two, audittest.Agent, "Staging is green.")
	dup := w.fake.SeedComment("octo", "t", two, audittest.Agent, "Staging is green.")
	tk := naiveKey("green", "comment", two)
	w.forge(tk, "comment", ledger.Ref{Number: two, ID: dup})

	r := w.run("audit", "--since", "0", "--apply")
	if _, ok := w.comment(two, other); !ok {
		t.Errorf("the comment on #%d was deleted as a duplicate of one on #1\n%s\n%s", two, r.stdout, r.stderr)
	}
	if st := w.issueState(unrelated); st != "open" {
		t.Errorf("the unrelated issue #%d is %s\n%s\n%s", unrelated, st, r.stdout, r.stderr)
	}
	if r.code != ExitOK || strings.Contains(r.stdout, fmt.Sprintf("#%d ", unrelated)) || strings.Contains(r.stdout, fmt.Sprint(other)) {
		t.Errorf("exit %d, or the report groups them; want 0 and neither in a group\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if _, ok := w.comment(two, dup); ok {
		t.Errorf("the true duplicate %d on #%d was not deleted\n%s\n%s", dup, two, r.stdout, r.stderr)
	}
	l, err := store.Open(context.Background(), w.env["GHONCE_LEDGER"], store.Options{Create: store.CreateNever})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if e, err := l.Get(context.Background(), tk); err != nil || e.Ref.ID == kept {
		t.Errorf("the forged entry %s now points at the kept comment %d (%v): the audit vouched for it", tk, kept, err)
	}
}

// agentPR opens a pull request by the agent from a new branch one commit
// (by the agent) ahead of main, carrying key k when it is not "".
func (w *auditWorld) agentPR(branch, k string) int {
	w.fake.SetRef("octo", "t", branch, w.fake.AddCommitBy("octo", "t", "main", audittest.Agent))
	pr := fixtures.SeedPR{Title: "Add the cache", Body: "Caches the login lookup.", Head: branch}
	if k != "" {
		pr.Body, pr.Labels = taskkey.WithMarker(k, pr.Body), []string{taskkey.Label(k)}
	}
	return w.fake.SeedPR("octo", "t", audittest.Agent, pr)
}

// TestAuditApplyCommitsArePeoples: commits pushed by a person, and a
// person's force-push, are a person's involvement: the pull request
// carrying them is never closed.
func TestAuditApplyCommitsArePeoples(t *testing.T) {
	t.Run("a person's two commits under one key", func(t *testing.T) {
		w := newAuditWorld(t)
		trustRepo(t, w)
		k := naiveKey("pr", "pr", 0)
		w.agentPR("agent/cache-1", k)
		theirs := w.agentPR("agent/cache-2", k)
		for range 2 {
			w.fake.SetRef("octo", "t", "agent/cache-2", w.fake.AddCommitBy("octo", "t", "agent/cache-2", audittest.Human))
		}
		r := w.run("audit", "--since", "0", "--apply")
		if st := w.issueState(theirs); st != "open" {
			t.Fatalf("#%d, carrying alice's two commits, is %s\n%s\n%s", theirs, st, r.stdout, r.stderr)
		}
		if !strings.Contains(r.stdout, "commits by alice") {
			t.Errorf("the report does not name alice's commits\n%s", r.stdout)
		}
	})
	t.Run("a person's force-push", func(t *testing.T) {
		w := newAuditWorld(t)
		trustRepo(t, w)
		first := w.agentPR("agent/cache-1", "")
		pushed := w.agentPR("agent/cache-2", "")
		// alice force-pushes the second to the agent's change of the first,
		// recommitted: the same tree, every commit the agent's.
		var head string
		for _, p := range w.fake.PullRequests("octo", "t") {
			if p.Number == first {
				head = p.HeadSHA
			}
		}
		same := w.fake.AddCommitSameTree("octo", "t", head, audittest.Agent)
		w.as("PATCH", "/repos/octo/t/git/refs/heads/agent/cache-2", map[string]any{"sha": same, "force": true})
		r := w.run("audit", "--since", "0", "--apply")
		if st := w.issueState(pushed); st != "open" {
			t.Fatalf("#%d, force-pushed by alice, is %s\n%s\n%s", pushed, st, r.stdout, r.stderr)
		}
		if st := w.issueState(first); st != "closed" {
			t.Errorf("#%d, the same change nobody touched, is %s; want closed as a duplicate of #%d\n%s\n%s", first, st, pushed, r.stdout, r.stderr)
		}
	})
}
