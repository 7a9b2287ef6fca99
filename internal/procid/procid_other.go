//go:build !linux

package procid

import (
	"errors"
	"os"

	"github.com/ghonce/ghonce/ledger"
)

// Self returns the running process's PID alone: without /proc nothing
// names it across machines, so it is never proven gone.
func Self() ledger.Proc { return ledger.Proc{PID: os.Getpid()} }

// Of returns pid alone (see Self).
func Of(pid int) (ledger.Proc, error) {
	return ledger.Proc{PID: pid}, errors.New("process identity: not supported on this system")
}

// Check proves nothing on this system.
func Check(ledger.Proc) State { return Unknown }

// GroupAlive is true: nothing can be proven.
func GroupAlive(int) bool { return true }

// Members finds nothing on this system.
func Members(int, int) []int { return nil }
