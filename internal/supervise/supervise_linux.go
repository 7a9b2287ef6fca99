package supervise

// How a command dies whole with ghonce on Linux.
//
// A rerun takes an exec entry over once its holder is gone, and its --check
// cannot see an effect that a process of the earlier attempt makes later:
// a command that works in a child (`sh -c 'sleep 1; curl …' &`, a
// pipeline, a script calling curl) must not outlive the attempt, and the
// rerun must not look before the earlier attempt's processes are gone.
// ghonce itself cannot see to that when it dies: SIGKILL runs no cleanup
// code, and a parent-death signal reaches only the direct child. So the
// command runs under a supervisor, a second copy of this program
// (/proc/self/exe, started with GHONCE_EXEC_SUPERVISOR=1, which the
// package's init turns into supervise), that:
//
//   - leads a process group of its own, which the command and everything
//     it starts join (unless they leave it with setsid or setpgid);
//   - is a child subreaper (PR_SET_CHILD_SUBREAPER), so every orphaned
//     descendant, in the group or not, becomes its child;
//   - holds the read end of a pipe whose only write end is ghonce's: when
//     ghonce dies, however it dies, the kernel closes it, the supervisor
//     reads end-of-file and kills every process of its group and every
//     child it has, until it has none, then exits;
//   - starts the command only after ghonce has recorded the supervisor's
//     identity in the ledger (MarkSending), forced: a rerun that takes the
//     entry over waits until the supervisor is gone and its process group
//     is empty before it runs --check or the command;
//   - reports the command's end only when every process it started has
//     ended: the attempt is over when its processes are.
//
// The alternatives were weighed: a parent-death signal on the command alone
// (what ghonce did before) misses grandchildren; a subreaper in ghonce
// itself dies with ghonce; a cgroup with cgroup.kill contains everything,
// but needs a delegated, writable cgroup v2 subtree, which an unprivileged
// user, most CI runners and most containers do not have, and must still be
// killed by someone once ghonce is dead. The supervisor needs nothing but
// /proc. What it cannot contain: a descendant that leaves the process group
// and whose parent lives on (it is not yet the supervisor's child), and
// everything when the supervisor itself is killed with SIGKILL at the same
// moment as ghonce (kill -9 of ghonce's group): then the command's
// direct child still dies (parent-death signal), and a rerun still waits
// for the process group to empty, but an escaped descendant is not waited
// for. A rerun on another machine or in another PID namespace cannot prove
// anything about the processes: the entry stays unconfirmed there and
// --on-unconfirmed decides.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/internal/procid"
	"github.com/ghonce/ghonce/ledger"
)

// supervisorEnv, set to 1, makes this program a guarded command's
// supervisor instead of itself (see init): any program that links this
// package can be one.
const supervisorEnv = "GHONCE_EXEC_SUPERVISOR"

// The supervisor's descriptors: 3 reads the life pipe (one byte "go", then
// end-of-file when ghonce is gone), 4 writes status lines: "started" or
// "not started: WHY", then, when every process has ended, "exited N" or
// "signaled N" for the command, or "stopped N" when ghonce asked it to stop
// while N of the command's processes (its own or any descendant's) were
// still running: they were stopped, so whatever they were doing may or may
// not have happened, whatever the command's exit status says.
const (
	lifeFD   = 3
	statusFD = 4
)

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER (linux/prctl.h), which
// package syscall does not name.
const prSetChildSubreaper = 36

// exitNotStarted is the supervisor's exit status when the command did not
// start; its status line says why.
const exitNotStarted = 125

// termGrace is how long the supervisor lets a command it was asked to stop
// (SIGTERM, SIGINT, SIGHUP) end on its own before it kills what is left.
const termGrace = 5 * time.Second

func init() {
	if os.Getenv(supervisorEnv) == "1" {
		os.Exit(supervise(os.Args[1:]))
	}
}

