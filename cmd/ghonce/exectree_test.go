package main_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// slowChild is a guarded command that does its work in a child, as a
// script calling curl in a subshell does: the child makes the effect
// three seconds later (longer than the 2-second wait an older ghonce
// gave a crashed attempt before looking). It records the child's PID and its own parent's (the
// supervisor, or ghonce itself where there is none) in $2.
const slowChild = `(sleep 3; echo "ran $GHONCE_KEY" >> "$1") &
echo "$! $PPID" >> "$2"
wait
`

// A guarded command dies whole with ghonce: ghonce stopped by SIGKILL,
// SIGTERM or SIGINT while a child of the command is still at work, the
// rerun's --check must not run before that child is gone, and the effect
// happens once. With the supervisor killed too (kill -9 of both), the
// child lives on in the command's process group: the rerun waits for it,
// and finds its effect.
func TestExecTreeDiesWithGhonce(t *testing.T) {
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
		both bool // kill the supervisor as well
	}{
		{"SIGKILL", syscall.SIGKILL, false},
		{"SIGTERM", syscall.SIGTERM, false},
		{"SIGINT", syscall.SIGINT, false},
		{"SIGKILL-of-ghonce-and-its-supervisor", syscall.SIGKILL, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			x := newExecWorld(t)
			script := filepath.Join(x.dir, "slow-child.sh")
			pids := filepath.Join(x.dir, "pids")
			if err := os.WriteFile(script, []byte(slowChild), 0o700); err != nil {
				t.Fatal(err)
			}
			args := []string{"exec", "--task", "ISSUE-42", "--step", "notify", "--ledger", x.ledger, "--check", x.check, "--", "/bin/sh", script, x.log, pids}

			// The first run: stopped once its command's child is at work.
			cmd := exec.Command(bin, args...)
			cmd.Env = x.env
			// A file, not a pipe: Wait must not wait for a pipe that the
			// first run's orphans, if any, hold open.
			stderr, err := os.Create(filepath.Join(x.dir, "first.stderr"))
			if err != nil {
				t.Fatal(err)
			}
			defer stderr.Close()
			cmd.Stdout, cmd.Stderr = stderr, stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			child, parent := waitForPIDs(t, pids, 1)
			if tc.both && parent != cmd.Process.Pid {
				if err := syscall.Kill(parent, syscall.SIGKILL); err != nil {
					t.Fatalf("kill the supervisor: %v", err)
				}
			}
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			first, err := os.ReadFile(stderr.Name())
			if err != nil {
				t.Fatal(err)
			}
			recordOutput(t, args, "", string(first))

			// The rerun, at once.
			r := x.ok(x.args(true)...)
			// Whatever the first run's child was going to do, it has done
			// (or it is dead): wait until it is gone, then count.
			waitGone(t, child)
			if n := x.runs(); n != 1 {
				t.Fatalf("the effect happened %d times, want 1 (rerun: %s, first run's stderr: %s)", n, r.Outcome, first)
			}
			if tc.both && r.Outcome != "found" {
				t.Errorf("rerun after the supervisor was killed too: %s, want found (it waits for the command's process group, whose child made the effect)", r.Outcome)
			}
		})
	}
}

// waitForPIDs waits until the file has n lines of "child parent" and
// returns the last one.
func waitForPIDs(t *testing.T, file string, n int) (child, parent int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(file)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(b) > 0 && len(lines) >= n {
			var c, p int
			if _, err := fmt.Sscan(lines[n-1], &c, &p); err != nil {
				t.Fatalf("pids file: %q: %v", lines[n-1], err)
			}
			return c, p
		}
		if time.Now().After(deadline) {
			t.Fatalf("the command never started its child (%s has %q)", file, b)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitGone waits until no process has the PID (it is not our child, so
// it cannot be waited for).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return
		}
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X') {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("process %d still runs", pid)
		case <-time.After(5 * time.Millisecond):
		}
	}
}
