package cli

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The verbs that look at or settle the ledger never create one: a missing
// ledger is exit 1 with the path and how to make one, and nothing appears
// on disk (a monitor with a typo in GHONCE_LEDGER must alarm).
func TestLedgerVerbsNeverCreateALedger(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	dir := filepath.Join(t.TempDir(), "state")
	missing := filepath.Join(dir, "typo.db")
	env := map[string]string{"GHONCE_LEDGER": missing}
	key := w.run("", env, "key", "--task", "T", "--step", "s", "--kind", "exec")
	if key.code != 0 {
		t.Fatalf("key: exit %d: %s", key.code, key.stderr)
	}
	for _, args := range [][]string{
		{"status"}, {"status", "--stale", "1h"}, {"status", "--json"}, {"reconcile"},
		{"resolve", strings.TrimSpace(key.stdout), "--retry"},
	} {
		o := w.run("", env, args...)
		want := "no ledger at " + missing + "; `ghonce init` creates one"
		if o.code != ExitError || !strings.Contains(o.stderr, want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", args, o.code, o.stderr, ExitError, want)
		}
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the ledger verbs created %s (stat: %v)", dir, err)
	}
}

// After a lost ledger, a status (say, from a cron monitor) used to create
// a fresh ledger that the next run then trusted, so `exec` without --check
// ran the command again. Now status creates nothing, and the run that does
// create the ledger cannot vouch for the past: exit 3, the command not run.
func TestStatusAfterALostLedgerKeepsTheProtection(t *testing.T) {
	t.Parallel()
	w := newCLIWorld(t)
	if o := w.run("", nil, "status"); o.code != ExitError {
		t.Fatalf("status on a lost ledger: exit %d, want %d", o.code, ExitError)
	}
	o := w.run("", nil, "exec", "--task", "T", "--step", "notify", "--", "echo", "RAN")
	if o.code != ExitUnconfirmed || strings.Contains(o.stdout, "RAN") {
		t.Fatalf("exec on a ledger this run created: exit %d, stdout %q; want exit %d and the command not run", o.code, o.stdout, ExitUnconfirmed)
	}

	// A ledger made ahead by init is known to be new: the command runs.
	w2 := newCLIWorld(t)
	if o := w2.run("", nil, "init"); o.code != 0 {
		t.Fatalf("init: exit %d: %s", o.code, o.stderr)
	}
	o = w2.run("", nil, "exec", "--task", "T", "--step", "notify", "--", "echo", "RAN")
	if o.code != 0 || !strings.Contains(o.stdout, "RAN") {
		t.Fatalf("exec on an init ledger: exit %d, stdout %q, stderr %q", o.code, o.stdout, o.stderr)
	}
}
