package cli

import (
	"testing"
	"time"

	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/ledger/postgres/pgtest"
)

// One clock per question: on a Postgres ledger, `status --stale` ages the
// entries on the server's clock, which dated them, so a client hours
// behind or ahead of its server neither misses a dead entry nor raises a
// false alarm.
func TestStaleAgesOnTheLedgersClock(t *testing.T) {
	loc := pgtest.Schema(t)
	w := newCLIWorld(t)
	w.env["GHONCE_LEDGER"] = loc
	run := w.runLater
	if o := run(0, "init"); o.code != 0 {
		t.Fatalf("init: %d %s", o.code, o.stderr)
	}
	// An entry left attempting a moment ago (a command killed by a
	// signal: maybe it did its work): not stale for 15 minutes, whatever
	// the client's clock says.
	if o := run(0, "exec", "--task", "T", "--step", "s", "--", "/bin/sh", "-c", "kill -9 $$"); o.code != failure.ExitUnconfirmed {
		t.Fatalf("exec: exit %d, want %d (left attempting): %s", o.code, failure.ExitUnconfirmed, o.stderr)
	}
	for _, skew := range []time.Duration{0, 3 * time.Hour, -3 * time.Hour} {
		if o := run(skew, "status", "--stale", "15m"); o.code != 0 {
			t.Errorf("client clock %s off the server's: status --stale 15m exit %d, want 0 (the entry is seconds old): %s", skew, o.code, o.stderr)
		}
		if o := run(skew, "status", "--stale", "1ns"); o.code != failure.ExitStale {
			t.Errorf("client clock %s off the server's: status --stale 1ns exit %d, want %d (the entry is older than that): %s", skew, o.code, failure.ExitStale, o.stderr)
		}
	}
}
