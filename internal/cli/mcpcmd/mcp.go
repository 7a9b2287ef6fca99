// Package mcpcmd is `ghonce mcp`: the MCP server of package internal/mcp
// on the factory's ledger and GitHub, over stdio or Streamable HTTP, with
// the probes and gauges that read the ledger.
package mcpcmd

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/cli/cmdutil"
	"github.com/ghonce/ghonce/internal/human"
	"github.com/ghonce/ghonce/internal/mcp"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/ledger/store"
	"github.com/ghonce/ghonce/observe"
	"github.com/ghonce/ghonce/reconcile"
)

type mcpOptions struct {
	f      *cmdutil.Factory
	Ledger cmdutil.LedgerFlag
	Repo   cmdutil.RepoFlag // finds a GitHub App's installation
	Task   cmdutil.TaskFlag // the default task of a call that passes none
	Engine cmdutil.EngineFlags
	GitHub cmdutil.GitHubFlags
	HTTP   string // loopback address for Streamable HTTP; empty: stdio
	// Upstream: serve in front of the MCP server the arguments start.
	Upstream bool
	Command  []string
	// UpstreamTimeout bounds the upstream's start and MCP handshake.
	UpstreamTimeout time.Duration
	// GitHubHost, with --upstream, is the GitHub both sides use.
	GitHubHost string
	// TokenFile holds the bearer token HTTP clients must send; empty:
	// GHONCE_MCP_AUTH_TOKEN, else none (loopback only).
	TokenFile string
	// AllowedHosts are the Host names clients reach --http by.
	AllowedHosts []string
	// Grace bounds how long a stop waits for calls in flight.
	Grace time.Duration
	// StaleAge: attempting entries older than this count as stale in /metrics.
	StaleAge time.Duration
}

