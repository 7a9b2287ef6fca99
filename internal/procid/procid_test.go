//go:build linux

package procid

import (
	"os/exec"
	"testing"
)

func TestCheck(t *testing.T) {
	self := Self()
	if !self.Complete() {
		t.Fatalf("Self() = %+v: incomplete on Linux", self)
	}
	if got := Check(self); got != Alive {
		t.Errorf("Check(self) = %v, want alive", got)
	}
	cmd := exec.Command("/bin/true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	// The child ran and was reaped: its PID is free (or reused by a
	// process with another start time).
	gone := self
	gone.PID = cmd.Process.Pid
	if got := Check(gone); got != Gone {
		t.Errorf("Check(exited child) = %v, want gone", got)
	}
	reused := self
	reused.Start++
	if got := Check(reused); got != Gone {
		t.Errorf("Check(self with another start time) = %v, want gone: the PID names another process", got)
	}
	other := self
	other.Boot = "another-machine"
	if got := Check(other); got != Unknown {
		t.Errorf("Check(another boot id) = %v, want unknown", got)
	}
	ns := self
	ns.PIDNS++
	if got := Check(ns); got != Unknown {
		t.Errorf("Check(another PID namespace) = %v, want unknown", got)
	}
	old := self
	old.Boot, old.PIDNS, old.Start = "", 0, 0
	if got := Check(old); got != Unknown {
		t.Errorf("Check(PID alone) = %v, want unknown: a PID alone proves nothing", got)
	}
}
