package reconcile

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes cmd receive SIGKILL when the thread that starts it
// (locked by the caller until cmd ends) dies, with ghonce or not.
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
