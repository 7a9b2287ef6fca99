//go:build unix

package ghshim

import (
	"os"
	"syscall"
)

// execGh replaces this process with the real gh at path, with argv and
// the process's environment: gh then owns the standard streams, signals
// and the exit code, as if it had been run directly. It returns only on
// failure.
func execGh(path string, argv []string) (int, error) {
	return 1, syscall.Exec(path, argv, os.Environ())
}
