package main_test

import (
	"strings"
	"testing"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/fakegithub"
)

// `branch create --from REF` resolves REF while it looks for the branch,
// and a rerun resolves it again: what to make comes from the run's own
// input, never from the commit the ledger recorded. Killed at GitHub's
// commit of the ref, with REF moved on since: the rerun finds the branch
// at the first commit (an earlier head of REF, which REF's head now
// descends from, and this key was attempting) and writes nothing. Lost in
// flight (nothing stored on GitHub): the rerun creates it at REF's head
// now.
func TestBranchFromRefRerunAdoptsTheFirstCommit(t *testing.T) {
	for _, tc := range []struct {
		name string
		kill bool
	}{{"killed at the commit", true}, {"create lost in flight", false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			first, _ := w.fake.Branch(owner, name, "main")
			args := []string{"branch", "create", "from-ref", "--task", "ISSUE-42", "--from", "main"}
			if tc.kill {
				w.crash(fakegithub.KindRef, args...)
			} else {
				w.fake.BeforeWrite(func(pw *fixtures.PendingWrite) bool { return !strings.HasSuffix(pw.Path, "/git/refs") })
				if o := w.run(args...); o.Exit != 3 {
					t.Fatalf("first attempt with its create lost: exit %d, want 3 (unconfirmed)\nstderr: %s", o.Exit, o.Stderr)
				}
				w.fake.BeforeWrite(nil)
				if _, ok := w.fake.Branch(owner, name, "from-ref"); ok {
					t.Fatal("the lost create made the branch")
				}
			}
			moved := w.push("main")
			if moved == first {
				t.Fatal("main did not move")
			}
			writes, _ := w.counts()
			r := w.ok(args...)
			at, ok := w.fake.Branch(owner, name, "from-ref")
			want := first
			if !tc.kill {
				want = moved
			}
			if !ok || at != want || r.SHA != want {
				t.Fatalf("rerun: %+v, branch at %s (exists %v); want it at %s (first attempt's commit %s, main's new head %s)", r, at, ok, want, first, moved)
			}
			w2, _ := w.counts()
			switch {
			case tc.kill && (r.Outcome != "found" || w2 != writes):
				t.Fatalf("rerun after the kill: outcome %s, %d writes; want found with none", r.Outcome, w2-writes)
			case !tc.kill && r.Outcome != "created":
				t.Fatalf("rerun after the lost create: outcome %s, want created", r.Outcome)
			}
			if r.PayloadChanged {
				t.Fatalf("rerun of the same command: payload_changed, want the description unchanged")
			}
		})
	}
}
