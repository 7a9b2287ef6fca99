package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/observe"
)

// traceCalls makes each tools/call a server span that joins the client's
// trace when the request's _meta carries a W3C traceparent, named and
// described after OpenTelemetry's MCP and GenAI conventions:
// "tools/call TOOL", mcp.method.name, gen_ai.operation.name execute_tool,
// gen_ai.tool.name, gen_ai.tool.call.id (from _meta, where a client puts
// its model's tool call id), mcp.session.id. The engine's action span, its
// ledger calls and its GitHub requests are its descendants. A tool error
// is the span's error, error.type tool_error.
func (s *Server) traceCalls(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		t := s.cfg.Tracer
		p, ok := req.GetParams().(*sdk.CallToolParamsRaw)
		if t == nil || method != "tools/call" || !ok {
			return next(ctx, method, req)
		}
		meta := p.GetMeta()
		if tp, _ := meta["traceparent"].(string); tp != "" {
			if sc, ok := observe.ParseTraceparent(tp); ok {
				ctx = observe.ContextWithRemote(ctx, sc)
			}
		}
		attrs := []observe.Attr{
			observe.String("mcp.method.name", method),
			observe.String("gen_ai.operation.name", "execute_tool"),
			observe.String("gen_ai.tool.name", p.Name),
		}
		if id, _ := meta["gen_ai.tool.call.id"].(string); id != "" {
			attrs = append(attrs, observe.String("gen_ai.tool.call.id", id))
		}
		if ss := req.GetSession(); ss != nil && ss.ID() != "" {
			attrs = append(attrs, observe.String("mcp.session.id", ss.ID()))
		}
		if ex := req.GetExtra(); ex != nil && ex.Header != nil {
			attrs = append(attrs, observe.String("network.transport", "tcp"), observe.String("network.protocol.name", "http"))
		} else {
			attrs = append(attrs, observe.String("network.transport", "pipe"))
		}
		ctx, sp := t.Start(ctx, method+" "+p.Name, observe.Server, attrs...)
		res, err := next(ctx, method, req)
		switch tr, _ := res.(*sdk.CallToolResult); {
		case err != nil:
			sp.Fail("jsonrpc_error", err.Error())
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
