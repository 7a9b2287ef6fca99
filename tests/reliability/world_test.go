package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/tests/harness"
)

const (
	owner = "octo-org"
	repo  = "hello-world"
	login = "agent-bot"
	// commentOn is the issue every comment trial comments on (seeded by
	// someone else), so its thread grows to several pages.
	commentOn = 1
	// docsBranch is the branch file trials write to.
	docsBranch = "docs"
	// reviewOn is the pull request (someone else's) the review trials
	// act on; its head adds change-someone.txt.
	reviewOn = 2
)

// matrix is what every part shares: the binary, the token, the outputs.
type matrix struct {
	bin    string // ghonce built with crash points
	helper string // this test binary, which serves as a guarded command
	token  string
	root   string // work directory
	prof   profile
	// pgLedger is the shared Postgres ledger of the pg part (postgres_test.go).
	pgLedger string
	// shared maps the ledger label of rows whose runs share one ledger on
	// separate machines (the pg and gh parts) to its location.
	shared map[string]string

	mu      sync.Mutex
	secrets []string // strings that must appear in no output
	outputs int      // process outputs searched
	leaks   []string // where a secret appeared
	panics  []string // outputs with a Go panic or trace
	locked  []string // outputs reporting a locked database
}

// watch checks one process's output for secrets, panics and lock errors.
func (m *matrix) watch(what string, o *out) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.outputs++
	all := o.Stdout + o.Stderr
	for _, s := range m.secrets {
		if s != "" && strings.Contains(all, s) {
			m.leaks = append(m.leaks, what+": "+firstLine(all))
		}
	}
	if strings.Contains(all, "panic") || strings.Contains(all, "goroutine ") {
		m.panics = append(m.panics, what+": "+firstLine(o.Stderr))
	}
	if strings.Contains(all, "locked") {
		m.locked = append(m.locked, what+": "+firstLine(o.Stderr))
	}
}

func (m *matrix) addSecret(s string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.secrets = append(m.secrets, s)
}

// clock is the fake's clock: the wall clock plus an offset a test moves.
type clock struct{ offset atomic.Int64 }

func (c *clock) Now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *clock) Advance(d time.Duration) { c.offset.Add(int64(d)) }

// world is one fake GitHub with one repository, a directory, and at most
// one ghonce process at a time that its hooks may kill (races run many
// processes, with no hooks armed).
type world struct {
	m     *matrix
	name  string
	fake  *fixtures.Server
	clock *clock
	dir   string
	main  string // sha of main's head
	fx    *effects

	// readerOnce adds the user the matrix reads a repository ledger as.
	readerOnce sync.Once

	mu      sync.Mutex
	proc    *os.Process
	rule    *killRule
	commits []fixtures.Commit
	writes  []timed // write requests that reached an endpoint, with times
}

type timed struct {
	method, path string
	at           time.Time
}

// killRule says where the running process is killed by a hook. Exactly
// one of its fields is set.
type killRule struct {
	// write kills at a write request in flight that matches, before it is
	// stored; proceed says whether the fake then stores it.
	write   func(*fixtures.PendingWrite) bool
	proceed bool
	// delay holds a write that proceeds this long before the fake stores
	// it: GitHub committing a create seconds after the request arrived.
	delay time.Duration
	// commit kills after a matching write is stored, before the answer.
	commit func(*fixtures.Commit) bool
	// effect kills in the command-effect service: before it records
	// ("before", then proceed decides), after ("after"), or while the
	// command works before its request ("gate", see effects.serveGate).
	effect string
	// signal, when set and not SIGKILL, is sent instead of SIGKILL: ghonce
	// may then run code (it is asked to stop, as by a terminal or a CI
	// runner's cancel), and fire does not wait for it to end.
	signal syscall.Signal
	// hold, when set with write, is called instead of the kill: the
	// process lives on, its request in flight until hold returns, and the
	// fake then stores it (pidns_test.go).
	hold  func()
	fired bool
}

