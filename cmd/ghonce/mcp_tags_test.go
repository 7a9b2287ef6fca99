package main_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/taskkey"
	"github.com/ghonce/ghonce/tests/harness"
)

// `ghonce mcp` answers a pull request once GitHub answered its create; the
// labels and the done record follow. Killed in between (the answer given,
// the labels not yet sent), the pull request is left bare and the entry
// attempting, as after a crash between the create and the labels: the
// restarted server's call, with another head, finds it through the ledger
// (the first head) and adds the labels; with the ledger deleted and the
// same head, the head finds it and the labels are added as well.
func TestMCPKilledAfterAnsweringBeforeLabels(t *testing.T) {
	for _, lose := range []bool{false, true} {
		t.Run(fmt.Sprintf("ledger deleted=%v", lose), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.push("fix-42")
			w.push("fix-42-b")
			first := w.startMCP()
			answered := make(chan struct{})
			killed := make(chan struct{})
			w.fake.BeforeWrite(func(pw *fixtures.PendingWrite) bool {
				if pw.Method != "POST" || !strings.HasSuffix(pw.Path, "/labels") {
					return true
				}
				select {
				case <-answered:
				case <-time.After(time.Minute):
					t.Error("the labels were sent before the call was answered")
				}
				harness.KillAndWaitDead(first.cmd.Process)
				close(killed)
				return false
			})
			r, _ := first.ok("create_pull_request", mcpArgs("title", "Fix #42", "head", "fix-42", "base", "main", "body", "Generated fix."))
			close(answered)
			<-killed
			w.fake.BeforeWrite(nil)
			if r.Outcome != "created" || r.Number == 0 {
				t.Fatalf("first call: %+v, want created with its number", r)
			}
			prs := w.ourPRs()
			if len(prs) != 1 || len(prs[0].Labels) != 0 {
				t.Fatalf("after the kill: our PRs %+v, want the one created, bare", prs)
			}
			if !lose {
				for _, e := range w.status() {
					if e.Status != "attempting" {
						t.Fatalf("ledger after the kill: entry %s, want attempting (done follows the labels)", e.Status)
					}
				}
			} else {
				w.deleteLedger()
			}

			head := "fix-42-b" // another head: the ledger remembers the first
			if lose {
				head = "fix-42"
			}
			second := w.startMCP()
			again, _ := second.ok("create_pull_request", mcpArgs("title", "Fix #42", "head", head, "base", "main", "body", "Generated fix."))
			if again.Outcome != "found" || again.Number != r.Number {
				t.Fatalf("call after the restart: %+v, want found #%d", again, r.Number)
			}
			if err := second.cs.Close(); err != nil {
				t.Fatalf("ghonce mcp after stdin closed: %v\nstderr: %s", err, second.stderr)
			}
			prs = w.ourPRs()
			if len(prs) != 1 || !slices.Contains(prs[0].Labels, taskkey.Label(r.Key)) {
				t.Fatalf("after the restart: our PRs %+v, want the one, labelled %s", prs, taskkey.Label(r.Key))
			}
		})
	}
}
