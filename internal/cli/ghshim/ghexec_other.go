//go:build !unix

package ghshim

import (
	"errors"
	"os"
	"os/exec"
)

// execGh runs the real gh at path with argv's arguments, the process's
// environment and standard streams, and returns its exit code (this
// platform cannot replace a process).
func execGh(path string, argv []string) (int, error) {
	cmd := exec.Command(path, argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), nil
	}
	if err != nil {
		return 1, err
	}
	return 0, nil
}
