package offgithub_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/offgithub"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/tests/testworld"
)

// execWorld is the shared test world (its ledger; a command needs no
// GitHub) and a file that counts how often a command ran.
type execWorld struct {
	*testworld.World
	t    *testing.T
	sent string
}

func newExecWorld(t *testing.T) *execWorld {
	w := testworld.New(t)
	return &execWorld{World: w, t: t, sent: filepath.Join(w.Dir, "sent")}
}

// engine opens the ledger (as a restarted process would) and returns an
// engine on it with no GitHub client.
func (x *execWorld) engine(mod ...func(*offgithub.Config)) (*offgithub.Engine, ledger.Ledger) {
	x.t.Helper()
	l := x.OpenLedger()
	cfg := offgithub.Config{Ledger: l, LedgerNew: l.Created, Wait: time.Second, Settle: -1}
	for _, m := range mod {
		m(&cfg)
	}
	return offgithub.New(cfg), l
}

// notify appends GHONCE_KEY to the sent file: a side effect ghonce cannot see.
func (x *execWorld) notify(extra ...string) offgithub.Exec {
	return offgithub.Exec{Argv: []string{"/bin/sh", "-c", `echo "$GHONCE_KEY" >> "$1"`, "notify", x.sent}, OnUnconfirmed: strings.Join(extra, "")}
}