// Run runs c under a supervisor and returns when every process the
// command started has ended. started is called with the supervisor's
// identity once it runs and before the command starts (a guarded command
// records it in the ledger, forced, so that a taker waits for the tree to
// be gone); its error is returned as is, and the command never starts.
//
// Exit 0 is success; a non-zero exit is an *effect.CreateError of class
// ClassRefused (the command's own word that it did not succeed); a
// command killed by a signal, or stopped because ctx was cancelled, is
// ClassMaybe; a command that did not start is ClassNotSent.
func Run(ctx context.Context, c Command, started func(ctx context.Context, sup ledger.Proc) error) error {
	name := c.Argv[0]
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return &effect.CreateError{Class: effect.ClassNotSent, Err: fmt.Errorf("run %s: %w", name, err)}
	}
	defer lifeW.Close()
	statR, statW, err := os.Pipe()
	if err != nil {
		lifeR.Close()
		return &effect.CreateError{Class: effect.ClassNotSent, Err: fmt.Errorf("run %s: %w", name, err)}
	}
	defer statR.Close()
	cmd := exec.Command("/proc/self/exe", c.Argv...)
	cmd.Env = append(c.Env[:len(c.Env):len(c.Env)], supervisorEnv+"=1")
	cmd.Stdout, cmd.Stderr = c.Stdout, c.Stderr
	cmd.ExtraFiles = []*os.File{lifeR, statW}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	lifeR.Close()
	statW.Close()
	if err != nil {
		return &effect.CreateError{Class: effect.ClassNotSent, Err: fmt.Errorf("run %s: start its supervisor: %w", name, err)}
	}
	sup, _ := procid.Of(cmd.Process.Pid)
	if err := started(ctx, sup); err != nil {
		// The supervisor reads end-of-file instead of "go": nothing ran.
		lifeW.Close()
		_ = cmd.Wait()
		return err
	}
	if _, err := lifeW.Write([]byte{1}); err != nil {
		_ = cmd.Wait()
		return &effect.CreateError{Class: effect.ClassMaybe, Err: fmt.Errorf("run %s: the supervisor went away: %w", name, err)}
	}
	st := bufio.NewReader(statR)
	line, _ := st.ReadString('\n')
	// A cancelled run (ghonce was asked to stop) asks the supervisor to stop
	// the command; the supervisor kills what is left after termGrace.
	stop := context.AfterFunc(ctx, func() { _ = cmd.Process.Signal(syscall.SIGTERM) })
	defer stop()
	end, _ := st.ReadString('\n')
	err = cmd.Wait()
	if msg, ok := strings.CutPrefix(line, "not started: "); ok {
		return &effect.CreateError{Class: effect.ClassNotSent, Err: fmt.Errorf("run %s: %s", name, strings.TrimSpace(msg))}
	}
	if line != "started\n" {
		return &effect.CreateError{Class: effect.ClassMaybe, Err: fmt.Errorf("run %s: its supervisor ended without saying whether the command started: %v", name, err)}
	}
	var n int
	switch {
	case end == "exited 0\n":
		return nil
	case scan(end, "exited %d\n", &n):
		return &effect.CreateError{Class: effect.ClassRefused, Err: fmt.Errorf("run %s: exit status %d", name, n)}
	case scan(end, "stopped %d\n", &n):
		return &effect.CreateError{Class: effect.ClassMaybe, Err: fmt.Errorf("run %s: ghonce was asked to stop while %d of the command's processes were still running, and stopped them: whether its effect happened is unknown", name, n)}
	case scan(end, "signaled %d\n", &n):
		return &effect.CreateError{Class: effect.ClassMaybe, Err: fmt.Errorf("run %s: killed by %v", name, syscall.Signal(n))}
	}
	return &effect.CreateError{Class: effect.ClassMaybe, Err: fmt.Errorf("run %s: its supervisor was stopped before the command's processes ended (%v)", name, err)}
}

// scan reports whether s is exactly format with one integer.
func scan(s, format string, n *int) bool {
	_, err := fmt.Sscanf(s, format, n)
	return err == nil
}

