package main_test

import (
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/fakegithub"
)

// reconcileOut is `ghonce reconcile --json`.
type reconcileOut struct {
	Settled []struct {
		Key    string `json:"key"`
		Kind   string `json:"kind"`
		Task   string `json:"task"`
		From   string `json:"from"`
		To     string `json:"to"`
		Number int    `json:"number"`
		URL    string `json:"url"`
		Why    string `json:"why"`
	} `json:"settled"`
	Unsettled int `json:"unsettled"`
}

func (w *world) reconcile(wantCode int) reconcileOut {
	w.t.Helper()
	o := w.exec(nil, nil, "reconcile", "--json", "--ledger", w.ledger)
	wantExit(w.t, o, wantCode, "ghonce reconcile")
	var out reconcileOut
	oneJSON(w.t, o.Stdout, &out)
	return out
}

// Crashes in six tasks of different kinds, and one whose create never
// reached GitHub: reconcile settles every entry of a kind on GitHub (found
// → done, absent → failed) without a single write request; the guarded
// command, which it may not run a check for (what to run is a run's own
// input, never the ledger's), it leaves attempting (exit 3), and the rerun
// of that command settles it with its own --check. The next runs create
// what was absent and skip what was found.
func TestReconcileSettlesCrashedTasksWithoutWriting(t *testing.T) {
	t.Parallel()
	x := newExecWorld(t)
	w := x.world
	w.push("fix-1")
	issue := w.fake.SeedIssue(owner, name, stranger, fixtures.SeedIssue{Title: "Bug"})

	w.crash(fakegithub.KindPull, "pr", "create", "--task", "T-PR", "--base", "main", "--head", "fix-1", "--title", "Fix", "--body", "b")
	w.crash(fakegithub.KindIssue, "issue", "create", "--task", "T-ISSUE", "--title", "Follow-up", "--body", "b")
	w.crash(fakegithub.KindComment, "issue", "comment", strconv.Itoa(issue), "--task", "T-COMMENT", "--body", "On it.")
	w.crash(fakegithub.KindRef, "branch", "create", "release", "--task", "T-BRANCH", "--sha", w.main)
	w.crash(fakegithub.KindContent, "file", "put", "NOTES.md", "--task", "T-FILE", "--branch", "main", "-m", "notes", "--content", "n\n")
	x.crash(true)
	// The create is sent and the connection drops before GitHub stores
	// anything: ghonce cannot know, so the entry stays attempting.
	w.fake.Inject(fixtures.Fault{Match: fixtures.MatchMethodPath("POST", "/repos/"+repo+"/issues"), Kind: fixtures.DropBeforeCommit})
	absentArgs := []string{"issue", "create", "--task", "T-ABSENT", "--title", "Never made", "--body", "b"}
	wantExit(t, w.run(absentArgs...), 3, "issue create whose request was dropped")

	st := w.status()
	if len(st) != 7 {
		t.Fatalf("ledger: %d entries, want 7", len(st))
	}
	for _, e := range st {
		if e.Status != "attempting" {
			t.Fatalf("entry of %s is %s before reconcile, want attempting", e.Task, e.Status)
		}
	}
	wantExit(t, w.exec(nil, nil, "status", "--stale", "1ns", "--ledger", w.ledger), 5, "status --stale 1ns with attempting entries")

	writes, _ := w.counts()
	out := w.reconcile(3)
	if now, _ := w.counts(); now != writes {
		t.Fatalf("reconcile sent %d write requests, want 0", now-writes)
	}
	if out.Unsettled != 1 || len(out.Settled) != 7 {
		t.Fatalf("reconcile: %+v, want 7 entries, the exec's unsettled", out)
	}
	wantTo := map[string]string{"T-PR": "done", "T-ISSUE": "done", "T-COMMENT": "done", "T-BRANCH": "done", "T-FILE": "done", "ISSUE-42": "attempting", "T-ABSENT": "failed"}
	for _, s := range out.Settled {
		if s.From != "attempting" || s.To != wantTo[s.Task] {
			t.Errorf("reconcile settled %s (%s) %s → %s, want attempting → %s (%s)", s.Task, s.Kind, s.From, s.To, wantTo[s.Task], s.Why)
		}
	}
	prs := w.ourPRs()
	for _, e := range w.status() {
		if e.Status != wantTo[e.Task] {
			t.Errorf("after reconcile the entry of %s is %s, want %s", e.Task, e.Status, wantTo[e.Task])
		}
		if e.Task == "T-PR" && (len(prs) != 1 || e.Number != prs[0].Number) {
			t.Errorf("the PR entry records #%d, GitHub has %+v", e.Number, prs)
		}
	}
	if r := x.ok(x.args(true)...); r.Outcome != "found" || x.runs() != 1 {
		t.Fatalf("the exec's rerun with its check: %+v, command ran %d times; want found, once", r, x.runs())
	}
	wantExit(t, w.exec(nil, nil, "status", "--stale", "1ns", "--ledger", w.ledger), 0, "status --stale 1ns with nothing attempting")

	// Reconcile again: nothing left.
	if again := w.reconcile(0); len(again.Settled) != 0 {
		t.Fatalf("second reconcile: %+v, want nothing to do", again)
	}
	// The next runs: the absent one is created, the found ones skipped.
	if r := w.ok(absentArgs...); r.Outcome != "created" {
		t.Fatalf("run after reconcile marked it failed: %+v, want created", r)
	}
	if r := w.ok("pr", "create", "--task", "T-PR", "--base", "main", "--head", "fix-1", "--title", "Fix", "--body", "b"); r.Outcome != "skipped" || r.Number != prs[0].Number {
		t.Fatalf("PR run after reconcile: %+v, want skipped #%d", r, prs[0].Number)
	}
	if n := len(w.fake.Issues(owner, name)); n != 3 { // the seeded bug, T-ISSUE, T-ABSENT
		t.Fatalf("%d issues, want 3", n)
	}
}

