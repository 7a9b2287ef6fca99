package mcp_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/fakegithub"
	"github.com/ghonce/ghonce/internal/mcp"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/observe"
	"github.com/ghonce/ghonce/observe/otlptest"
)

const bearer = "ghonce-mcp-test-bearer-0123456789abcdef"

// withBearer sends Authorization: Bearer token with every request.
type withBearer struct{ token string }

func (b withBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens an MCP session over Streamable HTTP at url, sending token
// when it is not empty.
func connect(t *testing.T, url, token string) (*sdk.ClientSession, error) {
	t.Helper()
	hc := &http.Client{}
	if token != "" {
		hc.Transport = withBearer{token}
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "http-test", Version: "1"}, nil).
		Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: url + "/mcp", HTTPClient: hc}, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

func get(t *testing.T, url string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// postMCP sends one JSON-RPC request to /mcp with the given Authorization
// (none when empty), query and headers (name, value, ...).
func postMCP(t *testing.T, url, query, auth string, hdr ...string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/mcp"+query, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// With a token, /mcp answers only a client that sends it, as RFC 6750
// says (401 with a Bearer challenge and a body naming the header to send;
// invalid_token for a wrong one; 400 for a token in the URL or a malformed
// header). The token is static, issued by no OAuth server, so no protected
// resource metadata is served or named (the MCP authorization spec would
// require it to list an authorization server), and nothing an
// X-Forwarded-* header says reaches an answer. /healthz and /metrics need
// no token. The token appears in no answer.
func TestHTTPBearerToken(t *testing.T) {
	w := newWorld(t, opts{})
	ts := httptest.NewServer(w.srv.Handler(mcp.HTTPOptions{Token: bearer}))
	t.Cleanup(ts.Close)
	for _, tc := range []struct {
		name, query, auth string
		status            int
		challenge         string // WWW-Authenticate
	}{
		{"no token", "", "", 401, `Bearer realm="ghonce"`},
		{"wrong token", "", "Bearer " + strings.Repeat("x", len(bearer)), 401, `Bearer realm="ghonce", error="invalid_token"`},
		{"a prefix of the token", "", "Bearer " + bearer[:20], 401, `Bearer realm="ghonce", error="invalid_token"`},
		{"token in the query", "?access_token=" + bearer, "Bearer " + bearer, 400, `Bearer realm="ghonce", error="invalid_request"`},
		{"basic auth", "", "Basic Zm9vOmJhcg==", 400, `Bearer realm="ghonce", error="invalid_request"`},
		{"scheme only", "", "Bearer", 400, `Bearer realm="ghonce", error="invalid_request"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, h, body := postMCP(t, ts.URL, tc.query, tc.auth, "X-Forwarded-Proto", "https", "X-Forwarded-Host", "forged.example")
			if ch := h.Get("WWW-Authenticate"); status != tc.status || !strings.HasPrefix(ch, tc.challenge) || strings.Contains(ch, "resource_metadata") {
				t.Fatalf("status %d, WWW-Authenticate %q; want %d with %s and no resource metadata", status, ch, tc.status, tc.challenge)
			}
			if tc.status == 401 && tc.auth == "" && !strings.Contains(body, "Authorization: Bearer TOKEN") {
				t.Fatalf("the 401 does not say which header to send: %q", body)
			}
			if strings.Contains(body+fmt.Sprint(h), bearer) || strings.Contains(body+fmt.Sprint(h), "forged.example") {
				t.Fatalf("the answer shows the token or a forwarded host: %s %v", body, h)
			}
		})
	}
	if _, err := connect(t, ts.URL, ""); err == nil {
		t.Fatal("a client without the token connected")
	}
	cs, err := connect(t, ts.URL, bearer)
	if err != nil {
		t.Fatalf("a client with the token: %v", err)
	}
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "create_issue", Arguments: args("title", "Over HTTP")})
	if err != nil || res.IsError {
		t.Fatalf("create_issue with the token: %v %+v", err, res)
	}
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		if status, _, body := get(t, ts.URL+path); status != http.StatusNotFound {
			t.Fatalf("%s: %d %s, want 404: no OAuth server issues the token", path, status, body)
		}
	}
	if status, _, body := get(t, ts.URL+"/healthz"); status != 200 || strings.TrimSpace(body) != "ok" {
		t.Fatalf("/healthz without a token: %d %q, want 200 ok", status, body)
	}
}

// /mcp answers loopback names, the names given and nothing else (a
// DNS-rebound name), and refuses a foreign Origin; /healthz and /metrics
// answer any Host, as Kubernetes' probes and Prometheus' scrapes send the
// pod's IP.
func TestHTTPHostsAndOrigin(t *testing.T) {
	w := newWorld(t, opts{})
	m := observe.NewMetrics()
	ts := httptest.NewServer(w.srv.Handler(mcp.HTTPOptions{Token: bearer, Hosts: []string{"ghonce.internal", "10.0.0.7:8765"}, Metrics: m.Handler()}))
	t.Cleanup(ts.Close)
	for host, want := range map[string]int{
		"ghonce.internal": 200, "GHONCE.internal:8765": 200, "10.0.0.7:8765": 200, "localhost:1": 200,
		"10.0.0.7:9999": 403, "attacker.example": 403, "ghonce.internal.attacker.example": 403, "10.42.0.17:8765": 403,
	} {
		req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+bearer)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		// This test's server listens on loopback, where the SDK refuses
		// any name but a loopback one itself: what is ghonce's own check
		// is its 403 naming --allowed-host.
		if refused := strings.Contains(string(b), "--allowed-host"); refused != (want == 403) {
			t.Errorf("POST /mcp with Host %s: %d %q; want refused by ghonce's host check: %v", host, resp.StatusCode, b, want == 403)
		}
	}
	for _, path := range []string{"/healthz", "/metrics"} {
		for _, host := range []string{"10.42.0.17:8765", "attacker.example"} {
			if status, _, _ := get(t, ts.URL+path, "Host", host); status != 200 {
				t.Errorf("%s with Host %s (a probe or a scrape by IP): %d, want 200", path, host, status)
			}
		}
	}
	req, _ := http.NewRequest("POST", ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer "+bearer)
	req.Header.Set("Origin", "https://attacker.example")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Fatalf("a foreign Origin with the token: %d, want 403", resp.StatusCode)
	}
}

func TestCheckAddress(t *testing.T) {
	for _, tc := range []struct {
		addr     string
		auth, ok bool
	}{
		{"127.0.0.1:8765", false, true}, {"[::1]:8765", false, true}, {"localhost:8765", false, true},
		{"0.0.0.0:8765", false, false}, {":8765", false, false}, {"192.168.1.2:8765", false, false},
		{"0.0.0.0:8765", true, true}, {":8765", true, true}, {"192.168.1.2:8765", true, true}, {"[::]:8765", true, true},
		{"127.0.0.1", true, false}, {"example.com:80", true, false},
	} {
		if err := mcp.CheckAddress(tc.addr, tc.auth); (err == nil) != tc.ok {
			t.Errorf("CheckAddress(%q, authenticated %v) = %v, want ok %v", tc.addr, tc.auth, err, tc.ok)
		}
	}
}

// /metrics, scraped as Prometheus does: actions by kind and outcome,
// GitHub requests and content writes; no label carries a key, a task or a
// repository.
func TestHTTPMetrics(t *testing.T) {
	m := observe.NewMetrics()
	w := newWorld(t, opts{metrics: m})
	ts := httptest.NewServer(w.srv.Handler(mcp.HTTPOptions{Metrics: m.Handler()}))
	t.Cleanup(ts.Close)
	first, _ := w.ok("create_issue", args("title", "Flaky"))
	w.ok("create_issue", args("title", "Flaky"))
	status, h, body := get(t, ts.URL+"/metrics")
	if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("/metrics: %d %s", status, h.Get("Content-Type"))
	}
	for _, want := range []string{
		`ghonce_actions_total{kind="issue",outcome="created"} 1`,
		`ghonce_actions_total{kind="issue",outcome="skipped"} 1`,
		`ghonce_github_requests_total{method="POST",code="201"} `,
		`ghonce_github_content_writes_total `,
		`ghonce_mcp_calls_in_flight 0`,
		`# TYPE ghonce_action_duration_seconds histogram`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	for _, never := range []string{first.Key, task, repo, name} {
		if strings.Contains(body, never) {
			t.Errorf("/metrics shows %q (a key, task or repository)", never)
		}
	}
}

// tracing is a tracer that exports to a loopback OTLP receiver.
func tracing(t *testing.T) (*observe.Tracer, *otlptest.Receiver) {
	t.Helper()
	rcv := otlptest.New(t)
	tr, err := observe.TracerFromEnv(func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL()}[k]
	}, observe.TracerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr, rcv
}

// A call's trace: the MCP server span joins the client's trace from
// _meta.traceparent; the action, its ledger calls and its GitHub requests
// descend from it, with the MCP and GenAI conventions' attributes.
func TestTraceJoinsTheClientsTrace(t *testing.T) {
	tr, rcv := tracing(t)
	w := newWorld(t, opts{tracer: tr})
	const traceID, clientSpan = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	res, err := w.cs.CallTool(context.Background(), &sdk.CallToolParams{
		Meta: sdk.Meta{"traceparent": "00-" + traceID + "-" + clientSpan + "-01", "gen_ai.tool.call.id": "call_7"},
		Name: "create_issue", Arguments: args("title", "Traced")})
	if err != nil || res.IsError {
		t.Fatalf("create_issue: %v %+v", err, res)
	}
	tr.Shutdown(context.Background())
	spans := rcv.Spans()
	var server, action otlptest.Span
	byParent := map[string][]otlptest.Span{}
	for _, s := range spans {
		if s.Kind == 2 && s.Name != "tools/call create_issue" {
			continue // the session's other requests, each a trace of its own
		}
		if s.TraceID != traceID {
			t.Errorf("span %s in trace %s, want the client's %s", s.Name, s.TraceID, traceID)
		}
		byParent[s.ParentSpanID] = append(byParent[s.ParentSpanID], s)
		switch s.Name {
		case "tools/call create_issue":
			server = s
		case "ghonce issue":
			action = s
		}
	}
	if server.ParentSpanID != clientSpan || server.Kind != 2 || server.Attr("mcp.method.name") != "tools/call" ||
		server.Attr("gen_ai.operation.name") != "execute_tool" || server.Attr("gen_ai.tool.name") != "create_issue" ||
		server.Attr("gen_ai.tool.call.id") != "call_7" {
		t.Fatalf("server span %+v", server)
	}
	if action.ParentSpanID != server.SpanID || action.Attr("ghonce.kind") != "issue" || action.Attr("ghonce.outcome") != "created" ||
		!strings.HasPrefix(action.Attr("ghonce.key"), "gk1_") || action.Attr("ghonce.repository") != repo || action.Attr("ghonce.task") != task {
		t.Fatalf("action span %+v", action)
	}
	var ledgerOps, posts []string
	for _, c := range byParent[action.SpanID] {
		switch {
		case strings.HasPrefix(c.Name, "ledger "):
			ledgerOps = append(ledgerOps, c.Attr("db.operation.name"))
		case c.Kind == 3 && c.Attr("http.request.method") == "POST":
			posts = append(posts, c.Attr("url.full")+" "+c.Attr("http.response.status_code"))
		}
	}
	if !strings.Contains(strings.Join(ledgerOps, " "), "claim") || !strings.Contains(strings.Join(ledgerOps, " "), "finish") {
		t.Errorf("the action's ledger calls %v, want claim and finish among them", ledgerOps)
	}
	if len(posts) == 0 || !strings.Contains(strings.Join(posts, " "), "/issues 201") {
		t.Errorf("the action's POSTs %v, want the issue's create (201)", posts)
	}
}

// Every request a session makes is a server span after OpenTelemetry's MCP
// conventions, not only tool calls: initialize (or server/discover), tools/list
// and tools/call TOOL, each with mcp.method.name, jsonrpc.request.id (the request's own
// id; a client's header claiming one is ignored), mcp.protocol.version and,
// over HTTP, mcp.session.id; network.transport tcp over HTTP, pipe over
// stdio.
func TestSpansFollowMCPConventions(t *testing.T) {
	for _, transport := range []string{"tcp", "pipe"} {
		t.Run(transport, func(t *testing.T) {
			tr, rcv := tracing(t)
			w := newWorld(t, opts{tracer: tr})
			client := sdk.NewClient(&sdk.Implementation{Name: "conventions-test", Version: "1"}, nil)
			var ct sdk.Transport
			if transport == "tcp" {
				ts := httptest.NewServer(w.srv.Handler(mcp.HTTPOptions{}))
				t.Cleanup(ts.Close)
				ct = &sdk.StreamableClientTransport{Endpoint: ts.URL + "/mcp", HTTPClient: &http.Client{Transport: forgedID{}}}
			} else {
				inR, inW := io.Pipe()
				outR, outW := io.Pipe()
				ctx, cancel := context.WithCancel(context.Background())
				done := make(chan error, 1)
				go func() { done <- w.srv.ServeIO(ctx, inR, outW) }()
				t.Cleanup(func() { inW.Close(); <-done; cancel(); outW.Close() })
				ct = &sdk.IOTransport{Reader: outR, Writer: inW}
			}
			cs, err := client.Connect(context.Background(), ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cs.ListTools(context.Background(), nil); err != nil {
				t.Fatal(err)
			}
			if res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "create_issue", Arguments: args("title", "Conventions")}); err != nil || res.IsError {
				t.Fatalf("create_issue: %v %+v", err, res)
			}
			if _, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "no_such_tool"}); err == nil {
				t.Fatal("an unknown tool was called")
			}
			session, version := cs.ID(), ""
			if ir := cs.InitializeResult(); ir != nil {
				version = ir.ProtocolVersion
			}
			cs.Close()
			tr.Shutdown(context.Background())
			byName := map[string]otlptest.Span{}
			for _, s := range rcv.Spans() {
				if s.Kind == 2 {
					byName[s.Name] = s
				}
			}
			// The handshake: initialize, or server/discover for a client
			// on MCP 2026-07-28 (the Go SDK's over stdio), which has none.
			handshake := "initialize"
			if _, ok := byName[handshake]; !ok {
				handshake = "server/discover"
			}
			ids := map[string]bool{}
			for _, name := range []string{handshake, "tools/list", "tools/call create_issue"} {
				s, ok := byName[name]
				method, _, _ := strings.Cut(name, " ")
				switch {
				case !ok:
					t.Fatalf("no server span %q among %v", name, keys(byName))
				case s.Attr("mcp.method.name") != method || s.Attr("network.transport") != transport:
					t.Errorf("%s: mcp.method.name %q, network.transport %q", name, s.Attr("mcp.method.name"), s.Attr("network.transport"))
				case s.Attr("jsonrpc.request.id") == "" || s.Attr("jsonrpc.request.id") == "forged" || ids[s.Attr("jsonrpc.request.id")]:
					t.Errorf("%s: jsonrpc.request.id %q, want the request's own, one per request", name, s.Attr("jsonrpc.request.id"))
				case !strings.HasPrefix(s.Attr("mcp.protocol.version"), "20") || version != "" && s.Attr("mcp.protocol.version") != version:
					t.Errorf("%s: mcp.protocol.version %q, want the one agreed (%q)", name, s.Attr("mcp.protocol.version"), version)
				case transport == "tcp" && (session == "" || s.Attr("mcp.session.id") != session):
					t.Errorf("%s: mcp.session.id %q, want the session's %q", name, s.Attr("mcp.session.id"), session)
				}
				ids[s.Attr("jsonrpc.request.id")] = true
			}
			if e := byName["tools/call no_such_tool"]; e.StatusCode != 2 || !strings.HasPrefix(e.Attr("error.type"), "-326") || e.Attr("rpc.response.status_code") != e.Attr("error.type") {
				t.Errorf("a JSON-RPC error: %+v, want status error, error.type and rpc.response.status_code its code", e)
			}
			if n := byName["notifications/initialized"]; handshake == "initialize" && (n.Name == "" || n.Attr("jsonrpc.request.id") != "") {
				t.Errorf("notifications/initialized: %+v, want a span with no request id (a notification has none)", n)
			}
		})
	}
}