// newWorld starts a fake with the agent's user and repository, the issue
// comments go to, and the branch files go to.
func (m *matrix) newWorld(name string, opts fixtures.Options) (*world, error) {
	dir := filepath.Join(m.root, "worlds", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	c := &clock{}
	if opts.Now == nil {
		opts.Now = c.Now
	}
	if opts.CoreLimit == 0 {
		// The matrix makes tens of thousands of requests an hour as one
		// user; only the fault rows are about rate limits.
		opts.CoreLimit = 1 << 30
	}
	s := fixtures.NewServer(opts)
	s.AddUser(login, m.token)
	w := &world{m: m, name: name, fake: s, clock: c, dir: dir}
	w.main = s.AddRepo(owner, repo, "main")
	s.AddUser("someone", "")
	s.SeedIssue(owner, repo, "someone", fixtures.SeedIssue{Title: "Tracking issue", Body: "Agents report here."})
	s.SetRef(owner, repo, "review-me", s.AddCommitBy(owner, repo, "main", "someone"))
	s.SeedPR(owner, repo, "someone", fixtures.SeedPR{Head: "review-me", Title: "Review me"})
	s.SetRef(owner, repo, docsBranch, w.main)
	s.OnCommit(w.onCommit)
	s.BeforeWrite(w.beforeWrite)
	w.fx = newEffects(w)
	return w, nil
}

func (w *world) close() {
	w.fake.Close()
	w.fx.close()
}

func (w *world) beforeWrite(pw *fixtures.PendingWrite) bool {
	w.mu.Lock()
	w.writes = append(w.writes, timed{pw.Method, pw.Path, time.Now()})
	if r := w.rule; r != nil && !r.fired && r.write != nil && r.write(pw) {
		if r.hold != nil {
			r.fired = true
			w.mu.Unlock()
			r.hold()
			return true
		}
		w.fire()
		proceed, delay := r.proceed, r.delay
		w.mu.Unlock()
		if proceed && delay > 0 {
			time.Sleep(delay) // the slow commit itself, not a synchronisation
		}
		return proceed
	}
	w.mu.Unlock()
	return true
}

func (w *world) onCommit(c *fixtures.Commit) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.commits = append(w.commits, *c)
	if r := w.rule; r != nil && !r.fired && r.commit != nil && r.commit(c) {
		w.fire()
	}
}

// onEffect is the command-effect service's hook; it reports whether the
// effect is to be recorded.
func (w *world) onEffect(stage string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r := w.rule; r != nil && !r.fired && r.effect == stage {
		w.fire()
		return stage == "after" || r.proceed
	}
	return true
}

// fire kills the running process and returns once it can run no more
// code. w.mu is held.
func (w *world) fire() {
	w.rule.fired = true
	if w.proc == nil {
		return
	}
	if s := w.rule.signal; s != 0 && s != syscall.SIGKILL {
		_ = w.proc.Signal(s)
		return
	}
	harness.KillAndWaitDead(w.proc)
}

// commitsSince returns a copy of the commits stored after the first n.
func (w *world) commitsSince(n int) []fixtures.Commit {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]fixtures.Commit(nil), w.commits[min(n, len(w.commits)):]...)
}

func (w *world) writesSince(n int) []timed {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]timed(nil), w.writes[min(n, len(w.writes)):]...)
}

func (w *world) counts() (commits, writes int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.commits), len(w.writes)
}

// proc is one ghonce invocation.
type proc struct {
	args    []string
	env     []string // added to the base environment
	stdin   string
	crashAt string        // GHONCE_CRASH_AT
	rule    *killRule     // armed while it runs
	killAt  time.Duration // > 0: SIGKILL this long after the start
	wrap    []string      // run through this command (e.g. sh -c '...')
	dir     string        // working directory (default the world's)
	cred    *syscall.Credential
	// aside: it runs beside the process the hooks watch (while a hold
	// keeps that one in flight); no hook sees or kills it.
	aside   bool
	noToken bool
	token   string // instead of the matrix's token
}

