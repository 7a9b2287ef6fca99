package mcp

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions configure the Streamable HTTP transport.
type HTTPOptions struct {
	// Token, if set, is the bearer token every request to /mcp must carry
	// (Authorization: Bearer TOKEN), compared in constant time. Required
	// on an address that is not loopback (CheckAddress).
	Token string
	// Hosts are the Host header values (HOST or HOST:PORT) /mcp accepts
	// besides loopback names: the names clients and load balancers reach
	// this server by. A call naming another host is refused (403), so a
	// DNS-rebound name cannot reach the tools. Empty: loopback names only,
	// and the listening IP when it is a specific one. /healthz and /metrics
	// answer any Host.
	Hosts []string
	// Metrics, if set, is served at /metrics (Prometheus' text format).
	Metrics http.Handler
	// Ready reports whether the server can serve calls (its ledger
	// answers), for /healthz, and logs why not; nil: always. A probe waits
	// for it at most 5 seconds: it should answer from what it knows.
	Ready func(ctx context.Context) error
	// Grace bounds how long a stop waits for calls in flight (default 30s).
	// A call still running then is cancelled: the engine records it
	// unconfirmed (attempting), never half-recorded, and the next call of
	// the same task and step settles it.
	Grace time.Duration
}

// MinTokenLength is the shortest bearer token ServeHTTP accepts: 32
// characters, e.g. `openssl rand -hex 32` (64).
const MinTokenLength = 32

// CheckAddress refuses an --http address that is not IP:PORT (or
// localhost:PORT), and one that is not loopback unless authenticated: the
// server acts with the GitHub token's rights, so another machine may reach
// it only with a bearer token of its own.
func CheckAddress(addr string, authenticated bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return fmt.Errorf("invalid --http address %q: want HOST:PORT, e.g. 127.0.0.1:8765 (or 0.0.0.0:8765 with --auth-token-file)", addr)
	}
	if isLoopback(host) {
		return nil
	}
	if host != "" && net.ParseIP(host) == nil {
		return fmt.Errorf("invalid --http address %q: want an IP address, not a name (e.g. 0.0.0.0:%s); name the hosts clients use with --allowed-host", addr, port)
	}
	if !authenticated {
		return fmt.Errorf("invalid --http address %q: ghonce serves MCP over HTTP on a loopback address (127.0.0.1 or [::1]) only, unless clients must authenticate: "+
			"set --auth-token-file FILE or GHONCE_MCP_AUTH_TOKEN (a bearer token of at least %d characters, e.g. `openssl rand -hex 32`)", addr, MinTokenLength)
	}
	return nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Handler serves the Streamable HTTP transport at /mcp, with o's
// authentication, host and origin checks, and beside it /healthz and
// /metrics (when o.Metrics is set), which need neither a token nor a known
// Host: probes and scrapes reach a pod by its IP and carry no credentials
// a rebound name could borrow.
func (s *Server) Handler(o HTTPOptions) http.Handler {

	mux := http.NewServeMux()
	// The SDK refuses a request that reached a loopback address with a
	// Host that is not a loopback name (DNS rebinding); checkHost refuses
	// one whose Host is none of o.Hosts on any address.
	var mcpH http.Handler = sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.srv }, nil)
	if s.cfg.Tracer != nil {
		mcpH = tagRequestIDs(mcpH)
	}
	mcpH = checkOrigin(mcpH)
	if o.Token != "" {
		mcpH = requireToken(o.Token, mcpH)
	}
	mux.Handle("/mcp", checkHost(o.Hosts, mcpH))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if o.Ready != nil {
			ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
			defer cancel()
			if err := o.Ready(ctx); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				fmt.Fprintln(w, "the ledger does not answer") // its error may name a host; Ready logs it
				return
			}
		}
		fmt.Fprintln(w, "ok")
	})
	if o.Metrics != nil {
		mux.Handle("/metrics", o.Metrics)
	}
	return mux
}