// forgedID sends a header claiming a request id, which the server ignores.
type forgedID struct{}

func (forgedID) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Ghonce-Jsonrpc-Request-Id", "forged")
	r.Header.Set("Ghonce-Transport", "pipe")
	return http.DefaultTransport.RoundTrip(r)
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// closeSignal is a listener that says when it was closed.
type closeSignal struct {
	net.Listener
	once   sync.Once
	closed chan struct{}
}

func (l *closeSignal) Close() error {
	err := l.Listener.Close()
	l.once.Do(func() { close(l.closed) })
	return err
}

// serve runs ServeHTTP on a loopback listener until the returned stop is
// called; stop returns ServeHTTP's error.
func serve(t *testing.T, s *mcp.Server, o mcp.HTTPOptions) (url string, stop func() error) {
	url, stop, _ = serveSignalled(t, s, o)
	return url, stop
}

// serveSignalled is serve, with a channel closed when the server closes
// its listener.
func serveSignalled(t *testing.T, s *mcp.Server, o mcp.HTTPOptions) (url string, stop func() error, closed <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := &closeSignal{Listener: ln, closed: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeHTTP(ctx, l, o) }()
	var once sync.Once
	var served error
	stop = func() error {
		once.Do(func() { cancel(); served = <-done })
		return served
	}
	t.Cleanup(func() { _ = stop() })
	return "http://" + l.Addr().String(), stop, l.closed
}

