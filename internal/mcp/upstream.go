package mcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Upstream is the MCP server a proxy stands in front of: a command started
// as a child that speaks MCP on its stdin and stdout (for example
// `github-mcp-server stdio`).
type Upstream struct {
	// Command is the program and its arguments. Required.
	Command []string
	// Env is the child's environment (nil: ghonce's own).
	Env []string
	// Stderr receives the child's standard error, each line prefixed with
	// "upstream: ". Nil discards it.
	Stderr io.Writer
	// StartTimeout bounds the start of the child and MCP's initialize
	// handshake; default 30 seconds. A child that has not answered by then
	// is not an MCP server on stdio.
	StartTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait before a restart of a child
	// that died: MinBackoff after the first death (or one that ran a minute
	// or more), doubling with each restart of a child that died sooner, at
	// most MaxBackoff. Defaults 100 ms and 10 s.
	MinBackoff, MaxBackoff time.Duration
}

// UpstreamError is an upstream that could not be started: not found
// (Usage: the CLI's exit 2), exited at once, or did not speak MCP (exit 1).
type UpstreamError struct {
	Command  []string
	NotFound bool
	Err      error
}

func (e *UpstreamError) Error() string {
	return fmt.Sprintf("upstream %q: %v", strings.Join(e.Command, " "), e.Err)
}
func (e *UpstreamError) Unwrap() error { return e.Err }

// Usage marks an upstream that is not found as bad input for clierr.
func (e *UpstreamError) Usage() bool { return e.NotFound }

// child runs the upstream and keeps one client session to it, restarting
// the child when it dies.
type child struct {
	up     Upstream
	client *sdk.Client
	logf   func(string, ...any)
	// onRestart runs after each restart, once the new session is up (the
	// proxy lists the tools again).
	onRestart func(context.Context)

	mu sync.Mutex
	cs *sdk.ClientSession // nil while the child restarts
	// changed is closed, and replaced, whenever cs changes.
	changed chan struct{}
	closed  bool
	stop    context.CancelFunc
}

// The defaults of Upstream's StartTimeout, MinBackoff and MaxBackoff.
const (
	DefaultStartTimeout = 30 * time.Second
	DefaultMinBackoff   = 100 * time.Millisecond
	DefaultMaxBackoff   = 10 * time.Second
)

func newChild(up Upstream, client *sdk.Client, logf func(string, ...any)) *child {
	if up.StartTimeout <= 0 {
		up.StartTimeout = DefaultStartTimeout
	}
	if up.MinBackoff <= 0 {
		up.MinBackoff = DefaultMinBackoff
	}
	if up.MaxBackoff <= 0 {
		up.MaxBackoff = DefaultMaxBackoff
	}
	return &child{up: up, client: client, logf: logf, changed: make(chan struct{})}
}

// start starts the child and completes the handshake; on success it keeps
// the child running (restarting it when it dies) until close.
func (c *child) start(ctx context.Context) error {
	cs, err := c.connect(ctx)
	if err != nil {
		return err
	}
	run, stop := context.WithCancel(context.Background())
	c.mu.Lock()
	c.stop = stop
	c.setLocked(cs)
	c.mu.Unlock()
	go c.watch(run, cs)
	return nil
}

