package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"
)

// An entry no run can settle (a guarded command without --check, killed
// mid-run) keeps its age through `reconcile` and through reruns that stop
// for a person: `status --stale` pages for it before and after, as the
// monitor and reconcile.yml expect (issue 40: reconcile reset the age and
// silenced the page).
func TestUnsettledEntryKeepsItsStalePage(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	run := func(later time.Duration, args ...string) cliRun {
		var out, errb bytes.Buffer
		sys := IO{
			In: strings.NewReader(""), Out: &out, Err: &errb,
			Getenv: func(k string) string { return w.env[k] }, Now: func() time.Time { return time.Now().Add(later) }, Executable: os.Executable,
		}
		return cliRun{code: Main(context.Background(), args, sys), stdout: out.String(), stderr: errb.String()}
	}
	if o := run(0, "init"); o.code != 0 {
		t.Fatalf("init: %d %s", o.code, o.stderr)
	}
	cmd := []string{"exec", "--task", "T", "--step", "deploy", "--", "/bin/sh", "-c", "kill -9 $$"}
	if o := run(0, cmd...); o.code != ExitUnconfirmed {
		t.Fatalf("exec: exit %d, want %d (left attempting): %s", o.code, ExitUnconfirmed, o.stderr)
	}
	stale := func(when string, later time.Duration) {
		t.Helper()
		if o := run(later, "status", "--stale", "30m"); o.code != ExitStale {
			t.Fatalf("%s: status --stale 30m exit %d, want %d (the entry has waited an hour for a person): %s%s", when, o.code, ExitStale, o.stdout, o.stderr)
		}
	}
	stale("an hour later", time.Hour)
	for i, later := range []time.Duration{time.Hour, time.Hour + time.Minute} {
		if o := run(later, "reconcile"); o.code != ExitUnconfirmed {
			t.Fatalf("reconcile %d: exit %d, want %d (no --check: it cannot settle): %s", i+1, o.code, ExitUnconfirmed, o.stderr)
		}
		stale("after reconcile", later+time.Second)
	}
	if o := run(time.Hour+2*time.Minute, cmd...); o.code != ExitUnconfirmed {
		t.Fatalf("rerun: exit %d, want %d (it stops for a person): %s", o.code, ExitUnconfirmed, o.stderr)
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
