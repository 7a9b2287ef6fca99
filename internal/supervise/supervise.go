// Package supervise runs a command so that it and every process it starts
// die with the program that started it, and tells whether the processes of
// an earlier run are gone: the process-tree supervision of a guarded
// command (`ghonce exec`), whose rerun must not look before they are.
//
// On Linux the command runs under a supervisor, a second copy of the
// program (see supervise_linux.go); elsewhere it runs directly and may
// outlive a killed program (docs/design/limits.md).
package supervise

import "io"

// Command is a command to run: Argv[0] is looked up in PATH.
type Command struct {
	Argv []string
	// Env is the command's whole environment.
	Env            []string
	Stdout, Stderr io.Writer
}