// A stop while a call is in flight lets it finish: the client gets the
// artifact and the ledger has it done before ServeHTTP returns. Meanwhile
// the server takes no new connection: a probe or a new call is refused at
// once, so a load balancer, Kubernetes or the client goes elsewhere.
func TestHTTPStopLetsCallsFinish(t *testing.T) {
	w := newWorld(t, opts{})
	url, stop, closed := serveSignalled(t, w.srv, mcp.HTTPOptions{Grace: time.Minute})
	cs, err := connect(t, url, "")
	if err != nil {
		t.Fatal(err)
	}
	committed, release := make(chan struct{}), make(chan struct{})
	w.fake.OnCommit(func(c *fixtures.Commit) {
		if c.Kind == fakegithub.KindIssue {
			close(committed)
			<-release
		}
	})
	type answer struct {
		res *sdk.CallToolResult
		err error
	}
	got := make(chan answer, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "create_issue", Arguments: args("title", "In flight")})
		got <- answer{res, err}
	}()
	<-committed
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	<-closed
	if c, err := net.Dial("tcp", strings.TrimPrefix(url, "http://")); err == nil {
		c.Close()
		t.Error("a new connection was accepted while the server was stopping")
	}
	close(release)
	a := <-got
	if a.err != nil || a.res.IsError {
		t.Fatalf("the call in flight during the stop: %v %+v, want its result", a.err, a.res)
	}
	if err := <-stopped; err != nil {
		t.Fatalf("ServeHTTP: %v", err)
	}
	es, err := w.ledger.List(context.Background(), ledger.ListParams{})
	if err != nil || len(es) != 1 || es[0].Status != ledger.Done {
		t.Fatalf("ledger after the stop: %+v %v, want one entry done", es, err)
	}
}

