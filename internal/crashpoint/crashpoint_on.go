//go:build ghonce_crashpoints

// Package crashpoint, built with the ghonce_crashpoints tag (tests and the
// reliability matrix only): Hit(name) kills the process with SIGKILL when
// GHONCE_CRASH_AT equals name, so no deferred code or ledger write runs.
package crashpoint

import (
	"os"
	"syscall"
)

var at = os.Getenv("GHONCE_CRASH_AT")

// Hit kills the process if GHONCE_CRASH_AT names this point.
func Hit(name string) {
	if at != "" && at == name {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // SIGKILL cannot be caught; never return
	}
}