// requireToken answers a request without the bearer token as RFC 6750
// says: 401 with WWW-Authenticate (error invalid_token for a wrong token),
// and a body that names the header to send; 400 invalid_request for a
// token in the query string (never accepted there) or a malformed header.
// The token is a static one, handed to clients out of band: no OAuth
// authorization server issues it, so no protected resource metadata (RFC
// 9728) is served or named, which the MCP authorization spec would require
// to list one. Nothing is read from X-Forwarded-* headers. The token is
// compared in constant time (of its SHA-256, so its length leaks nothing)
// and never logged or echoed.
func requireToken(token string, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		challenge := func(status int, code, desc string) {
			v := `Bearer realm="ghonce"`
			if code != "" {
				v += fmt.Sprintf(`, error="%s", error_description="%s"`, code, desc)
			}
			w.Header().Set("WWW-Authenticate", v)
			w.Header().Set("Cache-Control", "no-store")
			http.Error(w, http.StatusText(status)+": "+desc, status)
		}
		if r.URL.Query().Has("access_token") {
			challenge(http.StatusBadRequest, "invalid_request", "send the token in the Authorization header, never in the URL")
			return
		}
		h := r.Header.Values("Authorization")
		if len(h) == 0 {
			challenge(http.StatusUnauthorized, "", "this server requires a bearer token: send the header Authorization: Bearer TOKEN (the server's --auth-token-file)")
			return
		}
		scheme, got, ok := strings.Cut(h[0], " ")
		if len(h) > 1 || !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(got) == "" {
			challenge(http.StatusBadRequest, "invalid_request", "malformed Authorization header: want one Authorization: Bearer TOKEN")
			return
		}
		sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
		if subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			challenge(http.StatusUnauthorized, "invalid_token", "the bearer token is not this server's")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkHost refuses, with 403 (as the SDK's own DNS rebinding protection
// does on loopback), a request whose Host is
// neither a loopback name nor one of hosts (compared without case; an
// entry without a port accepts any port).
func checkHost(hosts []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hostAllowed(r.Host, hosts) {
			http.Error(w, "Forbidden: this server does not answer to that host name; list it with --allowed-host", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func hostAllowed(host string, hosts []string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.Trim(name, "[]")
	if isLoopback(name) {
		return true
	}
	for _, a := range hosts {
		if strings.EqualFold(a, host) || strings.EqualFold(strings.Trim(a, "[]"), name) {
			return true
		}
	}
	return false
}

// ServeHTTP listens on l and serves the Streamable HTTP transport with o
// until ctx ends. Then it stops gracefully: the listener closes at once,
// so a new connection (a probe, a call) is refused and a load balancer or
// a client goes to another replica; idle connections close, and calls in
// flight get o.Grace to finish; a call still
// running then is cancelled, which the engine records as unconfirmed
// (attempting) before ServeHTTP returns. No call is ever half-recorded:
// the ledger's entry is attempting or done, and the next call of the same
// task and step, on any replica sharing the ledger, settles it.
func (s *Server) ServeHTTP(ctx context.Context, l net.Listener, o HTTPOptions) error {
	if o.Token != "" && len(o.Token) < MinTokenLength {
		return fmt.Errorf("serve mcp over http: the bearer token has %d characters, want at least %d (e.g. `openssl rand -hex 32`)", len(o.Token), MinTokenLength)
	}
	if o.Grace <= 0 {
		o.Grace = 30 * time.Second
	}
	if tcp, ok := l.Addr().(*net.TCPAddr); ok && tcp.IP != nil && !tcp.IP.IsUnspecified() && !tcp.IP.IsLoopback() {
		o.Hosts = append(o.Hosts, tcp.IP.String())
	}
	var posts counter
	stop, stopCalls := context.WithCancel(context.Background())
	defer stopCalls()
	s.stopMu.Lock()
	s.stop = stop
	s.stopMu.Unlock()
	defer func() { s.stopMu.Lock(); s.stop = nil; s.stopMu.Unlock() }()
	// Requests run on a context of their own: a stop never cancels a call
	// that can finish; the end of its grace period does (stopCalls).
	hs := &http.Server{Handler: posts.track(s.Handler(o)), ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(l) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve mcp over http: %w", err)
	case <-ctx.Done():
	}
	s.cfg.Logf("stopping: letting calls in flight finish (up to %s)", o.Grace)
	grace, cancel := context.WithTimeout(context.Background(), o.Grace)
	defer cancel()
	// Shutdown closes the listener and idle connections, then waits for the
	// others; an open event stream (GET /mcp) never idles, so what is
	// waited for is the write calls and the answers to every POST, and the
	// connections left (event streams) are closed after.
	shut := make(chan error, 1)
	go func() { shut <- hs.Shutdown(grace) }()
	finished := make(chan struct{})
	go func() { s.calls.wait(); posts.wait(); close(finished) }()
	select {
	case <-finished:
	case <-grace.Done():
		s.cfg.Logf("stopping: calls still running after %s are cancelled and left unconfirmed; calling again settles them", o.Grace)
		stopCalls()
		s.calls.wait() // each records its end (unconfirmed) on a context of its own
	}
	_ = hs.Close()
	if err := <-shut; err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shut down mcp http server: %w", err)
	}
	return nil
}

// counter counts what is in flight (write calls; requests other than
// event streams), for a stop to wait on. Unlike a WaitGroup, it may grow
// while it is waited on (a request on a kept-alive connection).
type counter struct {
	mu   sync.Mutex
	n    int
	idle *sync.Cond
}

func (c *counter) add() {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
}

func (c *counter) done() {
	c.mu.Lock()
	c.n--
	if c.n == 0 && c.idle != nil {
		c.idle.Broadcast()
	}
	c.mu.Unlock()
}

func (c *counter) load() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// wait returns when nothing is in flight.
func (c *counter) wait() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.idle == nil {
		c.idle = sync.NewCond(&c.mu)
	}
	for c.n > 0 {
		c.idle.Wait()
	}
}

// track counts the requests being answered that are not event streams
// (every method but GET), so a stop waits for their answers to be written.
func (c *counter) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			c.add()
			defer c.done()
		}
		next.ServeHTTP(w, r)
	})
}
