// Package mcp is ghonce's Model Context Protocol server: write tools with the
// names and argument schemas of github/github-mcp-server's
// (create_pull_request, issue_write, create_issue, add_issue_comment,
// create_branch, create_or_update_file) that go through the reconcile engine, so an agent
// that calls one again after a timeout, a crash or a restart gets the
// artifact made the first time instead of a second one; and two read-only
// tools (ghonce_status, ghonce_key) for an agent to orient itself.
//
// The server is a value built from its dependencies (Config), so tests run
// it in process over the SDK's in-memory transport; internal/cli's `ghonce
// mcp` only parses flags and wires a real engine, ledger and GitHub client.
package mcp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/taskkey"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/observe"
	"github.com/ghonce/ghonce/offgithub"
	"github.com/ghonce/ghonce/reconcile"
)

// Doer performs an action once: *reconcile.Engine.
type Doer interface {
	Do(ctx context.Context, p *reconcile.Prepared) (*outcome.Result, error)
}

// Config is what a Server needs. Engine and Ledger are required.
type Config struct {
	// Engine performs the write tools' actions; it is shared by every call
	// (it is safe for concurrent use and serialises calls of the same key
	// through the ledger).
	Engine Doer
	// Off has the proxy's calls of upstream tools without a kind once
	// (offgithub.ToolCall); NewProxy requires it, the server does not.
	Off *offgithub.Engine
	// Ledger answers ghonce_status and ghonce_key.
	Ledger ledger.Ledger
	// Task is the default task of a call that passes none: the server's
	// --task or GHONCE_TASK (or, when set up so, the Actions run's task).
	// Empty means every call must pass task.
	Task string
	// OnChange is what a write call does when its key is done but its
	// text differs (reconcile.OnChange*; "" is reconcile.OnChangeAuto: a
	// reworded retry gets the first artifact, another act a tool error
	// that asks for a new step). GHONCE_ON_CHANGE sets it.
	OnChange string
	// Version is reported to clients in the initialize handshake.
	Version string
	// Logf reports progress (to stderr; never to stdout, which carries the
	// protocol over stdio). Nil is silent.
	Logf func(format string, args ...any)
	// Metrics, if set, is told the write calls in flight; the engine's own
	// Metrics count its actions.
	Metrics *observe.Metrics
	// Tracer, if set, traces each tools/call as a server span joining the
	// client's trace (_meta.traceparent); the engine's Tracer, the same
	// one, traces the actions under it.
	Tracer *observe.Tracer
}

// defaults sets what c leaves unset: a silent Logf, Version "dev".
func (c *Config) defaults() {
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	c.Version = cmp.Or(c.Version, "dev")
}

// Server is ghonce's MCP server.
type Server struct {
	cfg Config
	srv *sdk.Server
	// calls counts write calls in flight, so that the server returns only
	// once each has recorded its outcome in the ledger.
	calls counter
	// stop, while ServeHTTP runs, is cancelled when its grace period ends:
	// the write calls still running are cancelled with it (begin).
	stopMu sync.Mutex
	stop   context.Context
}

// New returns a server with every tool registered.
func New(cfg Config) (*Server, error) {
	if cfg.Engine == nil || cfg.Ledger == nil {
		return nil, errors.New("new mcp server: engine and ledger are required")
	}
	cfg.defaults()
	s := &Server{cfg: cfg}
	s.srv = sdk.NewServer(&sdk.Implementation{Name: "ghonce", Title: "ghonce: GitHub writes that happen once", Version: cfg.Version}, &sdk.ServerOptions{
		Instructions: modelSays("instructions"),
	})
	s.srv.AddReceivingMiddleware(s.traceCalls, s.schemaErrors)
	s.observeGauges()
	if err := s.addWriteTools(); err != nil {
		return nil, fmt.Errorf("new mcp server: %w", err)
	}
	if err := s.addReadTools(); err != nil {
		return nil, fmt.Errorf("new mcp server: %w", err)
	}
	return s, nil
}

// SDK returns the underlying SDK server, to connect to any transport.
func (s *Server) SDK() *sdk.Server { return s.srv }

// ServeIO serves one client over r and w (the process's stdin and stdout)
// until r reaches end of file or ctx ends. Calls in flight when the input
// closes are finished (the ledger is written) before it returns.
//
// Every frame that is not a JSON-RPC 2.0 message is answered with the
// JSON-RPC error for it and skipped (frames.go): a client's bad line never
// ends the session.
func (s *Server) ServeIO(ctx context.Context, r io.Reader, w io.Writer) error {
	out := &lockedWriter{w: w}
	pr, pw := io.Pipe()
	go filterFrames(r, pw, out, MaxFrame)
	var tr sdk.Transport = &sdk.IOTransport{Reader: pr, Writer: out, MaxLineLength: -1}
	if s.cfg.Tracer != nil {
		tr = idTransport{tr}
	}
	err := s.srv.Run(ctx, tr)
	pr.Close() // a filter still copying stops at its next frame
	s.calls.wait()
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) {
		return nil
	}
	return fmt.Errorf("serve mcp over stdio: %w", err)
}

// task returns the call's task, else the server's default.
func (s *Server) task(given string) (string, error) {
	for _, t := range []string{given, s.cfg.Task} {
		if strings.TrimSpace(t) == "" {
			continue
		}
		// " T-1" and "T-1\n" are T-1 in keys, filters and output;
		// Prepare refuses "T-1\nT-2".
		return taskkey.CleanID(t), nil
	}
	return "", invalid(errors.New("no task: pass task (an id that names the work, e.g. the issue you are fixing), or start `ghonce mcp` with --task or GHONCE_TASK"))
}
