//go:build ghonce_crashpoints

// Package crashpoint, built with the ghonce_crashpoints tag (tests and the
// reliability matrix only): Hit(name) kills the process with SIGKILL when
// GHONCE_CRASH_AT equals name, so no deferred code or ledger write runs;
// Lease returns GHONCE_CRASH_LEASE, so the matrix can watch a claim's lease
// end in seconds rather than the default two minutes.
package crashpoint

import (
	"os"
	"syscall"
	"time"
)

var at = os.Getenv("GHONCE_CRASH_AT")

// Hit kills the process if GHONCE_CRASH_AT names this point.
func Hit(name string) {
	if at != "" && at == name {
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // SIGKILL cannot be caught; never return
	}
}

// Lease is GHONCE_CRASH_LEASE (a Go duration), or 0 (the engine's
// default) when it is unset or not a positive duration.
func Lease() time.Duration {
	d, err := time.ParseDuration(os.Getenv("GHONCE_CRASH_LEASE"))
	if err != nil || d <= 0 {
		return 0
	}
	return d
}
