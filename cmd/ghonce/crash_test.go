package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/fakegithub"
)

// artifact is one of our artifacts on the fake, as a kind case sees it.
type artifact struct {
	Number int
	ID     int64
	SHA    string
	Desc   string // everything that must not change once it exists
}

// kindCase is one kind of side effect, as the real binary performs it.
type kindCase struct {
	name string
	// kill is the write at which the first run is killed.
	kill fixtures.CommitKind
	// setup prepares the fake and returns the command (with --task).
	setup func(w *world) []string
	// mine lists our artifacts of this kind on the fake.
	mine func(w *world) []artifact
	// same reports whether r names a.
	same func(r result, a artifact) bool
}

const fileContent = "# Changelog\n\n- Fix #42\n"

func kindCases() []kindCase {
	byNumber := func(r result, a artifact) bool { return r.Number == a.Number && r.URL != "" }
	byID := func(r result, a artifact) bool { return r.ID == a.ID && r.URL != "" }
	bySHA := func(r result, a artifact) bool { return r.SHA == a.SHA }
	comments := func(w *world) []artifact {
		var out []artifact
		for _, c := range w.fake.Comments(owner, name, w.number) {
			if c.Author == login {
				out = append(out, artifact{ID: c.ID, Desc: c.Body})
			}
		}
		return out
	}
	return []kindCase{
		{
			name: "pr create", kill: fakegithub.KindPull,
			setup: func(w *world) []string {
				w.push("fix-42")
				return []string{"pr", "create", "--task", "ISSUE-42", "--base", "main", "--head", "fix-42", "--title", "Fix #42", "--body", "Generated fix."}
			},
			mine: func(w *world) []artifact {
				var out []artifact
				for _, p := range w.fake.PullRequests(owner, name) {
					if p.Author == login {
						out = append(out, artifact{Number: p.Number, Desc: fmt.Sprintf("%d %s %s %q %q", p.Number, p.Head, p.HeadSHA, p.Title, p.Body)})
					}
				}
				return out
			},
			same: byNumber,
		},
		{
			name: "issue create", kill: fakegithub.KindIssue,
			setup: func(w *world) []string {
				return []string{"issue", "create", "--task", "ISSUE-42", "--title", "Follow-up: flaky test", "--body", "Seen twice today."}
			},
			mine: func(w *world) []artifact {
				var out []artifact
				for _, is := range w.fake.Issues(owner, name) {
					if is.Author == login {
						out = append(out, artifact{Number: is.Number, Desc: fmt.Sprintf("%d %q %q %v", is.Number, is.Title, is.Body, is.Labels)})
					}
				}
				return out
			},
			same: byNumber,
		},
		{
			name: "issue comment", kill: fakegithub.KindComment,
			setup: func(w *world) []string {
				w.number = w.fake.SeedIssue(owner, name, stranger, fixtures.SeedIssue{Title: "It crashes", Body: "On start."})
				return []string{"issue", "comment", strconv.Itoa(w.number), "--task", "ISSUE-42", "--body", "Opened a fix."}
			},
			mine: comments,
			same: byID,
		},
		{
			name: "pr comment", kill: fakegithub.KindComment,
			setup: func(w *world) []string {
				w.push("their-branch")
				w.number = w.fake.SeedPR(owner, name, stranger, fixtures.SeedPR{Title: "Their change", Head: "their-branch"})
				return []string{"pr", "comment", strconv.Itoa(w.number), "--task", "ISSUE-42", "--body", "Reviewed: looks good."}
			},
			mine: comments,
			same: byID,
		},
		{
			name: "branch create", kill: fakegithub.KindRef,
			setup: func(w *world) []string {
				return []string{"branch", "create", "release-prep", "--task", "ISSUE-42", "--sha", w.main}
			},
			mine: func(w *world) []artifact {
				if sha, ok := w.fake.Branch(owner, name, "release-prep"); ok {
					return []artifact{{SHA: sha, Desc: sha}}
				}
				return nil
			},
			same: bySHA,
		},
		{
			name: "file put", kill: fakegithub.KindContent,
			setup: func(w *world) []string {
				return []string{"file", "put", "docs/CHANGELOG.md", "--task", "ISSUE-42", "--branch", "main", "--message", "changelog", "--content", fileContent}
			},
			mine: func(w *world) []artifact {
				b, ok := w.fake.FileContent(owner, name, "main", "docs/CHANGELOG.md")
				if !ok || string(b) != fileContent {
					return nil
				}
				head, _ := w.fake.Branch(owner, name, "main")
				// A second write of the same content would still move main.
				return []artifact{{SHA: ghcheck.BlobSHA(b), Desc: "main at " + head}}
			},
			same: bySHA,
		},
	}
}

