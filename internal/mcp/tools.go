package mcp

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/effect"
	"github.com/ghonce/ghonce/failure"
	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
	"github.com/ghonce/ghonce/taskkey"
)

// Where names the repository, as github-mcp-server's tools do.
type Where struct {
	Owner string `json:"owner" jsonschema:"Repository owner (username or organization)"`
	Repo  string `json:"repo" jsonschema:"Repository name"`
}

// Once is the two arguments ghonce adds to every write tool.
type Once struct {
	// Described by model.txt ("task", "step"), as in every tool's schema.
	Task string `json:"task,omitempty"`
	Step string `json:"step,omitempty"`
}

// Output is every write tool's structuredContent: the fields of the CLI's
// --json output.
type Output struct {
	Key            string `json:"key" jsonschema:"The key this call's task and step map to"`
	Kind           string `json:"kind"` // its schema lists the kinds on MCP (kindsOnMCP)
	Task           string `json:"task"`
	Step           string `json:"step"`
	Repo           string `json:"repo,omitempty" jsonschema:"OWNER/NAME"`
	Outcome        string `json:"outcome" jsonschema:"created (this call made it), found (an earlier attempt made it; now recorded) or skipped (already recorded as done; GitHub was not asked)"`
	Number         int    `json:"number,omitempty" jsonschema:"PR or issue number"`
	URL            string `json:"url,omitempty"`
	ID             int64  `json:"id,omitempty" jsonschema:"comment id"`
	SHA            string `json:"sha,omitempty" jsonschema:"commit of a branch, blob of a file"`
	Ref            string `json:"ref,omitempty"`
	PayloadChanged bool   `json:"payload_changed" jsonschema:"true when this call's arguments differ from the ones that made the artifact: nothing new was created for them"`
	Attempts       int    `json:"attempts"`
	Warning        string `json:"warning,omitempty"`

	// ArtifactState: a found or created PR's or issue's state.
	ArtifactState string `json:"artifact_state,omitempty" jsonschema:"open, closed or merged: the PR's or issue's state when this call created or found it (absent when skipped: GitHub was not asked)"`

	// Changed: with payload_changed, the fields that differ.
	Changed []string `json:"changed,omitempty" jsonschema:"with payload_changed: the fields that differ (head, title, body, ...); the artifact was left as it is"`
}

func outputOf(r *outcome.Result) Output {
	return Output{
		Key: r.Key, Kind: r.Kind, Task: r.Task, Step: r.Step, Repo: r.Repo, Outcome: string(r.Outcome),
		Number: r.Number, URL: r.URL, ID: r.ID, SHA: r.SHA, Ref: r.Ref,
		PayloadChanged: r.PayloadChanged, Changed: r.Changed, Attempts: r.Attempts, Warning: r.Warning,
		ArtifactState: r.ArtifactState,
	}
}

// The guarded write tools are built from the kinds' declarations: each
// tool a kind's Face.MCP names takes the kind's fields by their MCP names
// (Field.MCP, else the field's own), and one flow maps a call's arguments
// to the kind's payload, decodes it with the registry and runs it. A kind
// needs no MCP code of its own; what a tool has beyond it is data of the
// kind's Face (Face.Tools).

// passes reports a call that is not the act ghonce guards (issue_write's
// method update, add_issue_comment's reaction alone): it goes upstream as
// it is.
func (g guard) passes(args map[string]json.RawMessage) bool {
	_, act := g.Methods[stringArg(args, "method")]
	_, body := args["body"]
	return g.Methods != nil && !act || g.Body && !body
}

// whatRE matches a {name} of Tool.What, with its :length if any.
var whatRE = regexp.MustCompile(`\{([a-z_.]+)(?::(\d+))?\}`)

// whatOf names the artifact for the model, e.g. "PR #12" (Tool.What).
func (g guard) whatOf(spec reconcile.Spec, r *outcome.Result) string {
	switch {
	case g.What == "" && r.Number != 0:
		return fmt.Sprintf("%s #%d", r.Kind, r.Number)
	case g.What == "":
		return strings.TrimSpace(r.Kind + " " + spec.Target())
	}
	var vals map[string]any
	b, _ := json.Marshal(spec)
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // an id as its digits
	_ = d.Decode(&vals)
	vals["result.number"], vals["result.id"], vals["result.sha"] = r.Number, r.ID, r.SHA
	return whatRE.ReplaceAllStringFunc(g.What, func(m string) string {
		sub := whatRE.FindStringSubmatch(m)
		v := fmt.Sprint(vals[sub[1]])
		if n, err := strconv.Atoi(sub[2]); err == nil && n < len(v) {
			v = v[:n]
		}
		return v
	})
}