// A call still running when the grace period ends is cancelled and left
// unconfirmed (attempting), never half-recorded; the same call later
// finds what GitHub made: one issue.
func TestHTTPStopAfterGraceLeavesCallsUnconfirmed(t *testing.T) {
	w := newWorld(t, opts{})
	url, stop := serve(t, w.srv, mcp.HTTPOptions{Grace: 50 * time.Millisecond})
	cs, err := connect(t, url, "")
	if err != nil {
		t.Fatal(err)
	}
	committed, release := make(chan struct{}), make(chan struct{})
	w.fake.OnCommit(func(c *fixtures.Commit) {
		if c.Kind == fakegithub.KindIssue {
			close(committed)
			<-release
		}
	})
	go func() {
		_, _ = cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "create_issue", Arguments: args("title", "Stuck")})
	}()
	<-committed
	if err := stop(); err != nil { // returns once the cancelled call is recorded
		t.Fatalf("ServeHTTP: %v", err)
	}
	close(release)
	w.fake.OnCommit(nil)
	es, err := w.ledger.List(context.Background(), ledger.ListParams{})
	if err != nil || len(es) != 1 || es[0].Status != ledger.Attempting {
		t.Fatalf("ledger after the stop: %+v %v, want one entry attempting", es, err)
	}
	out, _ := w.ok("create_issue", args("title", "Stuck, again"))
	if out.Outcome != "found" || len(w.fake.Issues(owner, name)) != 1 {
		t.Fatalf("the same call after the stop: %+v, %d issues; want found, 1", out, len(w.fake.Issues(owner, name)))
	}
}
