//go:build !linux

package supervise

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"syscall"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/internal/procid"
	"github.com/ghonce/ghonce/ledger"
)

// Run runs the command directly: where there is no /proc and no
// parent-death signal, a command may outlive a killed program (see
// docs/design/limits.md). started is called with the zero Proc before the
// command starts; its error is returned as is. Errors are classified as on
// Linux.
func Run(ctx context.Context, c Command, started func(ctx context.Context, sup ledger.Proc) error) error {
	if err := started(ctx, ledger.Proc{}); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Env = c.Env
	cmd.Stdout, cmd.Stderr = c.Stdout, c.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return &effect.CreateError{Class: effect.ClassNotSent, Err: fmt.Errorf("run %s: %w", c.Argv[0], err)}
	}
	return exitError(c.Argv[0], err)
}

// exitError classifies the end of a command (err from its Wait).
func exitError(name string, err error) error {
	if err == nil {
		return nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return &effect.CreateError{Class: effect.ClassMaybe, Err: fmt.Errorf("run %s: killed by %v", name, ws.Signal())}
		}
		return &effect.CreateError{Class: effect.ClassRefused, Err: fmt.Errorf("run %s: exit status %d", name, ee.ExitCode())}
	}
	return &effect.CreateError{Class: effect.ClassMaybe, Err: fmt.Errorf("run %s: %w", name, err)}
}

// Gone cannot tell here: there is no supervisor and no /proc.
func Gone(ledger.Proc) procid.State { return procid.Unknown }

// Describe names the process of an attempt for a message.
func Describe(p ledger.Proc) string { return "process " + strconv.Itoa(p.PID) }