// out is how one process ended.
type out struct {
	Exit   int  // -1 when killed by a signal
	Killed bool // died of SIGKILL
	Stdout string
	Stderr string
	Dur    time.Duration
	Res    *result // the --json line, when exit 0
}

// result is ghonce's --json output for an action: the engine's Result.
type result = outcome.Result

func (w *world) env(p proc) []string {
	env := append(harness.CleanEnv(),
		"GITHUB_API_URL="+w.fake.URL(),
		"GHONCE_MATRIX_EFFECT_URL="+w.fx.url(),
		"HOME="+w.dir, "XDG_STATE_HOME="+filepath.Join(w.dir, "state"),
		// Where a repository ledger (the gh part) lives for a guarded
		// command, which names no repository; the other kinds pass --repo.
		"GH_REPO="+owner+"/"+repo,
		// Under go test -race the guarded command (this test binary) would
		// sleep a second at exit, waiting for race reports.
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"),
	)
	switch {
	case p.noToken:
	case p.token != "":
		env = append(env, "GH_TOKEN="+p.token)
	default:
		env = append(env, "GH_TOKEN="+w.m.token)
	}
	if p.crashAt != "" {
		env = append(env, "GHONCE_CRASH_AT="+p.crashAt)
	}
	return append(env, p.env...)
}

// run runs p to its end (or its kill) and checks its output.
func (w *world) run(ctx context.Context, p proc) (*out, error) {
	cmd := w.command(ctx, p)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if p.stdin != "" {
		cmd.Stdin = strings.NewReader(p.stdin)
	}
	w.mu.Lock()
	if err := cmd.Start(); err != nil {
		w.mu.Unlock()
		return nil, fmt.Errorf("start ghonce: %w", err)
	}
	start := time.Now()
	if !p.aside {
		w.proc, w.rule = cmd.Process, p.rule
	}
	w.mu.Unlock()
	var timer *time.Timer
	if p.killAt > 0 {
		timer = time.AfterFunc(p.killAt, func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.proc == cmd.Process {
				harness.KillAndWaitDead(cmd.Process)
			}
		})
	}
	err := cmd.Wait()
	if timer != nil {
		timer.Stop()
	}
	if !p.aside {
		w.mu.Lock()
		w.proc, w.rule = nil, nil
		w.mu.Unlock()
	}
	o := &out{Exit: cmd.ProcessState.ExitCode(), Stdout: stdout.String(), Stderr: stderr.String(), Dur: time.Since(start)}
	o.Killed = killedBySIGKILL(cmd.ProcessState)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return o, fmt.Errorf("run ghonce: %w", err)
	}
	if o.Exit == 0 {
		o.Res = parseResult(o.Stdout)
	}
	w.m.watch(w.name+" "+strings.Join(p.args, " "), o)
	return o, nil
}

func (w *world) command(ctx context.Context, p proc) *exec.Cmd {
	name, args := w.m.bin, p.args
	if len(p.wrap) > 0 {
		name, args = p.wrap[0], append(append(append([]string(nil), p.wrap[1:]...), w.m.bin), p.args...)
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = w.env(p)
	cmd.Dir = w.dir
	if p.dir != "" {
		cmd.Dir = p.dir
	}
	if p.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	}
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

func killedBySIGKILL(ps *os.ProcessState) bool {
	if ps == nil {
		return false
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

func parseResult(stdout string) *result {
	for _, line := range strings.Split(stdout, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var r result
		if json.Unmarshal([]byte(line), &r) == nil && r.Key != "" {
			return &r
		}
	}
	return nil
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// removeLedger deletes a ledger and its WAL files: the lost local state of
// a re-cloned or re-provisioned runner.
func removeLedger(path string) error {
	for _, p := range []string{path, path + "-wal", path + "-shm", path + "-journal"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}
