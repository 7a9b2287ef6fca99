package cli

import (
	"context"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/internal/procid"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/sqlite"
)

// An entry no run can settle (a guarded command without --check, killed
// mid-run) keeps its age through `reconcile` and through reruns that stop
// for a person: `status --stale` pages for it before and after, as the
// monitor and reconcile.yml expect (issue 40: reconcile reset the age and
// silenced the page).
func TestUnsettledEntryKeepsItsStalePage(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	run := w.runLater
	if o := run(0, "init"); o.code != 0 {
		t.Fatalf("init: %d %s", o.code, o.stderr)
	}
	cmd := []string{"exec", "--task", "T", "--step", "deploy", "--", "/bin/sh", "-c", "kill -9 $$"}
	if o := run(0, cmd...); o.code != failure.ExitUnconfirmed {
		t.Fatalf("exec: exit %d, want %d (left attempting): %s", o.code, failure.ExitUnconfirmed, o.stderr)
	}
	stale := func(when string, later time.Duration) {
		t.Helper()
		if o := run(later, "status", "--stale", "30m"); o.code != failure.ExitStale {
			t.Fatalf("%s: status --stale 30m exit %d, want %d (the entry has waited an hour for a person): %s%s", when, o.code, failure.ExitStale, o.stdout, o.stderr)
		}
	}
	stale("an hour later", time.Hour)
	for i, later := range []time.Duration{time.Hour, time.Hour + time.Minute} {
		if o := run(later, "reconcile"); o.code != failure.ExitUnconfirmed {
			t.Fatalf("reconcile %d: exit %d, want %d (no --check: it cannot settle): %s", i+1, o.code, failure.ExitUnconfirmed, o.stderr)
		}
		stale("after reconcile", later+time.Second)
	}
	if o := run(time.Hour+2*time.Minute, cmd...); o.code != failure.ExitUnconfirmed {
		t.Fatalf("rerun: exit %d, want %d (it stops for a person): %s", o.code, failure.ExitUnconfirmed, o.stderr)
	}
	stale("after a rerun that stopped for a person", time.Hour+3*time.Minute)
	// A person's decision settles it, and the page stops.
	var st struct{ Entries []struct{ Key string } }
	o := run(time.Hour+4*time.Minute, "status", "--json", "--state", "attempting")
	if err := json.Unmarshal([]byte(o.stdout), &st); err != nil || len(st.Entries) != 1 {
		t.Fatalf("status: exit %d, %s: %v", o.code, o.stdout, err)
	}
	if o := run(time.Hour+5*time.Minute, "resolve", st.Entries[0].Key, "--done"); o.code != 0 {
		t.Fatalf("resolve: exit %d: %s", o.code, o.stderr)
	}
	if o := run(time.Hour+6*time.Minute, "status", "--stale", "30m"); o.code != 0 {
		t.Fatalf("after resolve: status --stale 30m exit %d, want 0: %s", o.code, o.stderr)
	}
}

// status tells a holder it can prove dead (a process of this machine that
// is gone) from one that runs and from one on another machine, whose lease
// it can only wait out: the first is stuck at once, not "running" for up
// to its lease.
func TestStatusShowsADeadHolderAsDead(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	if o := w.run("", nil, "init"); o.code != 0 {
		t.Fatalf("init: %d %s", o.code, o.stderr)
	}
	dead := exec.Command("sleep", "60")
	if err := dead.Start(); err != nil {
		t.Fatal(err)
	}
	gone, err := procid.Of(dead.Process.Pid)
	if err != nil || !gone.Complete() {
		t.Skipf("this system does not name processes completely (%v): nothing can be proven dead", err)
	}
	_ = dead.Process.Kill()
	_ = dead.Wait()
	me := procid.Self()
	elsewhere := me
	elsewhere.Boot = "another-machine"
	l, err := sqlite.Open(context.Background(), w.ledger, sqlite.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for step, p := range map[string]ledger.Proc{"dead": gone, "alive": me, "elsewhere": elsewhere} {
		o := ledger.Owner{ID: "owner-" + step, Host: "host-" + step, PID: p.PID, Boot: p.Boot, PIDNS: p.PIDNS, Start: p.Start}
		if _, err := l.Claim(context.Background(), ledger.ClaimParams{Key: "gk1_" + strings.Repeat(step[:1], 32), Task: "T", Step: step, Kind: "exec", Owner: o, Lease: time.Hour}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()

	o := w.run("", nil, "status")
	for _, want := range []string{"stuck 0s (its process " + strconv.Itoa(gone.PID) + " on host-dead is dead)", "running (process " + strconv.Itoa(me.PID) + " on host-alive)", "held by process " + strconv.Itoa(me.PID) + " on host-elsewhere until"} {
		if !strings.Contains(o.stdout, want) {
			t.Errorf("status does not say %q:\n%s", want, o.stdout)
		}
	}
	if !strings.Contains(o.stdout, "T: 3 steps, 3 attempting; 1 stuck") {
		t.Errorf("the task's line does not count the dead holder's step as stuck:\n%s", o.stdout)
	}
	var st struct {
		Entries []struct {
			Step   string
			Holder struct{ State string }
		}
	}
	o = w.run("", nil, "status", "--json")
	if err := json.Unmarshal([]byte(o.stdout), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, o.stdout)
	}
	for _, e := range st.Entries {
		if want := map[string]string{"dead": "dead", "alive": "running", "elsewhere": "unknown"}[e.Step]; e.Holder.State != want {
			t.Errorf("status --json: %s's holder is %q, want %q", e.Step, e.Holder.State, want)
		}
	}
	if o := w.run("", nil, "status", "gk1_"+strings.Repeat("d", 32)); !strings.Contains(o.stdout, "dead (the next run takes it over at once)") {
		t.Errorf("status KEY of the dead holder's entry:\n%s", o.stdout)
	}
}
