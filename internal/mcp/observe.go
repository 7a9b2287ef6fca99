package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/observe"
)

// traceCalls makes each request and notification the server receives a
// server span, named and described after OpenTelemetry's MCP conventions
// (semantic-conventions-genai, docs/gen-ai/mcp.md): "METHOD" or "METHOD
// TARGET" (tools/call create_issue, prompts/get NAME), mcp.method.name,
// jsonrpc.request.id, mcp.protocol.version, mcp.session.id,
// network.transport; for tools/call the GenAI attributes
// (gen_ai.operation.name execute_tool, gen_ai.tool.name, and
// gen_ai.tool.call.id from _meta, where a client puts its model's tool call
// id). It joins the client's trace when the request's _meta carries a W3C
// traceparent. A JSON-RPC error is the span's error, error.type its code
// (rpc.response.status_code too); a tool's error is error.type tool_error.
// A tool call's action, its ledger calls and its GitHub requests are its
// descendants.
func (s *Server) traceCalls(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		t := s.cfg.Tracer
		if t == nil {
			return next(ctx, method, req)
		}
		var meta map[string]any
		if p := req.GetParams(); p != nil && !reflect.ValueOf(p).IsNil() {
			meta = p.GetMeta()
		}
		if tp, _ := meta["traceparent"].(string); tp != "" {
			if sc, ok := observe.ParseTraceparent(tp); ok {
				ctx = observe.ContextWithRemote(ctx, sc)
			}
		}
		name, attrs := method, []observe.Attr{observe.String("mcp.method.name", method)}
		switch p := req.GetParams().(type) {
		case *sdk.CallToolParamsRaw:
			name += " " + p.Name
			attrs = append(attrs, observe.String("gen_ai.operation.name", "execute_tool"), observe.String("gen_ai.tool.name", p.Name))
			if id, _ := meta["gen_ai.tool.call.id"].(string); id != "" {
				attrs = append(attrs, observe.String("gen_ai.tool.call.id", id))
			}
		case *sdk.GetPromptParams:
			name += " " + p.Name
			attrs = append(attrs, observe.String("gen_ai.prompt.name", p.Name))
		}
		ex := req.GetExtra()
		if ex != nil && ex.Header.Get(requestIDHeader) != "" {
			attrs = append(attrs, observe.String("jsonrpc.request.id", ex.Header.Get(requestIDHeader)))
		}
		// The version agreed: over HTTP each request after initialize names
		// it (MCP-Protocol-Version); else the session's, or the request's
		// _meta on MCP 2026-07-28.
		pv := ""
		if ex != nil {
			pv = ex.Header.Get("Mcp-Protocol-Version")
		}
		if v, ok := req.(interface{ ProtocolVersion() string }); ok && pv == "" {
			pv = v.ProtocolVersion()
		}
		if pv != "" {
			attrs = append(attrs, observe.String("mcp.protocol.version", pv))
		}
		if ss := req.GetSession(); ss != nil && ss.ID() != "" {
			attrs = append(attrs, observe.String("mcp.session.id", ss.ID()))
		}
		if ex != nil && ex.Header != nil && ex.Header.Get(transportHeader) == "" {
			attrs = append(attrs, observe.String("network.transport", "tcp"), observe.String("network.protocol.name", "http"))
		} else {
			attrs = append(attrs, observe.String("network.transport", "pipe"))
		}
		ctx, sp := t.Start(ctx, name, observe.Server, attrs...)
		res, err := next(ctx, method, req)
		if ir, ok := res.(*sdk.InitializeResult); ok && ir != nil {
			sp.Set(observe.String("mcp.protocol.version", ir.ProtocolVersion)) // the one agreed
		}
		switch tr, _ := res.(*sdk.CallToolResult); {
		case err != nil:
			code := 0
			if we := (*jsonrpc.Error)(nil); errors.As(err, &we) {
				code = int(we.Code)
			}
			sp.Set(observe.String("rpc.response.status_code", strconv.Itoa(code)))
			kind := "_OTHER"
			if code != 0 {
				kind = strconv.Itoa(code)
			}
			sp.Fail(kind, err.Error())
		case tr != nil && tr.IsError:
			msg := ""
			for _, c := range tr.Content {
				if tc, ok := c.(*sdk.TextContent); ok {
					msg = tc.Text
					break
				}
			}
			sp.Fail("tool_error", msg)
		}
		sp.End()
		return res, err
	}
}

// The JSON-RPC id of a request reaches traceCalls in a header of its own
// (the SDK hands a method handler the HTTP request's headers, never the
// id): tagRequestIDs sets it over HTTP, idTransport over stdio, with
// transportHeader saying it came by a pipe. A client's own headers of
// these names are dropped.
const (
	requestIDHeader = "Ghonce-Jsonrpc-Request-Id"
	transportHeader = "Ghonce-Transport"
)

// tagRequestIDs reads the JSON-RPC id of a POSTed message into
// requestIDHeader, for traceCalls.
func tagRequestIDs(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Del(requestIDHeader)
		r.Header.Del(transportHeader)
		if r.Method == http.MethodPost && r.Body != nil {
			b, err := io.ReadAll(r.Body)
			r.Body.Close()
			r.Body = io.NopCloser(bytes.NewReader(b))
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if err == nil && json.Unmarshal(b, &m) == nil {
				if id := idString(m.ID); id != "" {
					r.Header.Set(requestIDHeader, id)
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// idString is a JSON-RPC id as the conventions record it: a string's
// value, a number's text; "" for none or null.
func idString(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil || v == nil {
		return ""
	}
	if s, ok := v.(string); ok {
		return s
	}
	return string(bytes.TrimSpace(raw))
}

// idTransport is a stdio transport whose requests carry their id to
// traceCalls (requestIDHeader). Its connection hides the SDK's session
// updates from the one it wraps, which use them only to refuse JSON-RPC
// batches; filterFrames refuses those before the SDK reads them.
type idTransport struct{ sdk.Transport }

func (t idTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return idConn{c}, nil
}

type idConn struct{ sdk.Connection }

func (c idConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if r, ok := m.(*jsonrpc.Request); ok && r.ID.IsValid() && r.Extra == nil {
		id := fmt.Sprint(r.ID.Raw())
		if f, ok := r.ID.Raw().(float64); ok {
			id = strconv.FormatFloat(f, 'f', -1, 64)
		}
		r.Extra = &sdk.RequestExtra{Header: http.Header{requestIDHeader: {id}, transportHeader: {"pipe"}}}
	}
	return m, err
}

// begin counts a write call in flight, for a graceful stop and for
// ghonce_mcp_calls_in_flight, and returns its context, cancelled also when
// a stop's grace period ends; the returned func ends it.
func (s *Server) begin(ctx context.Context) (context.Context, func()) {
	s.calls.add()
	s.stopMu.Lock()
	stop := s.stop
	s.stopMu.Unlock()
	if stop == nil {
		return ctx, s.calls.done
	}
	ctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(stop, cancel)
	return ctx, func() { unhook(); cancel(); s.calls.done() }
}

// observeGauges reports the calls in flight on every scrape.
func (s *Server) observeGauges() {
	s.cfg.Metrics.Gauges(func(set func(string, float64, ...string)) {
		set(observe.MCPCallsInFlight, float64(s.calls.load()))
	})
}