// The real binary killed right after GitHub committed the write and before
// the answer reached ghonce; the same command run again finds it (one
// artifact, outcome found, no write), with the ledger kept or deleted; run
// once more it is skipped without asking GitHub. The reliability matrix
// runs this kill point for every kind (tests/reliability, "after GitHub
// commits, before the response"); here remain what it does not assert: a
// comment on a pull request, and a PR's labels mended by the rerun.
func TestCrashAtCommitThenRerunFindsIt(t *testing.T) {
	for _, c := range kindCases() {
		if c.name != "pr create" && c.name != "pr comment" {
			continue
		}
		for _, lose := range []bool{false, true} {
			c, lose := c, lose
			t.Run(fmt.Sprintf("%s/ledger deleted=%v", c.name, lose), func(t *testing.T) {
				t.Parallel()
				w := newWorld(t)
				args := c.setup(w)

				w.crash(c.kill, args...)
				made := c.mine(w)
				if len(made) != 1 {
					t.Fatalf("after the kill: %d artifacts of ours, want the 1 GitHub committed", len(made))
				}
				if !lose {
					st := w.status()
					if len(st) != 1 {
						t.Fatalf("ledger after the kill: %d entries, want 1", len(st))
					}
					for _, e := range st {
						if e.Status != "attempting" {
							t.Fatalf("ledger after the kill: entry %s, want attempting", e.Status)
						}
					}
				} else {
					w.deleteLedger()
				}

				writes, before := w.counts()
				r := w.ok(args...)
				if r.Outcome != "found" {
					t.Fatalf("rerun after the kill: outcome %q, want found (%+v)", r.Outcome, r)
				}
				after := c.mine(w)
				if len(after) != 1 || after[0].Desc != made[0].Desc {
					t.Fatalf("rerun after the kill: our artifacts %+v, want exactly the one made before %+v", after, made)
				}
				if !c.same(r, after[0]) {
					t.Fatalf("rerun reported %+v, which is not the artifact on GitHub %+v", r, after[0])
				}
				// The rerun creates nothing. It may only complete a PR's labels,
				// which the kill (before ghonce labelled it) left off.
				mended := false
				for _, q := range w.fake.Requests()[before:] {
					if q.Method == "GET" {
						continue
					}
					// Mending creates the key label (its colour and
					// description), then adds the labels.
					if c.kill == fakegithub.KindPull && q.Method == "POST" && (q.Path == fmt.Sprintf("/repos/%s/issues/%d/labels", repo, r.Number) || q.Path == fmt.Sprintf("/repos/%s/labels", repo)) {
						mended = true
						continue
					}
					t.Fatalf("rerun that found the artifact sent %s %s, want no write but mending a PR's labels", q.Method, q.Path)
				}
				if w2, _ := w.counts(); w2 != writes && !mended {
					t.Fatalf("rerun that found the artifact sent %d write requests, want 0", w2-writes)
				}
				if c.kill == fakegithub.KindPull {
					prs := w.fake.PullRequests(owner, name)
					if len(prs) != 1 || !slices.Contains(prs[0].Labels, "ghonce:"+r.Key) {
						t.Fatalf("PR after the rerun: %+v, want it labelled ghonce:%s (the label the kill left off)", prs, r.Key)
					}
				}

				_, reqs := w.counts()
				again := w.ok(args...)
				if again.Outcome != "skipped" || again.Key != r.Key || !c.same(again, after[0]) || again.PayloadChanged {
					t.Fatalf("run after success: %+v, want skipped with the same key and artifact, payload unchanged", again)
				}
				if _, r2 := w.counts(); r2 != reqs {
					t.Fatalf("skipped run sent %d requests to GitHub, want 0", r2-reqs)
				}
				if n := len(c.mine(w)); n != 1 {
					t.Fatalf("after three runs: %d artifacts of ours, want 1", n)
				}
			})
		}
	}
}

