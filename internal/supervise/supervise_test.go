package supervise_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/internal/supervise"
	"github.com/ghonce/ghonce/ledger"
)

// run runs the shell script under a supervisor, in a fresh directory that
// it returns, with nothing in the way of its start.
func run(t *testing.T, script string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	c := supervise.Command{Argv: []string{"/bin/sh", "-c", "cd " + dir + " && { " + script + "; }"}, Env: os.Environ()}
	return dir, supervise.Run(context.Background(), c, func(context.Context, ledger.Proc) error { return nil })
}

func TestRunClassifiesTheCommandsEnd(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		want         effect.Class // 0: success
	}{
		{"exit 0", "true", 0},
		{"exit 3 is its word that it did not succeed", "exit 3", effect.ClassRefused},
		{"death by a signal may have done anything", "kill -9 $$", effect.ClassMaybe},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, tc.script)
			if tc.want == 0 {
				if err != nil {
					t.Fatalf("Run: %v; want success", err)
				}
				return
			}
			var ce *effect.CreateError
			if !errors.As(err, &ce) || ce.Class != tc.want {
				t.Fatalf("Run: %v; want a create error of class %s", err, tc.want)
			}
		})
	}
}

func TestRunOfACommandThatCannotStartSentNothing(t *testing.T) {
	c := supervise.Command{Argv: []string{"ghonce-no-such-command"}, Env: os.Environ()}
	err := supervise.Run(context.Background(), c, func(context.Context, ledger.Proc) error { return nil })
	var ce *effect.CreateError
	if !errors.As(err, &ce) || ce.Class != effect.ClassNotSent {
		t.Fatalf("Run: %v; want a create error of class %s", err, effect.ClassNotSent)
	}
}

func TestRunReturnsWhenEveryProcessHasEnded(t *testing.T) {
	// The command ends at once; a process it left behind writes later.
	dir, err := run(t, "(sleep 0.3; echo late > late) & echo early > early")
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, f := range []string{"early", "late"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("after Run: %v; want every process it started to have ended", err)
		}
	}
}

func TestRunStartsNothingWhenStartedFails(t *testing.T) {
	dir := t.TempDir()
	refused := errors.New("the ledger is down")
	var sup ledger.Proc
	c := supervise.Command{Argv: []string{"/bin/sh", "-c", "echo ran > " + filepath.Join(dir, "ran")}, Env: os.Environ()}
	err := supervise.Run(context.Background(), c, func(_ context.Context, p ledger.Proc) error { sup = p; return refused })
	if !errors.Is(err, refused) {
		t.Fatalf("Run: %v; want started's error as is", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the command ran (%v) although started failed", err)
	}
	checkGone(t, sup)
}