// NewCmdMCP is `ghonce mcp`, the MCP server; runF, when a test gives one,
// gets the parsed options instead of the run.
func NewCmdMCP(f *cmdutil.Factory, runF func(*mcpOptions) error) *cobra.Command {
	opts := &mcpOptions{f: f, Engine: cmdutil.NewEngineFlags()}
	c := &cobra.Command{
		Use:   "mcp [--task T] [--http 127.0.0.1:PORT] [--upstream -- COMMAND [ARG...]]",
		Short: "Serve MCP write tools (create_pull_request, add_issue_comment, ...) that happen once per (task, step)",
		Long: fmt.Sprintf(`Serve the Model Context Protocol on standard input and output (or, with
--http, Streamable HTTP at http://ADDR/mcp) until the input closes or the
process is stopped.

--http serves a loopback address; another (0.0.0.0:8765, to serve a fleet
behind a load balancer) only with a bearer token every client must send
(--auth-token-file, else GHONCE_MCP_AUTH_TOKEN; 401 without it) and the host
names clients use (--allowed-host; /mcp only). Beside /mcp, with no token
and any Host: /healthz (200, or 503 when the last read of the ledger
failed) and /metrics (Prometheus); both read the ledger at most every %s
(%s on the repository ledger), never per request. SIGTERM refuses new
connections at once, lets calls in flight finish for --shutdown-grace,
then cancels the rest, left unconfirmed for the next call of the same task
and step on any replica of the same ledger. See docs/guide/service.md.

The write tools have the names and arguments of github-mcp-server v1.9.0's:
create_pull_request, issue_write (method create; create_issue is an alias),
add_issue_comment, create_branch and create_or_update_file, plus optional
task and step arguments. Each goes
through the same engine as the CLI, so a call made again after a timeout, a
crash or a restart returns the first call's artifact instead of a second one.
The default step of each tool is the CLI verb's (pr-create, issue-create,
issue-comment, branch-create, file-put): a CLI and an MCP call of the same
task and target share a key. Two read-only tools, ghonce_status and
ghonce_key, tell the agent what its task has done.

The task of a call that passes none is --task, else GHONCE_TASK. The token
(GH_TOKEN or GITHUB_TOKEN) is read once at start and never reported.

Tool errors carry the meaning of the CLI's exit codes: "unconfirmed" (3:
call again with the same arguments), "in progress elsewhere" (4), "invalid
arguments" (2), anything else (1). The server itself exits 2 on bad flags or
a missing token, 1 if it cannot open the ledger or serve, 0 when its input
closes.

With --upstream -- COMMAND [ARG...], ghonce starts COMMAND (for example
github-mcp-server stdio) as a child speaking MCP on stdio and serves one
server in front of it: upstream's tools, in upstream's order; its write
tools create_pull_request, issue_write (method create), add_issue_comment
(with a body), create_branch and create_or_update_file go through ghonce's
engine with optional task and step added; everything else passes through.
The child inherits ghonce's environment; when only one of GH_TOKEN (or
GITHUB_TOKEN) and GITHUB_PERSONAL_ACCESS_TOKEN is set it serves both, and
GITHUB_HOST and GITHUB_API_URL likewise. See docs/guide/mcp-proxy.md.`, human.Duration(watchEvery), human.Duration(watchEveryInRepository)),
		Args: func(c *cobra.Command, args []string) error {
			if opts.Upstream && len(args) == 0 {
				return cmdutil.Usagef("ghonce mcp --upstream: no command: pass it after --, e.g. ghonce mcp --upstream -- github-mcp-server stdio")
			}
			if !opts.Upstream && len(args) > 0 {
				return cmdutil.Usagef("ghonce mcp: unexpected arguments %q: to serve in front of an MCP server, pass --upstream -- COMMAND [ARG...]", args)
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.Command = args
			return cmdutil.RunOr(c.Context(), opts, runF, mcpRun)
		},
	}
	c.Flags().StringVar(&opts.HTTP, "http", "", "serve Streamable HTTP on this address (e.g. 127.0.0.1:8765) instead of stdio; another than loopback needs --auth-token-file")
	c.Flags().StringVar(&opts.TokenFile, "auth-token-file", "", "with --http: the file holding the bearer token clients must send (default GHONCE_MCP_AUTH_TOKEN); required on an address that is not loopback")
	c.Flags().StringSliceVar(&opts.AllowedHosts, "allowed-host", nil, "with --http: a Host name clients reach this server by (a load balancer's, a service's); loopback names are always allowed; repeatable")
	c.Flags().DurationVar(&opts.Grace, "shutdown-grace", 30*time.Second, "with --http: how long a stop (SIGTERM) lets calls in flight finish before it cancels them, left unconfirmed")
	c.Flags().DurationVar(&opts.StaleAge, "stale-after", 15*time.Minute, "with --http: the age after which an attempting entry counts as stale in /metrics (ghonce_ledger_stale_entries)")
	c.Flags().DurationVar(&opts.UpstreamTimeout, "upstream-timeout", mcp.DefaultStartTimeout, "with --upstream: how long the upstream may take to start and answer MCP's initialize")
	c.Flags().StringVar(&opts.GitHubHost, "github-host", "", cmdutil.FlagSays("github-host"))
	c.Flags().BoolVar(&opts.Upstream, "upstream", false, "serve in front of the MCP server that the command after -- starts (e.g. -- github-mcp-server stdio)")
	cmdutil.AddLedgerFlag(c, &opts.Ledger)
	cmdutil.AddRepoFlag(c, &opts.Repo)
	cmdutil.AddTaskFlag(c, &opts.Task)
	cmdutil.AddWaitFlag(c, &opts.Engine.Wait)
	cmdutil.AddSettleFlag(c, &opts.Engine.Settle)
	cmdutil.AddTrustLedgerFlag(c, &opts.Engine.TrustLedger)
	cmdutil.AddGitHubFlags(c, &opts.GitHub)
	return c
}

// mcpTask is the default task of MCP calls: --task, else GHONCE_TASK, else
// (inside GitHub Actions) the task derived from the workflow run, as for
// the CLI's verbs. Empty is allowed: every call must then pass task.
func mcpTask(task cmdutil.TaskFlag, sys cmdutil.IO) (string, error) {
	if strings.TrimSpace(string(task)) != "" {
		return string(task), nil
	}
	if t := sys.Getenv("GHONCE_TASK"); strings.TrimSpace(t) != "" {
		return t, nil
	}
	return cmdutil.ActionsTask(sys.Getenv, sys.Err)
}

func mcpRun(ctx context.Context, opts *mcpOptions) error {
	f, httpAddr := opts.f, opts.HTTP
	var err error
	var ho mcp.HTTPOptions
	if httpAddr != "" {
		if ho, err = httpOptions(f, opts); err != nil {
			return err
		}
		if err := mcp.CheckAddress(httpAddr, ho.Token != ""); err != nil {
			return cmdutil.Usage(err)
		}
		if host, _, _ := net.SplitHostPort(httpAddr); (host == "" || net.ParseIP(host).IsUnspecified()) && len(ho.Hosts) == 0 {
			return cmdutil.Usagef("ghonce mcp --http %s: on every interface, name the hosts clients reach it by with --allowed-host (e.g. ghonce.internal), so other names are refused", httpAddr)
		}
	} else if opts.TokenFile != "" || len(opts.AllowedHosts) > 0 {
		return cmdutil.Usagef("ghonce mcp: --auth-token-file and --allowed-host are for --http")
	}
	// Metrics are always counted (they cost a map update a call), served
	// at /metrics with --http; the GitHub client and the engine share them.
	tel := f.Telemetry(true)
	var childEnv []string
	switch {
	case opts.Upstream:
		if childEnv, err = bridgeEnv(f, opts.GitHubHost); err != nil {
			return cmdutil.Usage(err)
		}
	case opts.GitHubHost != "":
		return cmdutil.Usagef("ghonce mcp: --github-host is for --upstream; alone, set GITHUB_API_URL")
	}
	task, err := mcpTask(opts.Task, f.IO)
	if err != nil {
		return err
	}
	onChange, err := cmdutil.OnChangeFromEnv(f.IO.Getenv)
	if err != nil {
		return err
	}
	// No request is made until a call needs one.
	// With the ledger "github", each action's claim lives in the
	// repository that action writes to (--repo or GH_REPO is only the
	// default for one that names none); github://OWNER/REPO keeps all in one.
	l, gh, err := f.LedgerAndGitHubWith(ctx, opts.Ledger, store.Options{Create: store.CreateForAction, PerRepo: true}, &opts.GitHub, opts.Repo)
	if err != nil {
		return err
	}
	defer l.Close()
	// The engine's progress goes to stderr: stdout carries the protocol.
	// The server outlives its answers: a pull request is answered once
	// GitHub answered its create, its labels and done record follow, and
	// the server waits for them before it closes the ledger.
	eng := f.Engine(l, gh, opts.Engine, func(c *reconcile.Config) { c.AnswerBeforeTags = true })
	defer eng.Wait()
	cfg := mcp.Config{
		Engine: eng, Off: f.OffEngine(l, f.IO.Err, opts.Engine), Ledger: l, Task: task, OnChange: onChange, Version: f.Version,
		Logf:    func(format string, args ...any) { fmt.Fprintf(f.IO.Err, "ghonce mcp: "+format+"\n", args...) },
		Metrics: tel.Metrics, Tracer: tel.Tracer,
	}
	var srv server
	if opts.Upstream {
		p, err := mcp.NewProxy(ctx, cfg, mcp.Upstream{Command: opts.Command, Env: childEnv, Stderr: f.IO.Err, StartTimeout: opts.UpstreamTimeout})
		if err != nil {
			return err
		}
		defer p.Close()
		srv = p
	} else {
		s, err := mcp.New(cfg)
		if err != nil {
			return err
		}
		srv = s
	}
	if httpAddr == "" {
		fmt.Fprintln(f.IO.Err, "ghonce mcp: serving MCP on stdin/stdout")
		return srv.ServeIO(ctx, f.IO.In, f.IO.Out)
	}
	ln, err := net.Listen("tcp", httpAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", httpAddr, err)
	}
	ho.Metrics = tel.Metrics.Handler()
	// /healthz and /metrics answer from a read of the ledger at most every
	// few seconds, never one per probe or scrape; the ledger closes after
	// the last read ends.
	watch := watchLedger(ctx, tel.Metrics, l, opts.StaleAge, f.IO.Now, cfg.Logf)
	defer watch.wait()
	ho.Ready = watch.Ready
	auth := "no authentication: loopback clients only"
	if ho.Token != "" {
		auth = "a bearer token required"
	}
	fmt.Fprintf(f.IO.Err, "ghonce mcp: %s; /healthz and /metrics beside /mcp\n", auth)
	fmt.Fprintf(f.IO.Err, "ghonce mcp: serving MCP (Streamable HTTP) at http://%s/mcp\n", ln.Addr())
	return srv.ServeHTTP(ctx, ln, ho)
}

// server is what mcpRun serves: *mcp.Server or *mcp.Proxy.
type server interface {
	ServeIO(ctx context.Context, r io.Reader, w io.Writer) error
	ServeHTTP(ctx context.Context, l net.Listener, o mcp.HTTPOptions) error
}

// httpOptions reads --http's authentication and hosts: the bearer token
// from --auth-token-file, else GHONCE_MCP_AUTH_TOKEN. The token is never
// printed; a bad one is refused before anything is opened.
func httpOptions(f *cmdutil.Factory, opts *mcpOptions) (mcp.HTTPOptions, error) {
	ho := mcp.HTTPOptions{Hosts: opts.AllowedHosts, Grace: opts.Grace}
	from := "GHONCE_MCP_AUTH_TOKEN"
	ho.Token = f.IO.Getenv(from)
	if opts.TokenFile != "" {
		from = "--auth-token-file " + opts.TokenFile
		b, err := os.ReadFile(opts.TokenFile)
		if err != nil {
			return ho, cmdutil.Usagef("ghonce mcp: read the bearer token: %v: --auth-token-file names a file holding the token (e.g. made with `openssl rand -hex 32 > FILE`)", err)
		}
		ho.Token = string(b)
	}
	ho.Token = strings.TrimSpace(ho.Token)
	if ho.Token == "" && opts.TokenFile != "" {
		return ho, cmdutil.Usagef("ghonce mcp: %s is empty: put the bearer token in it (e.g. `openssl rand -hex 32 > FILE`)", opts.TokenFile)
	}
	if ho.Token != "" && (len(ho.Token) < mcp.MinTokenLength || strings.ContainsFunc(ho.Token, func(r rune) bool { return r <= ' ' || r == 0x7f })) {
		return ho, cmdutil.Usagef("ghonce mcp: the bearer token from %s must be at least %d characters without spaces or control characters (e.g. `openssl rand -hex 32`)", from, mcp.MinTokenLength)
	}
	if opts.Grace <= 0 {
		return ho, cmdutil.Usagef("invalid --shutdown-grace %s: want a positive duration such as 30s", opts.Grace)
	}
	return ho, nil
}

// bridgeEnv makes ghonce and its upstream (github-mcp-server) read the
// same token and host: github-mcp-server reads GITHUB_PERSONAL_ACCESS_TOKEN
// and GITHUB_HOST (https://HOST, API at /api/v3/), ghonce GH_TOKEN or
// GITHUB_TOKEN and GITHUB_API_URL. Where only one side is set, f reads it
// for ghonce's own look-ups, and the child's environment (returned: ghonce's
// own, with the other side added) gets it too.
//
// host, when set (--github-host), is the host both use.
func bridgeEnv(f *cmdutil.Factory, host string) ([]string, error) {
	get := f.IO.Getenv
	env := os.Environ()
	tok := get("GH_TOKEN")
	if tok == "" {
		tok = get("GITHUB_TOKEN")
	}
	pat := get("GITHUB_PERSONAL_ACCESS_TOKEN")
	switch {
	case tok == "" && pat != "":
		tok = pat
	case tok != "" && pat == "":
		env = append(env, "GITHUB_PERSONAL_ACCESS_TOKEN="+tok)
	}
	api := get("GITHUB_API_URL")
	if host != "" {
		u, err := url.Parse(host)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" && u.Path != "/" {
			return nil, fmt.Errorf("invalid --github-host %q: want https://HOST, as github-mcp-server's GITHUB_HOST", host)
		}
		api = apiURLOfHost(host)
		env = append(env, "GITHUB_HOST="+host)
	} else {
		host = get("GITHUB_HOST")
	}
	switch {
	case api == "" && host != "":
		api = apiURLOfHost(host)
	case api != "" && host == "":
		if h := hostOfAPIURL(api); h != "" {
			env = append(env, "GITHUB_HOST="+h)
		} else if u, err := url.Parse(api); err == nil && u.Hostname() != "api.github.com" {
			fmt.Fprintf(f.IO.Err, "ghonce mcp: warning: GITHUB_API_URL %s is no GITHUB_HOST (no port, API at /api/v3): upstream goes to github.com; set GITHUB_HOST or --github-host\n", api)
		}
	}
	f.IO.Getenv = func(k string) string {
		switch k {
		case "GH_TOKEN":
			if v := get(k); v != "" {
				return v
			}
			if get("GITHUB_TOKEN") == "" {
				return tok
			}
		case "GITHUB_API_URL":
			return api
		}
		return get(k)
	}
	return env, nil
}