func (x *execWorld) sends() int {
	b, err := os.ReadFile(x.sent)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		x.t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

func execAction(spec offgithub.Exec) offgithub.Action {
	return offgithub.Action{Task: "weekly-report", Step: "notify", Spec: spec}
}

// crashAfterRunning leaves the entry as a process killed right after the
// command ran would: attempting, held by a dead process of this host, its
// start marked by a supervisor that is gone too.
func (x *execWorld) crashAfterRunning(l ledger.Ledger, a offgithub.Action) {
	x.t.Helper()
	me := reconcile.NewOwner()
	if _, err := l.Claim(context.Background(), ledger.ClaimParams{Key: keyOf(x.t, a), Task: a.Task, Step: a.Step, Kind: "exec",
		Owner: ledger.Owner{ID: "dead", Host: me.Host, PID: 999999}, Lease: time.Hour}); err != nil {
		x.t.Fatal(err)
	}
	sup := ledger.Proc{Boot: me.Boot, PIDNS: me.PIDNS, PID: 999999, Start: 1}
	if err := l.MarkSending(context.Background(), ledger.SendingParams{Key: keyOf(x.t, a), Fence: 1, Lease: time.Hour, Proc: sup}); err != nil {
		x.t.Fatal(err)
	}
	if err := os.WriteFile(x.sent, []byte(keyOf(x.t, a)+"\n"), 0o600); err != nil {
		x.t.Fatal(err)
	}
}

var deadPID = func(c *offgithub.Config) { c.Gone = func(p ledger.Proc) bool { return p.PID == 999999 } }

func TestExecRunsOnceAndSkipsAfterwards(t *testing.T) {
	x := newExecWorld(t)
	e, _ := x.engine()
	// A ledger that this process created cannot vouch for the past.
	_, err := do(context.Background(), e, execAction(x.notify()))
	var uc *outcome.UnconfirmedError
	if !errors.As(err, &uc) || !strings.Contains(err.Error(), "ghonce resolve") {
		t.Fatalf("first exec on a new ledger: err = %v, want unconfirmed with a resolve hint", err)
	}
	if x.sends() != 0 {
		t.Fatal("ran the command although it could not tell whether it ran before")
	}
	// A person says it never ran.
	_, l := x.engine()
	if _, err := l.Resolve(context.Background(), ledger.ResolveParams{Key: keyOf(t, execAction(x.notify())), Status: ledger.Failed, Who: "test", Note: "first use"}); err != nil {
		t.Fatal(err)
	}
	e, _ = x.engine()
	if r := mustDo(t, e, execAction(x.notify())); r.Outcome != outcome.Created || x.sends() != 1 {
		t.Fatalf("after resolve --retry: %s, %d sends; want created, 1", r.Outcome, x.sends())
	}
	if r := mustDo(t, e, execAction(x.notify())); r.Outcome != outcome.Skipped || x.sends() != 1 {
		t.Fatalf("rerun: %s, %d sends; want skipped, 1", r.Outcome, x.sends())
	}
}

func TestExecOnExistingLedgerRunsAtOnce(t *testing.T) {
	x := newExecWorld(t)
	x.engine() // the ledger exists before the agent's run
	e, _ := x.engine()
	if r := mustDo(t, e, execAction(x.notify())); r.Outcome != outcome.Created || x.sends() != 1 {
		t.Fatalf("%s, %d sends; want created, 1", r.Outcome, x.sends())
	}
}

func TestExecUnconfirmedPolicies(t *testing.T) {
	t.Run("fail: never run twice, say how to settle", func(t *testing.T) {
		x := newExecWorld(t)
		x.engine()
		_, l := x.engine()
		x.crashAfterRunning(l, execAction(x.notify()))
		e, _ := x.engine(deadPID)
		_, err := do(context.Background(), e, execAction(x.notify()))
		var uc *outcome.UnconfirmedError
		if !errors.As(err, &uc) || !strings.Contains(err.Error(), "--done") {
			t.Fatalf("err = %v, want unconfirmed naming resolve --done", err)
		}
		if x.sends() != 1 {
			t.Fatalf("%d sends, want 1", x.sends())
		}
	})
	t.Run("retry: the command is safe to repeat", func(t *testing.T) {
		x := newExecWorld(t)
		x.engine()
		_, l := x.engine()
		x.crashAfterRunning(l, execAction(x.notify(offgithub.OnUnconfirmedRetry)))
		e, _ := x.engine(deadPID)
		if r := mustDo(t, e, execAction(x.notify(offgithub.OnUnconfirmedRetry))); r.Outcome != outcome.Created || x.sends() != 2 {
			t.Fatalf("%s, %d sends; want created and a second send", r.Outcome, x.sends())
		}
	})
	t.Run("check: the user's check_exists settles it", func(t *testing.T) {
		x := newExecWorld(t)
		spec := x.notify()
		spec.Check = `grep -qx "$GHONCE_KEY" "` + x.sent + `" && echo "msg-$GHONCE_KEY"`
		_, l := x.engine()
		x.crashAfterRunning(l, execAction(spec))
		e, _ := x.engine(deadPID)
		r := mustDo(t, e, execAction(spec))
		if r.Outcome != outcome.Found || r.Ref != "msg-"+r.Key || x.sends() != 1 {
			t.Fatalf("%+v, %d sends; want found with the check's output as ref, 1 send", r, x.sends())
		}
	})
}

// Seed scenario D: the key handed to a downstream service that dedupes on
// it closes the window even when the ledger cannot.
func TestSeedD_KeyPassedToADedupingService(t *testing.T) {
	x := newExecWorld(t)
	dedupe := offgithub.Exec{Argv: []string{"/bin/sh", "-c", `grep -qx "$GHONCE_KEY" "$1" 2>/dev/null || echo "$GHONCE_KEY" >> "$1"`, "mailer", x.sent}, OnUnconfirmed: offgithub.OnUnconfirmedRetry}
	x.engine()
	_, l := x.engine()
	x.crashAfterRunning(l, execAction(dedupe))
	e, _ := x.engine(deadPID)
	if r := mustDo(t, e, execAction(dedupe)); r.Outcome != outcome.Created {
		t.Fatalf("outcome %s, want created (the command ran again)", r.Outcome)
	}
	if x.sends() != 1 {
		t.Fatalf("%d sends, want 1: the service saw the same key twice", x.sends())
	}
}

func TestExecFailingCommandIsRetriedNotRecordedDone(t *testing.T) {
	x := newExecWorld(t)
	x.engine()
	e, l := x.engine()
	a := execAction(offgithub.Exec{Argv: []string{"/bin/sh", "-c", "exit 7"}})
	if _, err := do(context.Background(), e, a); err == nil || !strings.Contains(err.Error(), "exit status 7") {
		t.Fatalf("err = %v, want the command's exit status", err)
	}
	ent, err := l.Get(context.Background(), keyOf(x.t, a))
	if err != nil || ent.Status != ledger.Failed {
		t.Fatalf("entry %+v, %v; want failed", ent, err)
	}
}

// Nothing stuck: a --check that cannot run on the first attempt (a missing
// file, a command not found) ends the entry failed, the command not run,
// with words that say to fix the check; a rerun with a working check runs
// the command.
func TestExecCheckThatCannotRunFailsTheFirstAttempt(t *testing.T) {
	x := newExecWorld(t)
	x.engine()
	e, l := x.engine()
	for _, check := range []string{"/nonexistent/check.sh", "no-such-command-ghonce"} {
		spec := x.notify()
		spec.Check = check
		a := execAction(spec)
		_, err := do(context.Background(), e, a)
		var uc *outcome.UnconfirmedError
		if err == nil || errors.As(err, &uc) || !strings.Contains(err.Error(), "fix --check") || !strings.Contains(err.Error(), "did not run") {
			t.Fatalf("check %q: err = %v; want a plain error saying to fix --check and that the command did not run", check, err)
		}
		ent, err := l.Get(context.Background(), keyOf(t, a))
		if err != nil || ent.Status != ledger.Failed {
			t.Fatalf("check %q: entry %+v, %v; want failed, not left attempting", check, ent, err)
		}
		if x.sends() != 0 {
			t.Fatalf("check %q: the command ran", check)
		}
	}
	spec := x.notify()
	spec.Check = `grep -qx "$GHONCE_KEY" "` + x.sent + `" 2>/dev/null || exit 1`
	if r := mustDo(t, e, execAction(spec)); r.Outcome != outcome.Created || x.sends() != 1 {
		t.Fatalf("with a working check: %s, %d sends; want created, 1", r.Outcome, x.sends())
	}
}

func mustDo(t *testing.T, e *offgithub.Engine, a offgithub.Action) *outcome.Result {
	t.Helper()
	r, err := do(context.Background(), e, a)
	if err != nil {
		t.Fatalf("Do: %v", err)
	}
	return r
}

// do runs a through the engine's front door, as every front end does:
// Prepare, then Do.
func do(ctx context.Context, e *offgithub.Engine, a offgithub.Action) (*outcome.Result, error) {
	p, err := offgithub.Prepare(a)
	if err != nil {
		return nil, err
	}
	return e.Do(ctx, p)
}

// keyOf is the key of a, which must be valid.
func keyOf(t testing.TB, a offgithub.Action) string {
	t.Helper()
	p, err := offgithub.Prepare(a)
	if err != nil {
		t.Fatalf("prepare: %v", err)
	}
	return p.Key()
}
