package main_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/fakegithub"
	"github.com/ghonce/ghonce/tests/audittest"
	"github.com/ghonce/ghonce/tests/harness"
)

// TestAuditApplyKilledThenRerun: `audit --apply` on the corpus, killed
// (SIGKILL, the real process) right after GitHub stored its first write of
// each sort, then run again to the end: every duplicate issue and PR of
// the agent is closed by exactly one request, with exactly one linking
// comment, the duplicate comment is gone, no branch is deleted, nothing
// is left attempting, and a third run writes nothing. The duplicates whose
// text differs from the kept one's are never touched (exit 6 for them).
func TestAuditApplyKilledThenRerun(t *testing.T) {
	for _, kill := range []struct {
		name string
		at   func(c *fixtures.Commit) bool
	}{
		{"link comment", func(c *fixtures.Commit) bool { return c.Kind == fakegithub.KindComment && c.Method == "POST" }},
		{"issue close", func(c *fixtures.Commit) bool { return c.Kind == fakegithub.KindIssue }},
		{"pr close", func(c *fixtures.Commit) bool { return c.Kind == fakegithub.KindPull }},
		{"comment delete", func(c *fixtures.Commit) bool { return c.Kind == fakegithub.KindComment && c.Method == "DELETE" }},
	} {
		t.Run(kill.name, func(t *testing.T) {
			fake := fixtures.NewServer(fixtures.Options{})
			t.Cleanup(fake.Close)
			corpus := audittest.Seed(fake, "octo", "corpus")
			branchesBefore := fake.Branches("octo", "corpus")
			runner := harness.NewRunner(fake)
			dir := t.TempDir()
			env := append(harness.CleanEnv(), "GH_TOKEN="+audittest.AgentToken, "GITHUB_API_URL="+fake.URL(),
				"HOME="+dir, "XDG_STATE_HOME="+filepath.Join(dir, "xdg"), "GHONCE_LEDGER="+filepath.Join(dir, "ledger.db"))
			args := []string{"audit", "--repo", "octo/corpus", "--since", "0", "--apply"}
			run := func(killOn func(*fixtures.Commit) bool) harness.Outcome {
				t.Helper()
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				o, err := runner.Run(ctx, bin, args, env, killOn)
				recordOutput(t, args, o.Stdout, o.Stderr)
				if err != nil {
					t.Fatal(err)
				}
				return o
			}
			first := true
			if o := run(func(c *fixtures.Commit) bool {
				hit := first && kill.at(c)
				first = first && !hit
				return hit
			}); !o.Killed {
				t.Fatalf("not killed at the first %s: exit %d\n%s", kill.name, o.Exit, o.Stderr)
			}
			o := run(nil)
			if o.Exit != 6 {
				t.Fatalf("rerun: exit %d, want 6 (the duplicates whose text differs)\n%s", o.Exit, o.Stderr)
			}
			// Nothing is left attempting: the rerun settled what the
			// killed run began, even a close GitHub had stored.
			st := run2(runner, t, env, "status", "--state", "attempting")
			if strings.Contains(st.Stdout, "attempting") {
				t.Fatalf("entries left attempting after the rerun:\n%s\nrerun:\n%s", st.Stdout, o.Stderr)
			}
			closes := map[string]int{}
			for _, q := range fake.Requests() {
				if q.Method == "PATCH" && q.Status == 200 {
					closes[q.Path]++
				}
			}
			for _, g := range corpus.Groups {
				if (g.Kind != "issue" && g.Kind != "pr") || !g.Ours {
					continue
				}
				for _, d := range g.Duplicates {
					var n int
					fmt.Sscanf(d, "#%d", &n)
					path := fmt.Sprintf("/repos/octo/corpus/issues/%d", n)
					if g.Kind == "pr" {
						path = fmt.Sprintf("/repos/octo/corpus/pulls/%d", n)
					}
					want := 1
					if g.Differs {
						want = 0
					}
					if closes[path] != want {
						t.Errorf("%s %s: closed by %d requests, want %d", g.Kind, d, closes[path], want)
					}
					links := 0
					for _, c := range fake.Comments("octo", "corpus", n) {
						if c.Author == audittest.Agent && strings.Contains(c.Body, "\nClosing as a duplicate of "+g.Keep+".") {
							links++
						}
					}
					if links != want {
						t.Errorf("%s %s: %d linking comments, want %d", g.Kind, d, links, want)
					}
				}
			}
			if branches := fake.Branches("octo", "corpus"); len(branches) != len(branchesBefore) {
				t.Errorf("branches %v after the rerun, want %v: audit deletes none", branches, branchesBefore)
			}
			if n := len(fake.Comments("octo", "corpus", 1)); n != 2 { // the kept "Build passed" and alice's
				t.Errorf("#1 has %d comments after the rerun, want 2", n)
			}
			writes := fake.Writes()
			if o := run(nil); o.Exit != 6 || fake.Writes() != writes {
				t.Fatalf("third run: exit %d, %d writes, want 6 and none\n%s", o.Exit, fake.Writes()-writes, o.Stderr)
			}
		})
	}
}

func run2(runner *harness.Runner, t *testing.T, env []string, args ...string) harness.Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o, err := runner.Run(ctx, bin, args, env, nil)
	if err != nil {
		t.Fatal(err)
	}
	return o
}
