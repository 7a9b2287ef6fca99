// Package harness runs real ghonce processes against the fake GitHub in
// fixtures and kills them with SIGKILL at the moment the fake has committed a
// write and before its answer leaves: the crash the seed articles describe.
// The crash tests and the reliability matrix share it; `ghonce demo`, which
// ships, plays its crash itself (internal/cli/democmd/demo.go).
package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ghonce/ghonce/fixtures"
)

// Outcome is how one process ended.
type Outcome struct {
	Exit   int  // exit code; -1 when killed
	Killed bool // killed by the runner at a commit
	Stdout string
	Stderr string
}

// Runner runs one process at a time against a fake server and kills it
// when a commit matches its kill rule.
type Runner struct {
	fake    *fixtures.Server
	mu      sync.Mutex
	running *exec.Cmd
	killOn  func(*fixtures.Commit) bool
	killed  bool
}

// NewRunner installs the runner as s's commit hook.
func NewRunner(s *fixtures.Server) *Runner {
	r := &Runner{fake: s}
	s.OnCommit(r.onCommit)
	return r
}

func (r *Runner) onCommit(c *fixtures.Commit) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running == nil || r.killOn == nil || r.killed || !r.killOn(c) {
		return
	}
	r.killed = true
	KillAndWaitDead(r.running.Process)
}

// Run starts bin with args and env and waits for it. If killOn matches a
// commit made while it runs, the process is killed with SIGKILL before the
// fake's answer is written.
func (r *Runner) Run(ctx context.Context, bin string, args, env []string, killOn func(*fixtures.Commit) bool) (Outcome, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// What ghonce starts (ghonce exec's supervisor and command) inherits
	// these pipes; Wait waits for every holder to close them. A supervisor
	// outlives a killed ghonce by up to its grace (5 s), never by this
	// much: past it the run fails, naming the cause, rather than hanging
	// the test until its timeout.
	cmd.WaitDelay = waitDelay
	r.mu.Lock()
	if err := cmd.Start(); err != nil {
		r.mu.Unlock()
		return Outcome{}, fmt.Errorf("start %s: %w", bin, err)
	}
	r.running, r.killOn, r.killed = cmd, killOn, false
	r.mu.Unlock()

	err := cmd.Wait()

	r.mu.Lock()
	killed := r.killed
	r.running, r.killOn = nil, nil
	r.mu.Unlock()
	if killed {
		// The request the process died in is still being handled: let it
		// finish, so what the fake counts is what the dead run sent.
		r.fake.WaitIdle()
	}
	out := Outcome{Killed: killed, Stdout: stdout.String(), Stderr: stderr.String(), Exit: cmd.ProcessState.ExitCode()}
	var ee *exec.ExitError
	switch {
	case errors.Is(err, exec.ErrWaitDelay):
		return out, fmt.Errorf("run %s: it exited, but a process it started still held its output %s later: %w", bin, waitDelay, err)
	case err != nil && !errors.As(err, &ee):
		return out, fmt.Errorf("run %s: %w", bin, err)
	}
	return out, nil
}

// waitDelay is how long Run waits, once the process exited (or ctx ended
// it), for what it started to close its stdout and stderr.
const waitDelay = 30 * time.Second

// KillAndWaitDead sends SIGKILL and returns once the process can run no
// more code (it is a zombie or gone), so whatever happens next, such as the
// fake writing its answer, happens after the crash.
func KillAndWaitDead(p *os.Process) {
	_ = p.Kill()
	stat := fmt.Sprintf("/proc/%d/stat", p.Pid)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(stat)
		if err != nil {
			return // reaped
		}
		// The state follows the command name in parentheses.
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && (b[i+2] == 'Z' || b[i+2] == 'X') {
			return
		}
		runtime.Gosched()
	}
}

// Build compiles ./cmd/ghonce of the module at root into dir, with the
// given build tags, and returns the binary's path.
func Build(ctx context.Context, root, dir string, tags ...string) (string, error) {
	name := "ghonce"
	if len(tags) > 0 {
		name += "-" + strings.Join(tags, "-")
	}
	bin := filepath.Join(dir, name)
	args := []string{"build", "-o", bin}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	args = append(args, "./cmd/ghonce")
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build ghonce: %w\n%s", err, out)
	}
	return bin, nil
}

// GitHubMCPServer is the pinned github-mcp-server the tests run: the path
// GHONCE_GITHUB_MCP_SERVER names, else bin/github-mcp-server at the module
// root (`make github-mcp-server`). The error says why it cannot be run.
func GitHubMCPServer() (string, error) {
	path := os.Getenv("GHONCE_GITHUB_MCP_SERVER")
	if path == "" {
		root, err := ModuleRoot()
		if err != nil {
			return "", err
		}
		path = filepath.Join(root, "bin", "github-mcp-server")
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("github-mcp-server is not built (%v): run `make github-mcp-server`", err)
	}
	return path, nil
}

// Loopback80 listens on port 80 of the first loopback address from
// 127.0.0.2 up that is free, for a fake GitHub that github-mcp-server can
// reach: its GITHUB_HOST keeps the host name alone (GitHub Enterprise at
// http://HOST/api/v3/, any port dropped). Port 80 needs root. Tests in
// parallel, and packages tested in parallel, each take an address.
func Loopback80() (net.Listener, string, error) {
	var last error
	for i := 2; i < 255; i++ {
		host := fmt.Sprintf("127.0.0.%d", i)
		l, err := net.Listen("tcp", host+":80")
		if err == nil {
			return l, host, nil
		}
		last = err
		if !errors.Is(err, syscall.EADDRINUSE) {
			break
		}
	}
	return nil, "", fmt.Errorf("cannot listen on port 80 of a loopback address (%w): the fake GitHub for github-mcp-server needs it (run as root)", last)
}

// ModuleRoot finds the directory holding go.mod, from the working directory up.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("find module root: no go.mod above the working directory")
		}
		dir = parent
	}
}

// CleanEnv is the current environment without GitHub credentials or ghonce
// settings, so a child never touches a real token or ledger.
func CleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GH_TOKEN", "GITHUB_TOKEN", "GITHUB_API_URL", "GITHUB_PERSONAL_ACCESS_TOKEN", "GITHUB_HOST", "GH_REPO", "GITHUB_REPOSITORY", "GHONCE_TASK", "GHONCE_LEDGER", "GHONCE_CRASH_AT":
			continue
		case "GITHUB_ACTIONS", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_EVENT_PATH", "RUNNER_TEMP",
			"GHONCE_APP_ID", "GHONCE_APP_PRIVATE_KEY", "GHONCE_APP_PRIVATE_KEY_FILE", "GHONCE_APP_INSTALLATION_ID":
			// A test run inside a GitHub Actions job must not make the
			// children act as that job's steps.
			continue
		}
		env = append(env, kv)
	}
	return env
}

// SyncBuffer is a child's stderr (or any stream) written by one goroutine,
// the process's copier, and read by another, in a failure message.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