// A run that completes is skipped the next time, with no request at all.
func TestDoneIsSkippedWithoutAnyRequest(t *testing.T) {
	for _, c := range kindCases() {
		c := c
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			args := c.setup(w)
			first := w.ok(args...)
			if first.Outcome != "created" || len(c.mine(w)) != 1 || !c.same(first, c.mine(w)[0]) {
				t.Fatalf("first run: %+v, want created, naming the one artifact on GitHub (%+v)", first, c.mine(w))
			}
			_, reqs := w.counts()
			again := w.ok(args...)
			if again.Outcome != "skipped" || again.Key != first.Key || !c.same(again, c.mine(w)[0]) {
				t.Fatalf("second run: %+v, want skipped with the first run's key and artifact", again)
			}
			if _, r := w.counts(); r != reqs {
				t.Fatalf("skipped run sent %d requests to GitHub, want 0", r-reqs)
			}
		})
	}
}

// guarded is a shell script for `ghonce exec`: it appends a line with
// GHONCE_KEY to log, and when KILL_PARENT is set it then kills ghonce
// (its parent) with SIGKILL: the command ran, ghonce never recorded it.
// It kills ghonce, its supervisor's parent, from inside (the supervisor's
// name, "exe", has no space: the fourth field of its stat is its parent).
const guarded = `echo "ran $GHONCE_KEY" >> "$1"
if [ -n "$KILL_PARENT" ]; then read -r _ _ _ ghonce _ < /proc/$PPID/stat; kill -9 $ghonce; fi
`

// execWorld is a world with a guarded command, its log and a check
// script that exits 0 when the log shows the command ran for GHONCE_KEY.
type execWorld struct {
	*world
	log, script, check string
}

func newExecWorld(t *testing.T) *execWorld {
	w := newWorld(t)
	x := &execWorld{world: w, log: filepath.Join(w.dir, "sent.log"), script: filepath.Join(w.dir, "notify.sh")}
	if err := os.WriteFile(x.script, []byte(guarded), 0o700); err != nil {
		t.Fatal(err)
	}
	// Exit 0 and print the line when it ran, 1 when it did not.
	x.check = fmt.Sprintf(`grep "ran $GHONCE_KEY" '%s' || exit 1`, x.log)
	// The ledger must exist before the first exec: a ledger created by the
	// exec itself makes it unconfirmed (an earlier ledger may be lost).
	// Without a token: init records the token's login (one GET /user)
	// when it has one, and these tests count exec's requests from here.
	wantExit(t, w.exec(nil, []string{"GH_TOKEN=", "GITHUB_TOKEN="}, "init", "--ledger", w.ledger), 0, "ghonce init")
	return x
}

func (x *execWorld) args(check bool) []string {
	a := []string{"exec", "--task", "ISSUE-42", "--step", "notify"}
	if check {
		a = append(a, "--check", x.check)
	}
	return append(a, "--", "/bin/sh", x.script, x.log)
}

// runs is how many times the guarded command ran.
func (x *execWorld) runs() int {
	b, err := os.ReadFile(x.log)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		x.t.Fatal(err)
	}
	return strings.Count(string(b), "ran ")
}