// guards are the write tools that go through the engine, by name: every
// tool a kind's Face.MCP names.
var guards = func() map[string]guard {
	m := map[string]guard{}
	for _, kind := range kinds.All() {
		face, _ := kinds.FaceOf(kind)
		for _, tool := range face.MCP {
			g := guard{tool: tool, kind: kind, Tool: face.Tools[tool]}
			g.OnePer = cmp.Or(g.OnePer, "target")
			if g.Methods != nil {
				g.carries, g.needs = []string{"method"}, []string{"method"}
			}
			for _, fl := range face.Fields {
				if fl.MCP = fl.MCPArg(); fl.MCP == "" {
					continue
				}
				g.fields = append(g.fields, fl)
				g.carries = append(g.carries, fl.MCP)
				if fl.Required {
					g.needs = append(g.needs, fl.MCP)
				}
			}
			m[tool] = g
		}
	}
	return m
}()

// run performs a guarded call through the engine: the call's arguments,
// already checked against the tool's schema (serveGuarded).
func (g guard) run(ctx context.Context, s *Server, raw json.RawMessage) *sdk.CallToolResult {
	ctx, end := s.begin(ctx)
	defer end()
	spec, r, err := g.call(ctx, s, raw)
	if err != nil {
		err = toolError(err)
		s.cfg.Logf("%s: %v", g.tool, err)
		return errorResult(err)
	}
	what := g.whatOf(spec, r)
	s.cfg.Logf("%s: %s %s (task %q, step %q, key %s)", g.tool, r.Outcome, what, r.Task, r.Step, r.Key)
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: resultText(what, r)}}, StructuredContent: outputOf(r)}
}

// call is the one flow every write tool goes through. Its errors are the
// engine's and the arguments'; the tool handler words them (toolError).
func (g guard) call(ctx context.Context, s *Server, raw json.RawMessage) (reconcile.Spec, *outcome.Result, error) {
	var in struct {
		Where
		Once
	}
	spec, err := g.decode(raw, &in)
	if err != nil {
		// The key, when the arguments that fit still name one, as
		// every other tool error gives it.
		err = invalid(fmt.Errorf("%s: %w", g.tool, err))
		if key := s.keyOfRaw(ctx, g.tool, raw); key != "" {
			err = &failure.Keyed{Key: key, Err: err}
		}
		return nil, nil, err
	}
	a, err := s.action(in.Where, in.Once)
	if err != nil {
		return nil, nil, err
	}
	a.Spec, a.OnChange = spec, s.cfg.OnChange
	if g.Methods != nil {
		var args map[string]json.RawMessage
		_ = json.Unmarshal(raw, &args) // decode read it already
		a.OnChange = cmp.Or(g.Methods[stringArg(args, "method")], a.OnChange)
	}
	p, err := reconcile.Prepare(a)
	if err != nil {
		// Named by its key when what the key depends on is valid, as the
		// documented last line of a tool error gives it.
		if k, kerr := reconcile.KeyOf(a); kerr == nil {
			return nil, nil, &failure.Keyed{Key: k, Err: invalid(err)}
		}
		return nil, nil, invalid(err)
	}
	r, err := s.cfg.Engine.Do(ctx, p)
	return spec, r, err
}

