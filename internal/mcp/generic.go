package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/offgithub"
	"github.com/ghonce/ghonce/outcome"
)

// genericHandler serves an upstream tool that is neither guarded by a kind
// nor marked readOnlyHint: at most once per (task, tool, arguments in
// canonical form), through offgithub's ToolCall kind. The first call's
// final result is recorded and returned to a replay without a request
// upstream; a call whose answer was lost is never sent again by ghonce (a
// later identical call gets a tool error saying how to settle it), unless
// upstream marks the tool idempotentHint. A result that is not final
// (input_required) is returned and not recorded.
func (p *Proxy) genericHandler(t *sdk.Tool) sdk.ToolHandler {
	idempotent := t.Annotations != nil && t.Annotations.IdempotentHint
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		// A continuation of a multi-round call answers upstream's question;
		// it is part of a call already keyed, never a call of its own.
		if req.Params.RequestState != "" || len(req.Params.InputResponses) > 0 {
			return p.forwardOnce(ctx, req)
		}
		task := p.s.cfg.Task
		if task == "" {
			p.warnNoTask.Do(func() {
				p.s.cfg.Logf("no task (GHONCE_TASK, --task, the Actions run): %s and every other write tool without a kind go upstream unguarded", t.Name)
			})
			return p.forwardOnce(ctx, req)
		}
		canon, err := canonicalJSON(req.Params.Arguments)
		if err != nil {
			return invalidResult(fmt.Errorf("%s: the arguments are not JSON: %w", t.Name, err)), nil
		}
		var notFinal *sdk.CallToolResult
		spec := offgithub.ToolCall{Tool: t.Name, ArgsSHA256: offgithub.ArgsHash(canon), Idempotent: idempotent,
			Send: func(ctx context.Context) (string, error) {
				res, err := p.forwardOnce(ctx, req)
				if err != nil {
					var wire *jsonrpc.Error
					if errors.As(err, &wire) {
						// Upstream answered the request with a protocol error:
						// it did not run the tool.
						return "", &effect.CreateError{Class: effect.ClassRefused, Err: fmt.Errorf("upstream refused %s: %w", t.Name, err)}
					}
					return "", &effect.CreateError{Class: effect.ClassMaybe, Err: fmt.Errorf("call %s upstream: %w", t.Name, err)}
				}
				if res.NeedsInput() {
					notFinal = res
					return "", &effect.CreateError{Class: effect.ClassRefused, Err: fmt.Errorf("%s asks for input: not final, not recorded", t.Name)}
				}
				b, err := json.Marshal(res)
				if err != nil {
					return "", &effect.CreateError{Class: effect.ClassMaybe, Err: fmt.Errorf("record %s's result: %w", t.Name, err)}
				}
				return string(b), nil
			}}
		prep, err := offgithub.Prepare(offgithub.Action{Task: task, Step: t.Name, Spec: spec})
		if err != nil {
			return invalidResult(err), nil
		}
		ctx, end := p.s.begin(ctx)
		defer end()
		r, err := p.s.cfg.Off.Do(ctx, prep)
		if notFinal != nil {
			return notFinal, nil
		}
		if err != nil {
			p.s.cfg.Logf("%s: %v", t.Name, err)
			return errorResult(genericError(t.Name, err)), nil
		}
		var res sdk.CallToolResult
		if err := json.Unmarshal([]byte(r.Ref), &res); err != nil || res.Content == nil && res.StructuredContent == nil {
			// Settled by a person (`ghonce resolve KEY --done`): no result
			// was recorded, only their word (and --ref).
			text := fmt.Sprintf("%s with these arguments already happened: recorded as done (key %s), so nothing was sent upstream", t.Name, r.Key)
			if r.Ref != "" {
				text += "; reference: " + r.Ref
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
		}
		if r.Outcome != outcome.Created {
			p.s.cfg.Logf("%s: replayed the recorded result (key %s); nothing was sent upstream", t.Name, r.Key)
		}
		return &res, nil
	}
}

// forwardOnce is forward without the re-send of a read-only call.
func (p *Proxy) forwardOnce(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
	cs, err := p.up.session(ctx)
	if err != nil {
		return nil, err
	}
	return cs.CallTool(ctx, p.params(req))
}

// genericError words a generic guard's failure for the model.
func genericError(tool string, err error) error {
	var (
		uc *outcome.UnconfirmedError
		ip *outcome.InProgressError
	)
	switch {
	case errors.As(err, &uc):
		return withKind(err, fmt.Errorf("unconfirmed: %s may have happened, and ghonce will not send it again by itself: %v", tool, uc.Err))
	case errors.As(err, &ip):
		return withKind(err, fmt.Errorf("the same call of %s: %v. Call again later with the same arguments: it returns that call's result, "+
			"or makes it once a dead holder's lease has ended", tool, ip))
	}
	return withKind(err, err)
}

// canonicalJSON is raw with object keys sorted, no insignificant space,
// and numbers in one form (an integral number as an integer, any other in
// the shortest form that reads back the same), so that two spellings of the
// same arguments are the same call.
func canonicalJSON(raw json.RawMessage) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, errors.New("more than one JSON value")
	}
	v, err := canonNumbers(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func canonNumbers(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil {
			return nil, err
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			return json.Number(strconv.FormatInt(int64(f), 10)), nil
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case map[string]any:
		for k, e := range x {
			c, err := canonNumbers(e)
			if err != nil {
				return nil, err
			}
			x[k] = c
		}
	case []any:
		for i, e := range x {
			c, err := canonNumbers(e)
			if err != nil {
				return nil, err
			}
			x[i] = c
		}
	}
	return v, nil
}
