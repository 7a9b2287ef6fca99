package offgithub_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/ghonce/ghonce/internal/procid"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/offgithub"
	"github.com/ghonce/ghonce/outcome"
)

// freePID returns a PID that names no process now: a child that ran and
// was reaped.
func freePID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("/bin/true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// "The holder is gone" must be proven: a holder whose PID is free here is
// taken over at once only when its identity names this machine's boot and
// this PID namespace. One of the same host name in another namespace (a
// container with host networking) or on another machine, and one recorded
// without the identity (an older ghonce), keep the key until their lease
// ends, though kill(pid, 0) fails here.
func TestHolderGoneOnlyWhenItsIdentityProvesIt(t *testing.T) {
	if !procid.Self().Complete() {
		t.Skip("no process identity on this system")
	}
	host, _ := os.Hostname()
	me := procid.Self()
	pid := freePID(t)
	for _, tc := range []struct {
		name     string
		owner    ledger.Owner
		takeOver bool
	}{
		{"this machine and namespace, PID free", ledger.Owner{Boot: me.Boot, PIDNS: me.PIDNS, Start: 12345}, true},
		{"this machine and namespace, PID reused by another process", ledger.Owner{Boot: me.Boot, PIDNS: me.PIDNS, Start: me.Start + 1}, true},
		{"same host name, another PID namespace", ledger.Owner{Boot: me.Boot, PIDNS: me.PIDNS + 1, Start: 12345}, false},
		{"same host name, another machine", ledger.Owner{Boot: "0b0e7c1d-another-machine", PIDNS: me.PIDNS, Start: 12345}, false},
		{"recorded without an identity", ledger.Owner{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newExecWorld(t)
			x.engine()
			_, l := x.engine()
			a := execAction(x.notify(offgithub.OnUnconfirmedRetry))
			o := tc.owner
			o.ID, o.Host, o.PID = "holder", host, pid
			if tc.name == "this machine and namespace, PID reused by another process" {
				o.PID = os.Getpid() // alive, but started at another time than recorded
			}
			if _, err := l.Claim(context.Background(), ledger.ClaimParams{Key: keyOf(t, a), Task: a.Task, Step: a.Step, Kind: "exec", Owner: o, Lease: time.Hour}); err != nil {
				t.Fatal(err)
			}
			e, _ := x.engine(func(c *offgithub.Config) { c.Wait = 100 * time.Millisecond })
			r, err := do(context.Background(), e, a)
			var busy *outcome.InProgressError
			switch {
			case tc.takeOver && err != nil:
				t.Fatalf("a holder proven gone was not taken over: %v", err)
			case tc.takeOver && (r.Outcome != outcome.Created || x.sends() != 1):
				t.Fatalf("taken over: %s, %d sends; want created, 1", r.Outcome, x.sends())
			case !tc.takeOver && !errors.As(err, &busy):
				t.Fatalf("a holder not proven gone was taken over: result %+v, err %v; want in progress until its lease ends", r, err)
			}
			if !tc.takeOver && x.sends() != 0 {
				t.Fatalf("the command ran %d times while a live holder may run it", x.sends())
			}
		})
	}
}