// With GitHub unable to answer, reconcile leaves the entry attempting and
// exits 3; status --stale reports it (exit 5) until GitHub answers again.
func TestReconcileWhenGitHubCannotAnswer(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.push("fix-1")
	prArgs := []string{"pr", "create", "--task", "T-PR", "--base", "main", "--head", "fix-1", "--title", "Fix", "--body", "b"}
	w.crash(fakegithub.KindPull, prArgs...)
	w.fake.Inject(fixtures.Fault{Match: fixtures.MatchMethod("GET"), Kind: fixtures.Status502BeforeCommit, Times: 10000})

	writes, _ := w.counts()
	out := w.reconcile(3)
	if now, _ := w.counts(); now != writes {
		t.Fatalf("reconcile sent %d write requests, want 0", now-writes)
	}
	if out.Unsettled != 1 || len(out.Settled) != 1 || out.Settled[0].To != "attempting" || out.Settled[0].Why == "" {
		t.Fatalf("reconcile with GitHub answering 502: %+v, want the entry unsettled, attempting, with a reason", out)
	}
	for _, e := range w.status() {
		if e.Status != "attempting" {
			t.Fatalf("entry is %s, want attempting", e.Status)
		}
	}
	o := w.exec(nil, nil, "status", "--stale", "1ns", "--ledger", w.ledger)
	wantExit(t, o, 5, "status --stale 1ns with an entry left attempting")
	if !strings.Contains(o.Stderr, "reconcile") {
		t.Errorf("status --stale does not say what to do: %s", o.Stderr)
	}
	wantExit(t, w.exec(nil, nil, "status", "--stale", "1h", "--ledger", w.ledger), 0, "status --stale 1h with a fresh attempting entry")
	wantExit(t, w.exec(nil, nil, "status", "--ledger", w.ledger), 0, "status without --stale")

	w.fake.ClearFaults()
	if out := w.reconcile(0); out.Unsettled != 0 || len(out.Settled) != 1 || out.Settled[0].To != "done" {
		t.Fatalf("reconcile once GitHub answers: %+v, want done", out)
	}
	if n := len(w.ourPRs()); n != 1 {
		t.Fatalf("%d PRs, want 1", n)
	}
}