// supervise is the supervisor's main: argv is the command. It returns the
// command's exit status; a command killed by a signal makes the supervisor
// die of the same signal.
func supervise(argv []string) int {
	runtime.LockOSThread() // the command's parent-death signal follows this thread
	syscall.CloseOnExec(lifeFD)
	syscall.CloseOnExec(statusFD)
	life, status := os.NewFile(lifeFD, "life"), os.NewFile(statusFD, "status")
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		fmt.Fprintf(status, "not started: cannot become a subreaper: %v\n", e)
		return exitNotStarted
	}
	var b [1]byte
	if n, _ := life.Read(b[:]); n != 1 {
		return exitNotStarted // ghonce is gone before the command was recorded: do nothing
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	child, err := startCommand(argv)
	if err != nil {
		fmt.Fprintf(status, "not started: %v\n", err)
		return exitNotStarted
	}
	fmt.Fprint(status, "started\n")

	gone := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, life); close(gone) }()
	reaped := make(chan reap)
	go reapAll(reaped)

	var (
		ws      syscall.WaitStatus
		ended   bool
		stopped int              // processes still running when ghonce asked to stop
		killing <-chan time.Time // ticks while the supervisor kills everything
		grace   <-chan time.Time
	)
	killAll := func() {
		if killing == nil {
			t := time.NewTicker(20 * time.Millisecond)
			killing = t.C
		}
		signalAll(syscall.SIGKILL)
	}
	for {
		select {
		case r, ok := <-reaped:
			if !ok {
				switch {
				case !ended:
				case stopped > 0:
					fmt.Fprintf(status, "stopped %d\n", stopped)
				case ws.Signaled():
					fmt.Fprintf(status, "signaled %d\n", int(ws.Signal()))
				default:
					fmt.Fprintf(status, "exited %d\n", ws.ExitStatus())
				}
				return 0
			}
			if r.pid == child {
				ws, ended = r.ws, true
			}
		case <-gone:
			gone = nil
			killAll()
		case s := <-sigs:
			stopped = max(stopped, signalAll(s.(syscall.Signal)))
			if grace == nil {
				grace = time.After(termGrace)
			}
		case <-grace:
			killAll()
		case <-killing:
			signalAll(syscall.SIGKILL)
		}
	}
}

// startCommand starts argv in the supervisor's process group, with a
// parent-death signal that kills it should the supervisor itself be killed.
func startCommand(argv []string) (int, error) {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		return 0, err
	}
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer devnull.Close()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, supervisorEnv+"=") {
			env = append(env, kv)
		}
	}
	p, err := os.StartProcess(path, argv, &os.ProcAttr{
		Env:   env,
		Files: []*os.File{devnull, os.Stdout, os.Stderr},
		Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	if err != nil {
		return 0, err
	}
	pid := p.Pid
	_ = p.Release()
	return pid, nil
}

type reap struct {
	pid int
	ws  syscall.WaitStatus
}

// reapAll reaps the supervisor's children, its own and the orphans it
// adopts as a subreaper, until it has none; then it closes out.
func reapAll(out chan<- reap) {
	defer close(out)
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil:
			return // ECHILD: every process is gone
		}
		out <- reap{pid, ws}
	}
}

// signalAll sends sig to every process of the supervisor's group and to
// every child it has (orphans that left the group become its children),
// and returns how many it sent it to.
func signalAll(sig syscall.Signal) int {
	self, n := os.Getpid(), 0
	for _, pid := range procid.Members(self, self) {
		if pid != self && syscall.Kill(pid, sig) == nil {
			n++
		}
	}
	return n
}

// Gone reports whether the processes of a supervised attempt are gone:
// the supervisor sup (proved gone) and every member of its process group.
func Gone(sup ledger.Proc) procid.State {
	st := procid.Check(sup)
	if st != procid.Gone {
		return st
	}
	if procid.GroupAlive(sup.PID) {
		return procid.Alive
	}
	return procid.Gone
}

// Describe names the supervisor of an attempt for a message.
func Describe(p ledger.Proc) string {
	if p.PID <= 0 {
		return "a supervisor whose process only its own machine can name"
	}
	return "supervisor pid " + strconv.Itoa(p.PID) + ", process group " + strconv.Itoa(p.PID)
}
