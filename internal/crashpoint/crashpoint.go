//go:build !ghonce_crashpoints

// Package crashpoint marks the places where a crash is most interesting, so
// the reliability matrix can kill a ghonce process exactly there. In the
// shipped binary (built without the ghonce_crashpoints tag) Hit does nothing
// and compiles away.
package crashpoint

// Hit is a named crash point. Without the build tag it does nothing.
func Hit(string) {}