// A run GitHub refused before anything was sent (401) leaves the entry
// failed; a rerun that cannot reach GitHub at all sends nothing either, so
// the entry stays failed and the run exits with the network error (1),
// not exit 3: no outcome is unknown, and status --stale does not page for
// work that never left the machine. Once GitHub answers, the next run
// creates the issue, once.
func TestRerunOfANotSentEntryWithGitHubUnreachable(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	args := []string{"issue", "create", "--task", "T-OFFLINE", "--title", "Offline", "--body", "b", "--ledger", w.ledger, "--repo", repo}
	key := w.key("T-OFFLINE", "issue-create", "issue", "")

	o := w.exec(nil, []string{"GH_TOKEN=ghp_GHONCEtestSECRET_unknown_5e1d"}, args...)
	if o.Exit == 0 || o.Exit == 3 {
		t.Fatalf("issue create with a token GitHub rejects: exit %d, want a configuration error\nstderr: %s", o.Exit, o.Stderr)
	}
	if st := w.status()[key].Status; st != "failed" {
		t.Fatalf("after a 401: entry %s, want failed", st)
	}

	// A loopback port nothing listens on: the connection is refused.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()
	writes, _ := w.counts()
	o = w.exec(nil, []string{"GITHUB_API_URL=" + dead}, args...)
	wantExit(t, o, 1, "rerun of a failed entry with GitHub unreachable")
	if !strings.Contains(o.Stderr, "cannot reach GitHub") || !strings.Contains(o.Stderr, "nothing was sent") || strings.Contains(o.Stderr, "stays \"attempting\"") {
		t.Errorf("rerun with GitHub unreachable says:\n%s\nwant the network error, nothing sent, and no attempting entry", o.Stderr)
	}
	if now, _ := w.counts(); now != writes {
		t.Fatalf("%d writes reached the fake, want 0", now-writes)
	}
	if st := w.status()[key].Status; st != "failed" {
		t.Fatalf("after a rerun with GitHub unreachable: entry %s, want failed (nothing was ever sent)", st)
	}
	wantExit(t, w.exec(nil, nil, "status", "--stale", "1ns", "--ledger", w.ledger), 0, "status --stale 1ns with only a failed entry")

	r := w.ok("issue", "create", "--task", "T-OFFLINE", "--title", "Offline", "--body", "b")
	if r.Outcome != "created" {
		t.Fatalf("run once GitHub answers: %+v, want created", r)
	}
	n := 0
	for _, is := range w.fake.Issues(owner, name) {
		if is.Title == "Offline" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d issues titled Offline, want 1", n)
	}
}

// An exec left unconfirmed (no --check) is settled by a person: --done
// makes the next run skip it; --retry makes the next run perform it. The
// decision, its author and note are in the history status shows.
func TestResolveUnconfirmedExec(t *testing.T) {
	for _, how := range []string{"--done", "--retry"} {
		how := how
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			x := newExecWorld(t)
			x.crash(false)
			wantExit(t, x.run(x.args(false)...), 3, "exec rerun without --check")
			if x.runs() != 1 {
				t.Fatalf("command ran %d times, want 1", x.runs())
			}
			st := x.status()
			if len(st) != 1 {
				t.Fatalf("%d entries, want 1", len(st))
			}
			var key string
			for k := range st {
				key = k
			}
			note := "checked the Slack channel by hand"
			o := x.exec(nil, nil, "resolve", key, how, "--note", note, "--ledger", x.ledger)
			wantExit(t, o, 0, "ghonce resolve "+how)

			want := map[string]string{"--done": "done", "--retry": "failed"}[how]
			e := x.status(key)[key]
			if e.Status != want || e.Outcome != "resolved" {
				t.Fatalf("after resolve %s: %+v, want %s, outcome resolved", how, e, want)
			}
			last := e.History[len(e.History)-1]
			if last.From != "attempting" || last.To != want || last.Why != note || !strings.HasPrefix(last.Owner, "person:") {
				t.Fatalf("history after resolve %s: last %+v, want attempting → %s by a person, why %q", how, last, want, note)
			}
			// The table shows it too.
			if o := x.exec(nil, nil, "status", key, "--ledger", x.ledger); o.Exit != 0 || !strings.Contains(o.Stdout, note) {
				t.Fatalf("status %s: exit %d, does not show the note:\n%s", key, o.Exit, o.Stdout)
			}

			r := x.ok(x.args(false)...)
			switch how {
			case "--done":
				if r.Outcome != "skipped" || x.runs() != 1 {
					t.Fatalf("run after resolve --done: %+v, command ran %d times; want skipped, 1", r, x.runs())
				}
			case "--retry":
				if r.Outcome != "created" || x.runs() != 2 {
					t.Fatalf("run after resolve --retry: %+v, command ran %d times; want created, 2", r, x.runs())
				}
				if again := x.ok(x.args(false)...); again.Outcome != "skipped" || x.runs() != 2 {
					t.Fatalf("run after that: %+v, command ran %d times; want skipped, 2", again, x.runs())
				}
			}
		})
	}
}
