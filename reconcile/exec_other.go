//go:build !linux

package reconcile

import "os/exec"

// dieWithParent does nothing where there is no parent-death signal: a
// guarded command may outlive a killed ghonce (see README, Limits).
func dieWithParent(*exec.Cmd) {}