// apiURLOfHost is the REST root of a github-mcp-server GITHUB_HOST:
// github.com's, GHE.com's (api.HOST) or GitHub Enterprise Server's
// (HOST/api/v3/).
func apiURLOfHost(host string) string {
	u, err := url.Parse(host)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "" // ghonce's default; github-mcp-server will refuse it itself
	}
	h := u.Hostname()
	switch {
	case h == "github.com" || strings.HasSuffix(h, ".github.com"):
		return ""
	case strings.HasSuffix(h, ".ghe.com"):
		return u.Scheme + "://api." + h + "/"
	}
	return u.Scheme + "://" + u.Host + "/api/v3/"
}

// hostOfAPIURL is the GITHUB_HOST of a REST root, "" for github.com's or
// one github-mcp-server could not reach (a port: it drops ports).
func hostOfAPIURL(api string) string {
	u, err := url.Parse(api)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	h := u.Hostname()
	switch {
	case h == "api.github.com":
		return ""
	case strings.HasPrefix(h, "api.") && strings.HasSuffix(h, ".ghe.com"):
		return u.Scheme + "://" + strings.TrimPrefix(h, "api.")
	case strings.TrimSuffix(u.Path, "/") == "/api/v3" && (u.Port() == "" || u.Port() == "80" && u.Scheme == "http" || u.Port() == "443" && u.Scheme == "https"):
		return u.Scheme + "://" + h
	}
	return ""
}

