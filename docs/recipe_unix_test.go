//go:build unix

package docs_test

import (
	"os/exec"
	"syscall"
)

// ownGroup puts a recipe's shell in a process group of its own, which a
// cancelled context kills whole: a server a recipe starts in the
// background dies with it, not only the shell.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// killGroup kills what a finished recipe left running in its group: a
// server started with & by a recipe that failed before the line that
// stops it.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