// decode reads a call's arguments: where and once into in, the kind's
// fields, by their MCP names, into the kind's description.
func (g guard) decode(raw json.RawMessage, in any) (reconcile.Spec, error) {
	args := map[string]json.RawMessage{}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, in); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, err
		}
	}
	types := kinds.FieldTypes(g.kind)
	payload := map[string]any{}
	for _, fl := range g.fields {
		v, ok := args[fl.MCP]
		t := types[fl.Name]
		if !ok && fl.Required && t != nil && t.Kind() == reflect.Int {
			v, ok = json.RawMessage("0"), true // refused as the number it is not
		}
		if !ok {
			continue
		}
		switch {
		case t == nil:
			payload[fl.Name] = v
		case t.Kind() == reflect.Int || t.Kind() == reflect.Int64:
			var n float64
			if err := json.Unmarshal(v, &n); err != nil {
				return nil, fmt.Errorf("%s: want a number: %w", fl.MCP, err)
			}
			limit := float64(math.MaxInt32) // an issue's number
			if t.Kind() == reflect.Int64 {
				limit = 1 << 53 // an id: GitHub's pass 2^31, and JSON numbers are exact to 2^53
			}
			i, err := wholeNumber(fl.MCP, n, limit, cmp.Or(fl.Help, "a whole number"))
			if err != nil {
				return nil, err
			}
			payload[fl.Name] = i
		case t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
			var s string // plain text, not base64
			if err := json.Unmarshal(v, &s); err != nil {
				return nil, fmt.Errorf("%s: want a string: %w", fl.MCP, err)
			}
			payload[fl.Name] = []byte(s)
		default:
			payload[fl.Name] = v
		}
	}
	b, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	spec, err := kinds.DecodeValue(g.kind, b)
	if err != nil {
		return nil, err
	}
	return spec.(reconcile.Spec), nil
}

// addWriteTools serves the guarded tools under github-mcp-server's names
// and argument schemas (ghmcp_tools.json), plus optional task and step and
// ghonce's output schema.
func (s *Server) addWriteTools() error {
	var tools []*sdk.Tool
	if err := json.Unmarshal(ghmcpTools, &tools); err != nil {
		return fmt.Errorf("read %s: %w", GitHubMCPToolsFile, err)
	}
	out, err := jsonschema.For[Output](nil)
	if err != nil {
		return fmt.Errorf("infer the output schema: %w", err)
	}
	out.Properties["kind"].Description = kindsOnMCP()
	for _, t := range tools {
		g, ok := guards[t.Name]
		if !ok {
			return fmt.Errorf("%s: %s is not a guarded tool", GitHubMCPToolsFile, t.Name)
		}
		gt, err := guardedTool(t, false)
		if err != nil {
			return err
		}
		gt.OutputSchema = out
		takes := argNames(gt)
		s.srv.AddTool(gt, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			handled(ctx)
			if res, ok := s.serveGuarded(ctx, g, takes, req, false); ok {
				return res, nil
			}
			return invalidResult(fmt.Errorf("ghonce guards only %s's create; this call (%s) needs github-mcp-server behind ghonce: serve with ghonce mcp --upstream -- github-mcp-server stdio", req.Params.Name, g.Pass)), nil
		})
	}
	return nil
}

// kindsOnMCP names the kinds an MCP tool makes, from their Faces: "branch,
// comment, file, issue or pr".
func kindsOnMCP() string {
	var on []string
	for _, k := range kinds.All() {
		if f, _ := kinds.FaceOf(k); len(f.MCP) > 0 {
			on = append(on, k)
		}
	}
	if len(on) < 2 {
		return strings.Join(on, "")
	}
	return strings.Join(on[:len(on)-1], ", ") + " or " + on[len(on)-1]
}

// GitHubMCPToolsFile holds the guarded tools as the pinned
// github-mcp-server (tools/github-mcp-server/go.mod) lists them; a test
// compares it with that server's tools/list.
const GitHubMCPToolsFile = "ghmcp_tools.json"

//go:embed ghmcp_tools.json
var ghmcpTools []byte

// GuardedToolNames are the tools ghonce guards with a kind, by
// github-mcp-server's names, sorted: the keys of guards.
func GuardedToolNames() []string { return slices.Sorted(maps.Keys(guards)) }

var no = false

// action is the Action of a call, without its Spec: the task's default
// applied. An empty step is the kind's default, which the engine applies.
func (s *Server) action(w Where, o Once) (reconcile.Action, error) {
	task, err := s.task(o.Task)
	if err != nil {
		return reconcile.Action{}, err
	}
	// As on GitHub (and gh's --repo): "app.git" is app. Prepare checks it.
	repo := strings.TrimSpace(w.Owner) + "/" + strings.TrimSuffix(strings.TrimSpace(w.Repo), ".git")
	return reconcile.Action{Task: task, Step: taskkey.CleanID(o.Step), Repo: repo}, nil
}