// How often /healthz and /metrics may read the ledger, whatever the number
// of probes and scrapes: a read of the repository ledger is a few GitHub
// requests (its clock, the claims' refs, claims not read before), spent
// from the agents' own limit, so it is rarer there.
const (
	watchEvery             = 15 * time.Second
	watchEveryInRepository = time.Minute
)

// ledgerWatch is what /healthz and /metrics say of the ledger: the last
// read of it (its clock and its attempting entries), made in the
// background at most once every `every`, when a probe or a scrape finds the
// last one older. No probe waits on the ledger, and no number of probes or
// scrapes costs more than that one read. A GitHub rate limit is not the
// ledger failing (it is every replica's at once, and it passes): the last
// answer stands, and /healthz stays 200.
//
// This process's own actions change the ledger too: once one has ended
// since the last read, a scrape of a database ledger (SQLite, Postgres: a
// local query, no GitHub request) reads it again before it answers, so
// the gauges show what the process did. The repository ledger keeps its
// pace: each of its reads costs GitHub requests.
type ledgerWatch struct {
	l        ledger.Ledger
	m        *observe.Metrics
	local    bool   // a database ledger: a read costs no GitHub request
	seen     uint64 // m.Acted() when the last read began
	staleAge time.Duration
	every    time.Duration
	now      func() time.Time
	logf     func(format string, args ...any)
	ctx      context.Context // the server's: a read still running ends with it
	reads    sync.WaitGroup

	mu                sync.Mutex
	began             time.Time // when the last read began; zero before the first
	reading           bool
	err               error // the last read's failure; nil once the ledger answered
	counted           bool  // attempting and stale hold a read's counts
	attempting, stale int
}

