package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/effect"
)

// guard is how the proxy serves one of upstream's write tools through the
// engine instead of sending it upstream.
type guard struct {
	// carries are the arguments ghonce's kind carries, besides owner, repo,
	// task and step, by github-mcp-server's names (issue_number,
	// from_branch), which are not always GitHub's REST names the kind's
	// Face declares (reconcile.BodyFields): the MCP front's own vocabulary. A call with any other argument is refused, saying
	// which: ghonce cannot make that part happen once.
	carries []string
	// needs are the carried arguments the kind cannot act without: an
	// upstream whose schema lacks one (renamed, say) is not guarded by the
	// kind (syncTools).
	needs []string
	// tool is the tool's name, kind the kind it is, fields the kind's
	// fields it takes, each MCP its argument's name.
	tool, kind string
	fields     []effect.Field
	// Tool is what the tool has beyond the kind's fields (Face.Tools), its
	// OnePer "target" when it names none; carries above holds its method
	// and the fields'.
	effect.Tool
}

// invalidResult is bad input as a tool error, worded as toolError words it.
func invalidResult(err error) *sdk.CallToolResult { return errorResult(toolError(invalid(err))) }

func errorResult(err error) *sdk.CallToolResult {
	res := &sdk.CallToolResult{}
	res.SetError(err)
	return res
}

func stringArg(a map[string]json.RawMessage, name string) string {
	var v string
	_ = json.Unmarshal(a[name], &v)
	return v
}

// serveGuarded runs a guarded call, or reports (false) that it goes
// upstream as it is.
//
// taskWins: the server's task (GHONCE_TASK, --task, the Actions run's)
// wins over the call's task argument, as behind --upstream, so the model
// never invents the key when the environment knows the work; otherwise the
// server's task is the default of a call that passes none.
//
// takes is the served tool's argument names (argNames): an argument it
// does not list is refused, so a handler never acts on an argument the
// schema the model read does not offer.
func (s *Server) serveGuarded(ctx context.Context, g guard, takes map[string]bool, req *sdk.CallToolRequest, taskWins bool) (*sdk.CallToolResult, bool) {
	name, raw := req.Params.Name, req.Params.Arguments
	args := map[string]json.RawMessage{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &args); err != nil {
			return invalidResult(fmt.Errorf("%s: the arguments are not a JSON object: %w", name, err)), true
		}
	}
	if g.passes(args) {
		return nil, false
	}
	var unknown, extra []string
	for k := range args {
		switch {
		case !takes[k]:
			unknown = append(unknown, k)
		case !slices.Contains(g.carries, k) && k != "owner" && k != "repo" && k != "task" && k != "step":
			extra = append(extra, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return invalidResult(fmt.Errorf("%s has no argument %s; its arguments are %s (nothing was created)",
			name, strings.Join(unknown, ", "), strings.Join(slices.Sorted(maps.Keys(takes)), ", "))), true
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return invalidResult(fmt.Errorf("%s through ghonce takes %s (and owner, repo, task, step), and cannot make %s happen once: call it without %s, then set %s with another tool",
			name, strings.Join(g.carries, ", "), strings.Join(extra, ", "), strings.Join(extra, ", "), pluralIt(extra))), true
	}
	if taskWins && s.cfg.Task != "" {
		delete(args, "task")
	}
	b, err := json.Marshal(args)
	if err != nil {
		return errorResult(err), true
	}
	return g.run(ctx, s, b), true
}

// lacks is the arguments the kind needs (and owner and repo) that takes,
// a tool's argument names, does not list.
func (g guard) lacks(takes map[string]bool) []string {
	var out []string
	for _, n := range append([]string{"owner", "repo"}, g.needs...) {
		if !takes[n] {
			out = append(out, n)
		}
	}
	return out
}

// argNames are the argument names a served tool's input schema lists.
func argNames(t *sdk.Tool) map[string]bool {
	schema, ok := t.InputSchema.(map[string]any)
	if !ok { // a *jsonschema.Schema, or another shape: as JSON
		if b, err := json.Marshal(t.InputSchema); err == nil {
			_ = json.Unmarshal(b, &schema)
		}
	}
	props, _ := schema["properties"].(map[string]any)
	out := make(map[string]bool, len(props))
	for k := range props {
		out[k] = true
	}
	return out
}

func pluralIt(xs []string) string {
	if len(xs) == 1 {
		return "it"
	}
	return "them"
}

// guardedTool is upstream's tool as ghonce serves it: the same name, title,
// argument names, types and required list; optional task and step added;
// idempotentHint true; the description says what once means.
//
// taskWins says whose task wins (see serveGuarded): the server's behind
// --upstream, the call's in ghonce's own server; the description says so.
func guardedTool(t *sdk.Tool, taskWins bool) (*sdk.Tool, error) {
	g := *t
	var schema map[string]any
	b, err := json.Marshal(t.InputSchema)
	if err == nil {
		err = json.Unmarshal(b, &schema)
	}
	if err != nil || schema == nil {
		return nil, fmt.Errorf("guard %s: its input schema is not a JSON object: %v", t.Name, err)
	}
	props, _ := schema["properties"].(map[string]any)
	props = maps.Clone(props)
	if props == nil {
		props = map[string]any{}
	}
	task := modelSays("task")
	if taskWins {
		task = modelSays("task, behind --upstream")
	}
	props["task"] = map[string]any{"type": "string", "description": task}
	props["step"] = map[string]any{"type": "string", "description": modelSays("step")}
	schema["properties"] = props
	g.InputSchema = schema
	a := sdk.ToolAnnotations{}
	if t.Annotations != nil {
		a = *t.Annotations
	}
	a.IdempotentHint = true
	g.Annotations = &a
	g.Description = strings.TrimRight(t.Description, " \n") + "\n\n" + modelSays("once")
	return &g, nil
}
