package main_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/fakegithub"
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
		return c.Kind == fakegithub.KindRef && c.Method == http.MethodPost && strings.HasPrefix(c.Ref, "refs/ghonce/claims/")
	}
	for _, tc := range []struct {
		window string
		kill   func(c *fixtures.Commit) bool
	}{
		// Nothing is in effect: a commit no ref points at.
		{"after the claim's commit object", func(c *fixtures.Commit) bool { return c.Kind == fakegithub.KindGitObject }},
		// The claim is held by a dead process, its mark dated by the
		// claim: a taker waits out GitHub's window from it, then looks.
		{"after the claim's ref", claimRef},
		// The issue exists; the claim says only that a create was sent.
		{"after the create", func(c *fixtures.Commit) bool { return c.Kind == fakegithub.KindIssue }},
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

// TestExecKilledBeforeItsStartMark: ghonce is killed (SIGKILL, a real
// process) right after GitHub stored its claim and before it wrote the
// mark that the command starts: the command cannot have started (it starts
// only once the mark is written). The next run, on a fresh runner, proves
// the killed holder gone and runs the command; it ran once, and a replay
// runs nothing. Before, the entry stayed unconfirmed (exit 3) for good.
func TestExecKilledBeforeItsStartMark(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	runner := func() []string {
		home := t.TempDir()
		return slices.Concat(w.env, []string{"GHONCE_LEDGER=github", "GH_REPO=" + repo, "HOME=" + home, "XDG_STATE_HOME=" + filepath.Join(home, "state")})
	}
	out := filepath.Join(w.dir, "deploys")
	args := []string{"exec", "--task", "RL-EXEC", "--step", "deploy", "--json", "--", "/bin/sh", "-c", "echo deployed >> " + out}
	claimed := func(c *fixtures.Commit) bool {
		return c.Kind == fakegithub.KindRef && c.Method == http.MethodPost && strings.HasPrefix(c.Ref, "refs/ghonce/claims/")
	}
	if o := w.execEnv(claimed, runner(), args...); !o.Killed {
		t.Fatalf("want the first run killed after its claim; it ended with exit %d\nstderr: %s", o.Exit, o.Stderr)
	}
	if n := countLines(t, out); n != 0 {
		t.Fatalf("the command ran %d times before its start was marked", n)
	}
	for i, want := range []string{"created", "skipped"} {
		o := w.execEnv(nil, runner(), args...)
		var r result
		oneJSON(t, o.Stdout, &r)
		if o.Exit != 0 || r.Outcome != want || countLines(t, out) != 1 {
			t.Fatalf("run %d after the kill: exit %d, %+v, command ran %d times; want %s, once\nstderr: %s", i+2, o.Exit, r, countLines(t, out), want, o.Stderr)
		}
	}
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}