// watchLedger starts watching l for /healthz (Ready) and the ledger gauges
// of m, reading it once now; wait, when the server is done, returns once
// no read runs.
func watchLedger(ctx context.Context, m *observe.Metrics, l *store.Opened, staleAge time.Duration, now func() time.Time, logf func(string, ...any)) (w *ledgerWatch) {
	w = &ledgerWatch{l: l, m: m, local: !l.InRepository, staleAge: staleAge, every: watchEvery, now: now, logf: logf, ctx: ctx}
	if l.InRepository {
		w.every = watchEveryInRepository
	}
	m.Gauges(w.gauges)
	w.poke()
	return w
}

// Ready is /healthz's answer: the last read's failure, if it failed.
func (w *ledgerWatch) Ready(context.Context) error {
	w.poke()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *ledgerWatch) gauges(set func(string, float64, ...string)) {
	if w.local && w.m.Acted() != w.seenNow() {
		// An action of this process ended since the last read: read now.
		w.reads.Add(1)
		w.mu.Lock()
		w.reading, w.began, w.seen = true, w.now(), w.m.Acted()
		w.mu.Unlock()
		w.read()
	} else {
		w.poke()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.counted {
		set(observe.LedgerAttempting, float64(w.attempting))
		set(observe.StaleEntries, float64(w.stale))
	}
}

func (w *ledgerWatch) seenNow() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen
}

