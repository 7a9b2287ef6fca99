//go:build !linux

package reconcile

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/internal/procid"
	"github.com/ghonce/ghonce/ledger"
)

// run runs the command directly: where there is no /proc and no
// parent-death signal, a guarded command may outlive a killed ghonce (see
// docs/design/limits.md).
func (x Exec) run(ctx context.Context, env *Env, key string) error {
	if err := env.mark(ctx, ledger.Proc{}); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, x.Argv[0], x.Argv[1:]...)
	cmd.Env = x.childEnv(key)
	cmd.Stdout, cmd.Stderr = env.Stdout, env.Stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return &effect.CreateError{Class: effect.ClassNotSent, Err: fmt.Errorf("run %s: %w", x.Argv[0], err)}
	}
	return exitError(x.Argv[0], err)
}

func groupGone(ledger.Proc) procid.State { return procid.Unknown }

func supervisorNote(p ledger.Proc) string { return "process " + strconv.Itoa(p.PID) }
