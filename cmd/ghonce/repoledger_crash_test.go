package main_test

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
)

// TestRepositoryLedgerCrashWindows: on the repository ledger a first
// create writes its claim as a commit object, then the claim's ref (the
// claim is the in-flight mark too: no separate write before the create),
// then the artifact. A run is killed in each window, right after GitHub
// stored that write and before its answer arrived; then three racers that
// share nothing (each its own home, no ledger file anywhere, released
// together) run the same command. Each window ends with one issue and
// every racer answering it, and a replay writes nothing.
func TestRepositoryLedgerCrashWindows(t *testing.T) {
	claimRef := func(c *fixtures.Commit) bool {
		return c.Kind == fixtures.KindRef && c.Method == http.MethodPost && strings.HasPrefix(c.Ref, "refs/ghonce/claims/")
	}
	for _, tc := range []struct {
		window string
		kill   func(c *fixtures.Commit) bool
	}{
		// Nothing is in effect: a commit no ref points at.
		{"after the claim's commit object", func(c *fixtures.Commit) bool { return c.Kind == fixtures.KindGitObject }},
		// The claim is held by a dead process, its mark dated by the
		// claim: a taker waits out GitHub's window from it, then looks.
		{"after the claim's ref", claimRef},
		// The issue exists; the claim says only that a create was sent.
		{"after the create", func(c *fixtures.Commit) bool { return c.Kind == fixtures.KindIssue }},
	} {
		t.Run(tc.window, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			runner := func() []string {
				home := t.TempDir()
				return slices.Concat(w.env, []string{"GHONCE_LEDGER=github", "GH_REPO=" + repo, "HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state")})
			}
			args := []string{"issue", "create", "--task", "RL-CRASH", "--title", "Follow-up", "--body", "Seen twice.", "--json", "--wait", "90s"}
			if o := w.execEnv(tc.kill, runner(), args...); !o.Killed {
				t.Fatalf("want the first run killed %s; it ended with exit %d\nstdout: %s\nstderr: %s", tc.window, o.Exit, o.Stdout, o.Stderr)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			var racers []*started
			for range 3 {
				racers = append(racers, start(t, ctx, runner(), args...))
			}
			number := 0
			for i, p := range racers {
				if code := p.wait(t); code != 0 {
					t.Fatalf("racer %d: exit %d\nstderr: %s", i, code, p.stderr.String())
				}
				var r result
				oneJSON(t, p.stdout.String(), &r)
				if number != 0 && r.Number != number {
					t.Errorf("racer %d answered #%d, another #%d", i, r.Number, number)
				}
				number = r.Number
			}
			mine := 0
			for _, is := range w.fake.Issues(owner, name) {
				if is.Author == login {
					mine++
				}
			}
			if mine != 1 {
				t.Fatalf("%d issues after a run killed %s and three racers, want 1", mine, tc.window)
			}
			before, _ := w.counts()
			o := w.execEnv(nil, runner(), args...)
			var r result
			oneJSON(t, o.Stdout, &r)
			if after, _ := w.counts(); o.Exit != 0 || r.Number != number || after != before {
				t.Fatalf("replay: exit %d, #%d, %d writes; want #%d and none\nstderr: %s", o.Exit, r.Number, after-before, number, o.Stderr)
			}
		})
	}
}