// wait returns once no read runs.
func (w *ledgerWatch) wait() { w.reads.Wait() }

// poke starts a read unless one runs or the last began less than every ago.
func (w *ledgerWatch) poke() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.reading || !w.began.IsZero() && w.now().Sub(w.began) < w.every {
		return
	}
	w.reading, w.began, w.seen = true, w.now(), w.m.Acted()
	w.reads.Add(1)
	go w.read()
}

func (w *ledgerWatch) read() {
	defer w.reads.Done()
	ctx, cancel := context.WithTimeout(w.ctx, 30*time.Second)
	defer cancel()
	attempting, stale, err := w.count(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reading = false
	switch {
	case err == nil:
		if w.err != nil {
			w.logf("the ledger answers again: /healthz answers 200")
		}
		w.err, w.counted, w.attempting, w.stale = nil, true, attempting, stale
	case w.ctx.Err() != nil:
		// The server is stopping: this read says nothing of the ledger.
	case ghcheck.IsRateLimit(err):
		w.logf("GitHub's rate limit holds the ledger's read for /healthz and /metrics; both keep their last answer: %v", err)
	default:
		if w.err == nil {
			w.logf("the ledger does not answer: %v; /healthz answers 503 until it does", err)
		}
		w.err = err
	}
}

// count reads the ledger's attempting entries, and those of them last
// written longer ago than staleAge (what `ghonce status --stale` lists).
func (w *ledgerWatch) count(ctx context.Context) (attempting, stale int, err error) {
	now, err := w.l.Now(ctx)
	if err != nil {
		return 0, 0, err
	}
	es, err := w.l.List(ctx, ledger.ListParams{Status: ledger.Attempting})
	if err != nil {
		return 0, 0, err
	}
	for _, e := range es {
		if now.Sub(e.UpdatedAt) > w.staleAge {
			stale++
		}
	}
	return len(es), stale, nil
}