// wholeNumber is n, the argument name, as a positive whole number
// (an issue's, say).
func wholeNumber(name string, n, limit float64, want string) (int, error) {
	if n != math.Trunc(n) || n <= 0 || n > limit {
		return 0, fmt.Errorf("%s %v: want %s, e.g. 42", name, n, want)
	}
	return int(n), nil
}

// resultText is the short text the model reads.
func resultText(what string, r *outcome.Result) string {
	if r.ArtifactState != "" && r.ArtifactState != "open" {
		what += " (" + r.ArtifactState + ")"
	}
	var b strings.Builder
	switch r.Outcome {
	case outcome.Created:
		fmt.Fprintf(&b, "created %s", what)
	case outcome.Found:
		fmt.Fprintf(&b, "already done in an earlier attempt: %s (found on GitHub and recorded; nothing new was created)", what)
	default:
		fmt.Fprintf(&b, "already done in an earlier attempt: %s (nothing new was created)", what)
	}
	if r.URL != "" {
		fmt.Fprintf(&b, ": %s", r.URL)
	}
	fmt.Fprintf(&b, "\ntask %q, step %q, key %s", r.Task, r.Step, r.Key)
	if r.PayloadChanged {
		b.WriteString("\nThis call's arguments differ from the ones that made it; they were not applied. If you meant a genuinely new one, call again with a new step.")
	}
	if r.Warning != "" {
		b.WriteString("\nwarning: " + r.Warning)
	}
	return b.String()
}

// invalidError is bad input: the CLI's exit 2.
type invalidError struct{ err error }

func (e *invalidError) Error() string { return "invalid arguments: " + e.err.Error() }
func (e *invalidError) Unwrap() error { return e.err }

// Usage marks bad input for package failure: the CLI's exit 2.
func (e *invalidError) Usage() bool { return true }

// invalid is err as bad input, with the field it names called by its
// argument.
func invalid(err error) error { return &invalidError{effect.Named(err, argName)} }

// toolError words an error for the model with the meaning of the CLI's exit
// codes. The SDK returns it as a tool result with isError set, never as a
// protocol error. Errors from GitHub are already stripped of the token by
// ghcheck.
func toolError(err error) error {
	return withKind(err, toolMessage(err))
}

// toolMessage is the text of a tool error for the model.
func toolMessage(err error) error {
	var (
		uc *outcome.UnconfirmedError
		ip *outcome.InProgressError
		cf *outcome.ConflictError
		so *reconcile.SameOrAnotherError
		iv *invalidError
	)
	switch {
	case errors.As(err, &iv):
		return err
	case errors.As(err, &uc):
		return fmt.Errorf("unconfirmed: %v: it may have happened or not. Call this tool again with the same arguments and step: it checks GitHub first, creating nothing twice", uc.Err)
	case errors.As(err, &ip):
		return fmt.Errorf("%v. Call again later with the same arguments (never another step): it returns that attempt's result, "+
			"or takes the key over once a dead holder's lease has ended", ip)
	case errors.As(err, &cf):
		return fmt.Errorf("refused: %v. Nothing was created; choose another name, or another step", cf)
	case errors.As(err, &so):
		return fmt.Errorf("%s, and this call's %s is %q. Nothing was created. If this call is that one again, it is done: do not call again. "+
			"If it is another, call again with step %q (keep that step if you retry it)", so.Facts(), so.Field, so.Text, so.NewStep)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("cancelled: %v: if a request had been sent it may have taken effect; call again with the same arguments to settle it", err)
	}
	// Advice, a changed description: the step and the server's settings
	// to give, in the model's words.
	return failure.In(err, modelWords{})
}

// withKind ends msg with the failure's kind, the CLI exit code of the same
// meaning and the key, as `ghonce --json` reports them (package failure is the one
// mapping), so an agent or a runner reading tool errors speaks the same
// vocabulary as one reading the CLI.
func withKind(err, msg error) error {
	d := failure.Describe(err, "mcp", nil)
	tail := fmt.Sprintf("[%s: the CLI's exit %d", d.Error.Kind, d.ExitCode)
	if d.Key != "" {
		tail += ", key " + d.Key
	}
	return fmt.Errorf("%w\n%s]", msg, tail)
}
