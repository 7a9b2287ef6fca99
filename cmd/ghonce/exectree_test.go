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

// escaping is a guarded command whose direct child exits 0 at once after
// handing the work to a descendant that left its session (setsid) through
// a double fork: the descendant makes the effect only when $3 exists (the
// rerun), else it waits until it is killed. It records its PID in $2.
const escaping = `setsid /bin/sh -c '
  ( if [ -e "$3" ]; then echo "ran $GHONCE_KEY" >> "$1"; else sh -c "echo \$\$ 0 >> \"$2\"; exec sleep 600"; fi ) &
' sh "$1" "$2" "$3" &
wait
exit 0
`

// ghonce stopped (SIGTERM, SIGINT) while a descendant of the command is
// still at work, after the command's direct child exited 0: the
// supervisor stops the descendant, so whether the effect happened is
// unknown. The first run must say unconfirmed (exit 3), never created; a
// rerun without --check refuses to guess; one with --check, which answers
// "not there", runs the command, and the effect happens once.
func TestExecStoppedWhileADescendantWorksIsUnconfirmed(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			x := newExecWorld(t)
			script := filepath.Join(x.dir, "escaping.sh")
			pids, again := filepath.Join(x.dir, "pids"), filepath.Join(x.dir, "rerun")
			if err := os.WriteFile(script, []byte(escaping), 0o700); err != nil {
				t.Fatal(err)
			}
			args := func(check bool) []string {
				a := []string{"exec", "--task", "ISSUE-42", "--step", "notify", "--ledger", x.ledger}
				if check {
					a = append(a, "--check", x.check)
				}
				return append(a, "--json", "--", "/bin/sh", script, x.log, pids, again)
			}
			cmd := exec.Command(bin, args(true)...)
			cmd.Env = x.env
			out, err := os.Create(filepath.Join(x.dir, "first.out"))
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			descendant, _ := waitForPIDs(t, pids, 1)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			first, _ := os.ReadFile(out.Name())
			recordOutput(t, args(true), "", string(first))
			waitGone(t, descendant)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 3 || strings.Contains(string(first), `"created"`) {
				t.Fatalf("ghonce stopped while a descendant worked: %v, output %s; want exit 3 (unconfirmed), never created", err, first)
			}
			if !strings.Contains(string(first), "still running") {
				t.Errorf("the first run does not say its command's processes were still running: %s", first)
			}
			if err := os.WriteFile(again, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			o := x.run(args(false)...)
			wantExit(t, o, 3, "rerun without --check")
			if strings.Contains(o.Stdout, `"skipped"`) || !strings.Contains(o.Stderr, "ghonce resolve") || x.runs() != 0 {
				t.Fatalf("rerun without --check: %s %s (ran %d times); want unconfirmed, saying how to settle it", o.Stdout, o.Stderr, x.runs())
			}
			r := x.ok(args(true)...)
			if r.Outcome != "created" || x.runs() != 1 {
				t.Fatalf("rerun with --check: %s, the effect happened %d times; want created and once", r.Outcome, x.runs())
			}
		})
	}
}

// A --check that cannot answer (exit 2) is not "absent": the command does
// not run. On an entry no attempt ever ran, nothing is unknown: the entry
// is failed (not left attempting forever), the run says the command did
// not run and what to do, and a rerun whose check answers runs it once.
// On an entry whose earlier attempt did run, it stays unconfirmed and says
// how to settle it: fix --check (this run's check answers, even when the
// earlier attempt's could not) or `ghonce resolve`.
func TestExecCheckThatCannotAnswer(t *testing.T) {
	t.Parallel()
	x := newExecWorld(t)
	noAnswer := []string{"exec", "--task", "ISSUE-42", "--step", "notify", "--ledger", x.ledger, "--check", "exit 2", "--", "/bin/sh", x.script, x.log}
	for i := range 2 {
		o := x.run(noAnswer...)
		wantExit(t, o, 1, "exec whose check exits 2")
		if x.runs() != 0 || !strings.Contains(o.Stderr, "the command did not run") || !strings.Contains(o.Stderr, "exits 0") {
			t.Fatalf("run %d with a check that cannot answer: ran %d times, stderr %s; want not run, saying what to fix", i+1, x.runs(), o.Stderr)
		}
	}
	st := x.exec(nil, nil, "status", "--ledger", x.ledger)
	if !strings.Contains(st.Stdout, "failed") || strings.Contains(st.Stdout, "attempting") {
		t.Fatalf("status after a check that cannot answer: %s; want failed, not attempting", st.Stdout)
	}
	if r := x.ok(x.args(true)...); r.Outcome != "created" || x.runs() != 1 {
		t.Fatalf("rerun with a check that answers: %s, ran %d times; want created and once", r.Outcome, x.runs())
	}

	// An earlier attempt ran the command and was killed: unknown, until a
	// check answers or a person settles it.
	y := newExecWorld(t)
	y.crash(false)
	noAnswer = []string{"exec", "--task", "ISSUE-42", "--step", "notify", "--ledger", y.ledger, "--check", "exit 2", "--", "/bin/sh", y.script, y.log}
	o := y.run(noAnswer...)
	wantExit(t, o, 3, "exec whose check exits 2 after a crash")
	if !strings.Contains(o.Stderr, "ghonce resolve") || !strings.Contains(o.Stderr, "exits 0") {
		t.Fatalf("unconfirmed without a way out: %s", o.Stderr)
	}
	o = y.run(noAnswer...)
	wantExit(t, o, 3, "again")
	if r := y.ok(y.args(true)...); r.Outcome != "found" || y.runs() != 1 {
		t.Fatalf("rerun with a check that answers: %s, ran %d times; want found and once", r.Outcome, y.runs())
	}
}
