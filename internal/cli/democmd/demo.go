// Package democmd is `ghonce demo`: an agent that crashes, against a fake
// GitHub in this process, without ghonce and with it.
package democmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v66/github"
	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/internal/fakegithub"
	"github.com/ghonce/ghonce/internal/human"
	"github.com/ghonce/ghonce/reconcile"
)

const (
	demoOwner = "octo-org"
	demoRepo  = "hello-world"
	demoLogin = "agent-bot"
	// demoToken is a placeholder for the fake GitHub, not a credential.
	demoToken = "demo-token-for-the-fake-github"
	demoTask  = "ISSUE-42"
)

// demoOptions is `ghonce demo`.
type demoOptions struct {
	f       *cmdutil.Factory
	Crashes int
}

// NewCmdDemo is `ghonce demo`; runF, when a test gives one, gets the
// parsed options instead of the run.
func NewCmdDemo(f *cmdutil.Factory, runF func(*demoOptions) error) *cobra.Command {
	opts := &demoOptions{f: f}
	c := &cobra.Command{
		Use:   "demo",
		Short: "Play the duplicate-PR story against the built-in fake GitHub (no token, no network)",
		Long: `Play the story ghonce exists for, against a fake GitHub on 127.0.0.1:

An agent opens a pull request for ISSUE-42. Right after GitHub creates it, and
before the agent records that, the agent is killed; it is restarted and tries
again (with a new branch name and reworded text, as agents do).

First without ghonce: every restart opens another pull request. Then through
ghonce, as real 'ghonce pr create' processes killed with SIGKILL at the same
moment: the restart finds the first pull request and records it; one PR.

Last, 'ghonce audit' runs on what the run without ghonce left: it finds the
duplicate pull requests, and 'ghonce audit --apply' closes them.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			return cmdutil.RunOr(c.Context(), opts, runF, demoRun)
		},
	}
	c.Flags().IntVar(&opts.Crashes, "crashes", 2, "how many times the agent is killed before a run completes")
	return c
}

func demoRun(ctx context.Context, opts *demoOptions) error {
	sys, crashes := opts.f.IO, opts.Crashes
	if crashes < 1 || crashes > 10 {
		return cmdutil.Usagef("invalid --crashes %d: want 1 to 10", crashes)
	}
	out := sys.Out
	fmt.Fprintf(out, "ghonce demo: an agent opens a PR for %s and is killed right after GitHub creates it, %d times.\n\n", demoTask, crashes)

	naiveServer, err := demoServer()
	if err != nil {
		return fmt.Errorf("demo without ghonce: %w", err)
	}
	defer naiveServer.Close()
	naive, err := demoNaive(ctx, naiveServer, crashes)
	if err != nil {
		return fmt.Errorf("demo without ghonce: %w", err)
	}
	fmt.Fprintf(out, "Without ghonce: %d runs, %d crashes, %d pull requests for one change:\n", crashes+1, crashes, len(naive))
	for _, pr := range naive {
		fmt.Fprintf(out, "  #%d  %-32s %s\n", pr.Number, pr.Head, pr.Title)
	}

	once, lines, err := demoGhonce(ctx, sys, crashes)
	if err != nil {
		return fmt.Errorf("demo with ghonce: %w", err)
	}
	fmt.Fprintf(out, "\nWith ghonce: %d runs of `ghonce pr create`, each to be killed with SIGKILL the moment GitHub creates a PR (as above), %d pull request:\n", len(lines), len(once))
	for _, pr := range once {
		fmt.Fprintf(out, "  #%d  %-32s %s\n", pr.Number, pr.Head, pr.Title)
	}
	fmt.Fprintln(out, "  what each run said:")
	for _, l := range lines {
		fmt.Fprintln(out, "    "+l)
	}
	if len(once) != 1 {
		return fmt.Errorf("expected exactly one pull request through ghonce, got %d", len(once))
	}
	fmt.Fprintln(out, "\nThe restarted run found the PR its killed predecessor made (tagged with the key's label and hidden marker,")
	fmt.Fprintln(out, "looked up on consistent list endpoints) instead of opening another. Try it on your repository:")
	fmt.Fprintln(out, "  ghonce pr create --task ISSUE-42 --repo OWNER/NAME --base main --head BRANCH --title T --body B")
	fmt.Fprintf(out, "(The demo's fake GitHub commits a create at once, so its runs pass --settle %s. Against GitHub, a run that\n", demoSettle)
	fmt.Fprintf(out, "takes over from one killed after sending a create waits --settle, %s by default, from that send before it looks.)\n", human.Duration(reconcile.DefaultSettle))

	left, err := demoAudit(ctx, sys, naiveServer)
	if err != nil {
		return fmt.Errorf("demo audit: %w", err)
	}
	if left != 1 {
		return fmt.Errorf("expected one open pull request after the audit, got %d", left)
	}
	return nil
}

// demoAudit runs `ghonce audit`, then `ghonce audit --apply`, as real
// processes on what the naive agent left, prints what they said, and
// returns how many pull requests are left open.
func demoAudit(ctx context.Context, sys cmdutil.IO, s *fakegithub.Server) (open int, err error) {
	out := sys.Out
	self, err := sys.Executable()
	if err != nil {
		return 0, fmt.Errorf("find the ghonce binary to run: %w", err)
	}
	dir, err := os.MkdirTemp("", "ghonce-demo-audit-")
	if err != nil {
		return 0, fmt.Errorf("create a temporary ledger directory: %w", err)
	}
	defer os.RemoveAll(dir)
	env := append(demoEnv(), "GH_TOKEN="+demoToken, "GITHUB_API_URL="+s.URL(), "GHONCE_LEDGER="+filepath.Join(dir, "ledger.db"))
	fmt.Fprint(out, "\nAnd the duplicates the run without ghonce left? `ghonce audit` finds them by evidence (one author,\n"+
		"one base, heads with the same tree), and `--apply` closes them, once each, through the same engine:\n")
	for _, args := range [][]string{
		{"audit", "--repo", demoOwner + "/" + demoRepo, "--kind", "pr"},
		{"audit", "--repo", demoOwner + "/" + demoRepo, "--kind", "pr", "--apply"},
	} {
		o, err := demoRun1(ctx, nil, self, args, env)
		if err != nil {
			return 0, err
		}
		fmt.Fprintf(out, "  $ ghonce %s    (exit %d)\n", strings.Join(args, " "), o.exit)
		for _, l := range strings.Split(strings.TrimRight(o.stdout, "\n"), "\n") {
			if strings.HasPrefix(l, "KIND") || strings.HasPrefix(l, "pr ") {
				fmt.Fprintln(out, "    "+strings.TrimRight(l, " "))
			}
		}
	}
	for _, pr := range s.PullRequests(demoOwner, demoRepo) {
		fmt.Fprintf(out, "  #%d  %-32s %s\n", pr.Number, pr.Head, pr.State)
		if pr.State == "open" {
			open++
		}
	}
	return open, nil
}

// demoServer is a fake GitHub with the demo's repository and user.
func demoServer() (*fakegithub.Server, error) {
	s, err := fakegithub.Start(fakegithub.Options{})
	if err != nil {
		return nil, err
	}
	s.AddUser(demoLogin, demoToken)
	s.AddRepo(demoOwner, demoRepo, "main")
	return s, nil
}

// pushBranch stands in for the agent's `git push`: each attempt pushes
// the agent's same change (one tree), committed again.
func pushBranch(s *fakegithub.Server, attempt int) string {
	name := fmt.Sprintf("agent/fix-42-attempt-%d", attempt)
	sha, again := s.Branch(demoOwner, demoRepo, "agent/fix-42-attempt-1")
	if again {
		sha = s.AddCommitSameTree(demoOwner, demoRepo, sha, demoLogin)
	} else {
		sha = s.AddCommitBy(demoOwner, demoRepo, "main", demoLogin)
	}
	s.SetRef(demoOwner, demoRepo, name, sha)
	return name
}

// demoNaive is the agent from the seed story: it opens the PR and only then
// records "done"; a kill in between leaves no record, so the restart opens
// another.
func demoNaive(ctx context.Context, s *fakegithub.Server, crashes int) ([]fakegithub.PR, error) {
	// The kill lands after GitHub committed the PR and before the response.
	front, err := newCrashFront(s, crashes)
	if err != nil {
		return nil, err
	}
	defer front.close()
	gh := github.NewClient(&http.Client{Transport: &tokenTransport{token: demoToken}, Timeout: 30 * time.Second})
	base, err := gh.BaseURL.Parse(front.url)
	if err != nil {
		return nil, err
	}
	gh.BaseURL = base
	done := false // the agent's "done" marker, lost with the process
	for attempt := 1; !done && attempt <= crashes+1; attempt++ {
		head := pushBranch(s, attempt)
		_, _, err := gh.PullRequests.Create(ctx, demoOwner, demoRepo, &github.NewPullRequest{
			Title: github.String(demoTitle(attempt)),
			Head:  github.String(head), Base: github.String("main"),
			Body: github.String("Generated fix."),
		})
		done = err == nil
	}
	return s.PullRequests(demoOwner, demoRepo), nil
}

// demoGhonce runs the same agent as real `ghonce pr create` processes and
// kills each of the first crashes runs with SIGKILL right after the fake
// GitHub committed its pull request.
func demoGhonce(ctx context.Context, sys cmdutil.IO, crashes int) ([]fakegithub.PR, []string, error) {
	self, err := sys.Executable()
	if err != nil {
		return nil, nil, fmt.Errorf("find the ghonce binary to run: %w", err)
	}
	dir, err := os.MkdirTemp("", "ghonce-demo-")
	if err != nil {
		return nil, nil, fmt.Errorf("create a temporary ledger directory: %w", err)
	}
	defer os.RemoveAll(dir)
	s, err := demoServer()
	if err != nil {
		return nil, nil, err
	}
	defer s.Close()
	front, err := newCrashFront(s, crashes)
	if err != nil {
		return nil, nil, err
	}
	defer front.close()
	env := append(demoEnv(), "GH_TOKEN="+demoToken, "GITHUB_API_URL="+front.url)
	var lines []string
	for attempt := 1; attempt <= crashes+1; attempt++ {
		head := pushBranch(s, attempt)
		o, err := demoRun1(ctx, front, self, []string{"pr", "create",
			"--ledger", filepath.Join(dir, "ledger.db"), "--repo", demoOwner + "/" + demoRepo, "--task", demoTask,
			"--base", "main", "--head", head, "--settle", demoSettle.String(),
			"--title", demoTitle(attempt), "--body", "Generated fix.", "--json"}, env)
		switch {
		case err != nil:
			return nil, nil, err
		case o.killed:
			lines = append(lines, fmt.Sprintf("run %d: killed (SIGKILL) right after GitHub created the PR", attempt))
		default:
			// The agent heard an answer: it stops there.
			lines = append(lines, fmt.Sprintf("run %d: exit %d: %s", attempt, o.exit, strings.TrimSpace(o.stdout)))
			return s.PullRequests(demoOwner, demoRepo), lines, nil
		}
	}
	return s.PullRequests(demoOwner, demoRepo), lines, nil
}

// demoTitle is the title a restarted agent words its pull request with: a
// retry's words. The run after a killed one takes over an attempt that died
// before answering, so ghonce's default --on-change auto answers it with
// the first pull request whatever its words (docs/design/same-act.md).
func demoTitle(attempt int) string {
	return "Fix #42" + [...]string{"", " (retry)", ", again", " (retrying)"}[(attempt-1)%4]
}

// demoSettle is the demo runs' --settle: the fake commits a create before it
// answers, so no request is still in flight once a run is killed.
const demoSettle = 100 * time.Millisecond

type tokenTransport struct{ token string }

func (t *tokenTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return http.DefaultTransport.RoundTrip(r)
}

// crashFront stands between the demo's agent and the fake GitHub and plays
// the crash: the first crashes times the fake has created a pull request,
// the answer never leaves, and the ghonce process that asked, if any, is
// killed with SIGKILL first. The fake itself is GitHub and nothing else.
type crashFront struct {
	url string
	srv *http.Server

	mu      sync.Mutex
	left    int
	running *os.Process
	killed  bool
}

func newCrashFront(fake *fakegithub.Server, crashes int) (*crashFront, error) {
	target, err := url.Parse(fake.URL())
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen on loopback: %w", err)
	}
	f := &crashFront{url: "http://" + l.Addr().String() + target.Path, left: crashes}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(&url.URL{Scheme: target.Scheme, Host: target.Host}) },
		ModifyResponse: func(resp *http.Response) error {
			if resp.Request.Method == http.MethodPost && strings.HasSuffix(resp.Request.URL.Path, "/pulls") && resp.StatusCode == http.StatusCreated && f.crash() {
				return errDemoCrash
			}
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, _ *http.Request, _ error) {
			// The connection drops as a dying agent's would.
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					c.Close()
					return
				}
			}
			w.WriteHeader(http.StatusBadGateway)
		},
	}
	f.srv = &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	go f.srv.Serve(l) //nolint:errcheck // ends with close
	return f, nil
}

var errDemoCrash = errors.New("the agent crashed")

// crash reports whether this create is one the agent dies after, killing
// the running process when there is one.
func (f *crashFront) crash() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.left == 0 {
		return false
	}
	f.left--
	if f.running != nil {
		_ = f.running.Kill()
		f.killed = true
	}
	return true
}

func (f *crashFront) close() { f.srv.Close() }

// demoOutcome is how one ghonce process of the demo ended.
type demoOutcome struct {
	exit   int
	killed bool
	stdout string
}

// demoRun1 runs ghonce (self) with args and env, as the process front
// kills when it crashes the agent (front nil: none).
func demoRun1(ctx context.Context, front *crashFront, self string, args, env []string) (demoOutcome, error) {
	cmd := exec.CommandContext(ctx, self, args...)
	cmd.Env = env
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if front == nil {
		front = &crashFront{}
	}
	front.mu.Lock() // a crash before the process is known could not kill it
	err := cmd.Start()
	front.running, front.killed = cmd.Process, false
	front.mu.Unlock()
	if err != nil {
		return demoOutcome{}, fmt.Errorf("start %s: %w", self, err)
	}
	err = cmd.Wait()
	front.mu.Lock()
	o := demoOutcome{exit: cmd.ProcessState.ExitCode(), stdout: stdout.String(), killed: front.killed}
	front.running = nil
	front.mu.Unlock()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return o, fmt.Errorf("run %s: %w", self, err)
	}
	return o, nil
}

// demoEnv is the environment without GitHub's, the runner's or ghonce's
// settings, so the demo's processes never reach a real token or ledger.
func demoEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "GH_") && !strings.HasPrefix(k, "GITHUB_") && !strings.HasPrefix(k, "GHONCE_") && !strings.HasPrefix(k, "RUNNER_") {
			env = append(env, kv)
		}
	}
	return env
}
