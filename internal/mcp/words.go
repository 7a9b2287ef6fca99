package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/failure"
)

// argName is the tool argument that carries field, for an error that
// names the field (effect.Named): its MCP name in the kinds' Faces (the
// same in every tool that takes it), else the field's own.
func argName(field string) string {
	if field == "repo" {
		return "owner and repo"
	}
	for _, g := range guards {
		for _, fl := range g.fields {
			if fl.Name == field {
				return fl.MCP
			}
		}
	}
	return field
}

// modelWords names an option to a model: step is an argument of the call;
// any other is a setting of the server, which whoever runs it gives.
type modelWords struct{}

func (modelWords) Name(o effect.Option) string {
	if o.Name != "step" {
		o.Name = "the server's " + o.Name
	}
	return strings.TrimSpace(o.Name + " " + o.Value)
}

func (w modelWords) Set(o effect.Option) string { return "set " + w.Name(o) }

// schemaErrors gives a tool error the SDK wrote itself (arguments that do
// not fit the tool's input schema: a wrong type, a missing or an unknown
// property) the shape of every other tool error: "invalid arguments: ..."
// and the last line with the kind, the CLI's exit code and, when the
// arguments still name one, the key. A call one of ghonce's own handlers
// took (handled) already has that shape and is left alone.
func (s *Server) schemaErrors(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		var took atomic.Bool
		res, err := next(context.WithValue(ctx, handledKey{}, &took), method, req)
		if method != "tools/call" || err != nil || took.Load() {
			return res, err
		}
		tr, ok := res.(*sdk.CallToolResult)
		if !ok || !tr.IsError {
			return res, err
		}
		var texts []string
		for _, c := range tr.Content {
			if t, ok := c.(*sdk.TextContent); ok {
				texts = append(texts, t.Text)
			}
		}
		var verr error = invalid(errors.New(strings.Join(texts, "\n") + " (see the tool's input schema)"))
		if p, ok := req.GetParams().(*sdk.CallToolParamsRaw); ok {
			if key := s.keyOfRaw(ctx, p.Name, p.Arguments); key != "" {
				verr = &failure.Keyed{Key: key, Err: verr}
			}
		}
		tr.Content = []sdk.Content{&sdk.TextContent{Text: withKind(verr, verr).Error()}}
		return tr, nil
	}
}

type handledKey struct{}

// handled records that one of ghonce's handlers took the call of ctx, so
// its tool error is its own (toolError), not the SDK's.
func handled(ctx context.Context) {
	if took, ok := ctx.Value(handledKey{}).(*atomic.Bool); ok {
		took.Store(true)
	}
}

// keyOfRaw is the key a call of tool with raw arguments would use, as far
// as the arguments that fit say; "" when they do not name one.
func (s *Server) keyOfRaw(ctx context.Context, tool string, raw json.RawMessage) string {
	if _, ok := guards[tool]; !ok || len(raw) == 0 {
		return ""
	}
	var in KeyArgs
	_ = json.Unmarshal(raw, &in) // a field of the wrong type is skipped
	in.Tool = tool
	out, err := s.key(ctx, in)
	if err != nil {
		return ""
	}
	return out.Key
}
