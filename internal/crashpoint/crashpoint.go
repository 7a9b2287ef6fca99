//go:build !ghonce_crashpoints

// Package crashpoint marks the places where a crash is most interesting, so
// the reliability matrix can kill a ghonce process exactly there. In the
// shipped binary (built without the ghonce_crashpoints tag) Hit does nothing
// and compiles away.
package crashpoint

import "time"

// Hit is a named crash point. Without the build tag it does nothing.
func Hit(string) {}

// Lease is the claim lease the matrix sets for a row that watches a lease
// end. Without the build tag it is 0: the engine's default.
func Lease() time.Duration { return 0 }