// crash runs the guarded command and kills ghonce from inside it, after it
// appended its line.
func (x *execWorld) crash(check bool) {
	x.t.Helper()
	o := x.exec(nil, []string{"KILL_PARENT=1"}, withFlags(x.args(check), "--ledger", x.ledger)...)
	if o.Exit != -1 || x.runs() != 1 {
		x.t.Fatalf("exec killed by its command: exit %d (want -1: killed), command ran %d times (want 1)\nstderr: %s", o.Exit, x.runs(), o.Stderr)
	}
}

// exec that completes is skipped next time: neither the command nor the
// check runs again, and GitHub is never asked.
func TestExecDoneIsSkipped(t *testing.T) {
	t.Parallel()
	x := newExecWorld(t)
	first := x.ok(x.args(false)...)
	if first.Outcome != "created" || x.runs() != 1 {
		t.Fatalf("first run: %+v, command ran %d times; want created and 1", first, x.runs())
	}
	// A check that would fail loudly if it ran.
	args := []string{"exec", "--task", "ISSUE-42", "--step", "notify", "--check", "exit 7", "--", "/bin/sh", x.script, x.log}
	again := x.ok(args...)
	if again.Outcome != "skipped" || again.Key != first.Key || x.runs() != 1 {
		t.Fatalf("second run: %+v, command ran %d times; want skipped with the same key and 1", again, x.runs())
	}
	if _, reqs := x.counts(); reqs != 0 {
		t.Fatalf("exec sent %d requests to GitHub, want none", reqs)
	}
}

// A guarded command on a ledger the run itself creates cannot know its past:
// exit 3, nothing run. `ghonce init` makes the ledger ahead, idempotently,
// and then the command runs once.
func TestInitMakesTheLedgerAheadOfExec(t *testing.T) {
	t.Parallel()
	x := newExecWorld(t)
	fresh := filepath.Join(x.dir, "fresh", "ledger.db")
	o := x.exec(nil, nil, withFlags(x.args(false), "--ledger", fresh)...)
	wantExit(t, o, 3, "exec on a ledger it created")
	if x.runs() != 0 || !strings.Contains(o.Stderr, "ghonce init") {
		t.Fatalf("command ran %d times (want 0); stderr should point to ghonce init: %s", x.runs(), o.Stderr)
	}
	other := filepath.Join(x.dir, "other", "ledger.db")
	for i := 0; i < 2; i++ {
		o := x.exec(nil, nil, "init", "--ledger", other)
		wantExit(t, o, 0, "ghonce init")
		if strings.TrimSpace(o.Stdout) != other {
			t.Fatalf("init printed %q, want the ledger path %q", o.Stdout, other)
		}
	}
	wantExit(t, x.exec(nil, nil, withFlags(x.args(false), "--ledger", other)...), 0, "exec after init")
	if x.runs() != 1 {
		t.Fatalf("command ran %d times after init, want 1", x.runs())
	}
}

// reconcile runs no command and no check from the ledger: an exec an
// earlier attempt may have run (its start was marked) is left attempting
// and reported (exit 3), saying that the rerun of the same command settles
// it with its own --check; that rerun finds it, and the command never ran
// twice.
func TestReconcileExecSaysTheCheckFoundIt(t *testing.T) {
	t.Parallel()
	x := newExecWorld(t)
	x.crash(true)
	out := x.reconcile(3)
	if len(out.Settled) != 1 || out.Settled[0].To != "attempting" || !strings.Contains(out.Settled[0].Why, "rerun the same command") || !strings.Contains(out.Settled[0].Why, "--check") {
		t.Fatalf("reconcile of an exec that may have run: %+v, want it left attempting, pointing at the rerun and its --check", out.Settled)
	}
	if r := x.ok(x.args(true)...); r.Outcome != "found" {
		t.Fatalf("rerun with its check: %+v, want found", r)
	}
	if x.runs() != 1 {
		t.Fatalf("the command ran %d times, want 1", x.runs())
	}
}
