package main_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/ghonce/ghonce/ledger/postgres/pgtest"
)

const pgPassword = "pg-SECRET-7f3a"

// withPassword returns the location with a password added; trust auth
// ignores it, and it must never be shown.
func withPassword(t *testing.T, loc string) string {
	u, err := url.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(u.User.Username(), pgPassword)
	return u.String()
}

func noPassword(t *testing.T, what, out string) {
	t.Helper()
	if strings.Contains(out, pgPassword) {
		t.Errorf("%s prints the Postgres password:\n%s", what, out)
	}
}

// The CLI on a Postgres ledger: the one flag is the only change. init
// creates it and prints the URL without the password; an action is created
// once and skipped on a rerun; status and --json never show the password.
func TestPostgresLedgerFromTheCLI(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	loc := withPassword(t, pgtest.Schema(t))

	o := w.exec(nil, nil, "init", "--ledger", loc)
	wantExit(t, o, 0, "init on Postgres")
	noPassword(t, "init", o.Stdout+o.Stderr)
	if !strings.HasPrefix(strings.TrimSpace(o.Stdout), "postgres://") || !strings.Contains(o.Stderr, "created") {
		t.Fatalf("init: stdout %q, stderr %q; want the URL and \"created\"", o.Stdout, o.Stderr)
	}
	if o = w.exec(nil, nil, "init", "--ledger", loc); !strings.Contains(o.Stderr, "exists") {
		t.Fatalf("second init: %q, want \"exists\"", o.Stderr)
	}

	args := []string{"issue", "create", "--task", "PG-1", "--title", "Flaky test", "--body", "b", "--json", "--repo", repo, "--ledger", loc}
	o = w.exec(nil, nil, args...)
	wantExit(t, o, 0, "issue create")
	var r1, r2 result
	oneJSON(t, o.Stdout, &r1)
	// The same step from "another machine" (its own HOME), with the ledger
	// from GHONCE_LEDGER: skipped.
	o = w.exec(nil, []string{"HOME=" + t.TempDir(), "GHONCE_LEDGER=" + loc}, args[:len(args)-2]...)
	wantExit(t, o, 0, "issue create again")
	oneJSON(t, o.Stdout, &r2)
	if r1.Outcome != "created" || r2.Outcome != "skipped" || r1.Number != r2.Number {
		t.Fatalf("first %+v, second %+v; want created then skipped", r1, r2)
	}
	if n := len(w.fake.Issues(owner, name)); n != 1 {
		t.Fatalf("%d issues, want 1", n)
	}
	// A person sends it back (the issue was deleted, say); the next run
	// finds the issue on GitHub and records it again: nothing new is made.
	o = w.exec(nil, nil, "resolve", r1.Key, "--retry", "--force", "--note", "re-check", "--ledger", loc)
	wantExit(t, o, 0, "resolve --retry")
	o = w.exec(nil, nil, args...)
	wantExit(t, o, 0, "issue create after resolve --retry")
	var r3 result
	oneJSON(t, o.Stdout, &r3)
	if r3.Outcome != "found" || r3.Number != r1.Number || len(w.fake.Issues(owner, name)) != 1 {
		t.Fatalf("after resolve --retry: %+v, %d issues; want found, the same issue", r3, len(w.fake.Issues(owner, name)))
	}
	o = w.exec(nil, nil, "reconcile", "--ledger", loc)
	wantExit(t, o, 0, "reconcile")
	for _, a := range [][]string{{"status", "--ledger", loc}, {"status", "--json", "--ledger", loc}, {"status", r1.Key, "--json", "--ledger", loc}} {
		o = w.exec(nil, nil, a...)
		wantExit(t, o, 0, strings.Join(a, " "))
		noPassword(t, strings.Join(a, " "), o.Stdout+o.Stderr)
		if !strings.Contains(o.Stdout, r1.Key) && !strings.Contains(o.Stdout, "done") {
			t.Errorf("%s does not show the entry:\n%s", strings.Join(a, " "), o.Stdout)
		}
	}
}

// A Postgres ledger that cannot be reached: exit 1, one line saying what
// to do, no password, nothing asked of GitHub.
func TestPostgresUnreachableFromTheCLI(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	u, _ := url.Parse(withPassword(t, pgtest.DSN(t)))
	u.Host = "127.0.0.1:1"
	_, before := w.counts()
	o := w.exec(nil, nil, "issue", "create", "--task", "PG-2", "--title", "x", "--body", "b", "--ledger", u.String(), "--repo", repo)
	wantExit(t, o, 1, "issue create on an unreachable ledger")
	noPassword(t, "unreachable", o.Stdout+o.Stderr)
	if !strings.Contains(o.Stderr, "cannot reach the Postgres server") {
		t.Errorf("stderr does not say the server cannot be reached:\n%s", o.Stderr)
	}
	if _, after := w.counts(); after != before {
		t.Errorf("%d GitHub requests were sent with no ledger", after-before)
	}
	// An unsupported scheme is a usage error.
	o = w.exec(nil, nil, "status", "--ledger", "mysql://u:"+pgPassword+"@h/db")
	wantExit(t, o, 2, "status on mysql://")
	noPassword(t, "mysql://", o.Stdout+o.Stderr)
}
