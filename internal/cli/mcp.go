package cli

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ghonce/ghonce/ghcheck"
	"github.com/ghonce/ghonce/internal/mcp"
	"github.com/ghonce/ghonce/ledger/store"
)

type mcpOptions struct {
	f    *factory
	ctx  context.Context
	HTTP string // loopback address for Streamable HTTP; empty: stdio
}

func newCmdMCP(f *factory, runF func(*mcpOptions) error) *cobra.Command {
	opts := &mcpOptions{f: f}
	c := &cobra.Command{
		Use:   "mcp [--task T] [--http 127.0.0.1:PORT]",
		Short: "Serve MCP write tools (create_pull_request, add_issue_comment, ...) that happen once per (task, step)",
		Long: `Serve the Model Context Protocol on standard input and output (or, with
--http, Streamable HTTP at http://ADDR/mcp on a loopback address) until the
input closes or the process is stopped.

The write tools have the names and arguments of github-mcp-server's:
create_pull_request, create_issue, add_issue_comment, create_branch and
create_or_update_file, plus optional task and step arguments. Each goes
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
closes.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			opts.ctx = c.Context()
			return runOr(opts, runF, mcpRun)
		},
	}
	c.Flags().StringVar(&opts.HTTP, "http", "", "serve Streamable HTTP on this loopback address (e.g. 127.0.0.1:8765) instead of stdio")
	return c
}

// mcpTask is the default task of MCP calls: --task, else GHONCE_TASK, else
// (inside GitHub Actions) the task derived from the workflow run, as for
// the CLI's verbs. Empty is allowed: every call must then pass task.
func (f *factory) mcpTask() (string, error) {
	if strings.TrimSpace(f.g.task) != "" {
		return f.g.task, nil
	}
	if t := f.sys.Getenv("GHONCE_TASK"); strings.TrimSpace(t) != "" {
		return t, nil
	}
	return f.g.actionsTask(f.sys.Getenv)
}

func mcpRun(opts *mcpOptions) error {
	f, ctx, httpAddr := opts.f, opts.ctx, opts.HTTP
	if httpAddr != "" {
		if err := mcp.CheckLoopback(httpAddr); err != nil {
			return usage(err)
		}
	}
	task, err := f.mcpTask()
	if err != nil {
		return err
	}
	// One GitHub client serves the engine and from_branch; no request is
	// made until a call needs one.
	l, gh, err := f.ledgerAndGitHub(ctx, store.CreateForAction, true)
	if err != nil {
		return err
	}
	defer l.Close()
	// The engine's progress goes to stderr: stdout carries the protocol.
	eng := f.engine(l, gh, f.sys.Err)
	srv, err := mcp.New(mcp.Config{
		Engine: eng, Ledger: l, Task: task, Version: buildVersion(),
		Resolve: func(ctx context.Context, owner, repo, ref string) (string, error) {
			r, err := ghcheck.ParseRepo(owner + "/" + repo)
			if err != nil {
				return "", err
			}
			if ref == "" {
				ref = "HEAD" // GET /repos/{o}/{r}/commits/HEAD: the default branch's head
			}
			return gh.ResolveCommit(ctx, r, ref)
		},
		Logf: func(format string, args ...any) { fmt.Fprintf(f.sys.Err, "ghonce mcp: "+format+"\n", args...) },
	})
	if err != nil {
		return err
	}
	if httpAddr == "" {
		fmt.Fprintln(f.sys.Err, "ghonce mcp: serving MCP on stdin/stdout")
		return srv.ServeIO(ctx, f.sys.In, f.sys.Out)
	}
	ln, err := net.Listen("tcp", httpAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", httpAddr, err)
	}
	fmt.Fprintf(f.sys.Err, "ghonce mcp: serving MCP (Streamable HTTP) at http://%s/mcp\n", ln.Addr())
	return srv.ServeHTTP(ctx, ln)
}

// buildVersion is the version this binary reports (see readVersion), for
// the MCP handshake; "dev" for a build from a working tree.
func buildVersion() string { return readVersion().Version }