// connect starts one child and completes MCP's initialize with it.
func (c *child) connect(ctx context.Context) (*sdk.ClientSession, error) {
	if len(c.up.Command) == 0 || c.up.Command[0] == "" {
		return nil, &UpstreamError{Command: c.up.Command, NotFound: true, Err: errors.New("no command: pass it after --, e.g. ghonce mcp --upstream -- github-mcp-server stdio")}
	}
	path, err := exec.LookPath(c.up.Command[0])
	if err != nil {
		return nil, &UpstreamError{Command: c.up.Command, NotFound: true, Err: fmt.Errorf("not found: %w", err)}
	}
	cmd := exec.Command(path, c.up.Command[1:]...)
	cmd.Env = c.up.Env
	tail := &tailBuffer{max: 2048}
	cmd.Stderr = &prefixWriter{w: c.up.Stderr, prefix: "upstream: ", tail: tail}
	ctx, cancel := context.WithTimeout(ctx, c.up.StartTimeout)
	defer cancel()
	cs, err := c.client.Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	if err == nil {
		return cs, nil
	}
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
	why := err
	switch {
	case ctx.Err() != nil:
		why = fmt.Errorf("did not complete MCP's initialize within %s: is it an MCP server on stdio (github-mcp-server needs the argument stdio)?", c.up.StartTimeout)
	case cmd.ProcessState != nil:
		why = fmt.Errorf("exited (%s) before completing MCP's initialize", cmd.ProcessState)
	default:
		why = fmt.Errorf("did not complete MCP's initialize: %w", err)
	}
	if t := strings.TrimSpace(tail.String()); t != "" {
		why = fmt.Errorf("%w; its stderr ended: %s", why, t)
	}
	return nil, &UpstreamError{Command: c.up.Command, Err: why}
}

// watch restarts the child each time it dies, with bounded backoff: the
// wait starts at MinBackoff, doubles with each restart of a child that ran
// less than a minute, and is at most MaxBackoff.
func (c *child) watch(ctx context.Context, cs *sdk.ClientSession) {
	backoff, started := c.up.MinBackoff, time.Now()
	for {
		_ = cs.Wait()
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return
		}
		c.setLocked(nil)
		c.mu.Unlock()
		if time.Since(started) > time.Minute {
			backoff = c.up.MinBackoff
		}
		for {
			c.logf("upstream %q exited; restarting in %s", c.up.Command[0], backoff)
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			next, err := c.connect(ctx)
			backoff = min(2*backoff, c.up.MaxBackoff)
			if err == nil {
				cs = next
				break
			}
			c.logf("restart upstream: %v", err)
		}
		started = time.Now()
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			_ = cs.Close()
			return
		}
		c.setLocked(cs)
		c.mu.Unlock()
		if c.onRestart != nil {
			c.onRestart(ctx)
		}
	}
}

// setLocked makes cs the live session and wakes whoever waits for one.
func (c *child) setLocked(cs *sdk.ClientSession) {
	c.cs = cs
	close(c.changed)
	c.changed = make(chan struct{})
}

// session returns the live session, waiting for a restart to finish.
func (c *child) session(ctx context.Context) (*sdk.ClientSession, error) {
	return c.sessionOtherThan(ctx, nil)
}

// sessionOtherThan is session, but waits for one other than dead: the
// session a call just saw close, which the watcher may not have noticed
// yet.
func (c *child) sessionOtherThan(ctx context.Context, dead *sdk.ClientSession) (*sdk.ClientSession, error) {
	for {
		c.mu.Lock()
		cs, changed, closed := c.cs, c.changed, c.closed
		c.mu.Unlock()
		if closed {
			return nil, errors.New("upstream is closed")
		}
		if cs != nil && cs != dead {
			return cs, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("upstream %q is restarting: %w", c.up.Command[0], ctx.Err())
		}
	}
}

// close stops the child and its restarts.
func (c *child) close() error {
	c.mu.Lock()
	c.closed = true
	cs, stop := c.cs, c.stop
	c.mu.Unlock()
	if stop != nil {
		stop()
	}
	if cs != nil {
		return cs.Close()
	}
	return nil
}

// prefixWriter writes each line to w with prefix, and keeps a tail.
type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	tail   *tailBuffer
	part   []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.tail.Write(b)
	p.part = append(p.part, b...)
	for {
		i := bytes.IndexByte(p.part, '\n')
		if i < 0 {
			break
		}
		if p.w != nil {
			_, _ = fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.part[:i])
		}
		p.part = p.part[i+1:]
	}
	if len(p.part) > 64<<10 { // a line that never ends is written in pieces
		if p.w != nil {
			_, _ = fmt.Fprintf(p.w, "%s%s\n", p.prefix, p.part)
		}
		p.part = nil
	}
	return len(b), nil
}

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
