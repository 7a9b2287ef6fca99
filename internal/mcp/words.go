package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/failure"
)

// modelWords puts the engine's and the GitHub layer's advice, written for
// the CLI ("pass --base", "check --repo"), in the words of the tools'
// arguments. Advice a model cannot follow (server flags, the CLI's
// --on-change) is addressed to whoever runs the server or dropped.
var modelWords = strings.NewReplacer(
	"pass --body or --body-file", "pass body",
	"pass --task or set GHONCE_TASK", "pass task",
	"pass --from BRANCH, TAG or SHA", "pass from_branch",
	" (or use --from REF)", "",
	"check --from", "check from_branch",
	"(--from ", "(from_branch ",
	"check --repo", "check owner and repo",
	"and --repo", "and owner and repo",
	"(--head)", "(head)",
	", or raise --wait", "",
	"; if that is your bot or app, pass --trust-author ", "; if that is your bot or app, ask whoever runs this server to start it with --trust-author ",
	"pass --trust-author ", "ask whoever runs this server to start it with --trust-author ",
	"another --step", "another step",
	"pass --", "pass ",
	"check --", "check ",
)

// inModelWords is modelWords for a whole error, kept for errors.As.
func inModelWords(err error) error {
	if err == nil {
		return nil
	}
	msg := modelWords.Replace(err.Error())
	if msg == err.Error() {
		return err
	}
	return &reworded{msg, err}
}

type reworded struct {
	msg string
	err error
}

func (e *reworded) Error() string { return e.msg }
func (e *reworded) Unwrap() error { return e.err }

// schemaErrors gives a tool error the SDK wrote itself (arguments that do
// not fit the tool's input schema: a wrong type, a missing or an unknown
// property) the shape of every other tool error: "invalid arguments: ..."
// and the last line with the kind, the CLI's exit code and, when the
// arguments still name one, the key. A tool error of ghonce's own already
// ends with that line and is left alone.
func (s *Server) schemaErrors(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/call" || err != nil {
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
		msg := strings.Join(texts, "\n")
		if i := strings.LastIndex(msg, "\n["); i >= 0 && strings.Contains(msg[i:], "the CLI's exit") {
			return res, err
		}
		var verr error = invalid(errors.New(msg + " (see the tool's input schema)"))
		if p, ok := req.GetParams().(*sdk.CallToolParamsRaw); ok {
			if key := s.keyOfRaw(ctx, p.Name, p.Arguments); key != "" {
				verr = &failure.Keyed{Key: key, Err: verr}
			}
		}
		tr.Content = []sdk.Content{&sdk.TextContent{Text: withKind(verr, verr).Error()}}
		return tr, nil
	}
}

// keyOfRaw is the key a call of tool with raw arguments would use, as far
// as the arguments that fit say; "" when they do not name one.
func (s *Server) keyOfRaw(ctx context.Context, tool string, raw json.RawMessage) string {
	if _, ok := keyTargets[tool]; !ok || len(raw) == 0 {
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
