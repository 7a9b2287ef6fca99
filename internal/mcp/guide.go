package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/kinds"
	"github.com/ghonce/ghonce/ledger"
	"github.com/ghonce/ghonce/outcome"
	"github.com/ghonce/ghonce/reconcile"
)

// The generated sections of the MCP guides (GuideTables), by name.
const (
	// GuideServerTools is docs/guide/mcp.md's table: every tool `ghonce
	// mcp` serves.
	GuideServerTools = "mcp-tools"
	// GuideProxyTools is docs/guide/mcp-proxy.md's table: the tools the
	// proxy guards by a kind, as it serves them in front of the pinned
	// github-mcp-server.
	GuideProxyTools = "mcp-proxy-tools"
)

// GuideTables renders the MCP guides' tool tables from what is served:
// `ghonce mcp`'s tools/list, asked of a server started in process, and
// the guarded tools as the proxy serves them in front of the pinned
// github-mcp-server (whose tools/list ghmcp_tools.json is; the drift test
// holds it to that server). Required and optional arguments are the input
// schemas'; an argument a schema lists that ghonce does not act on is in
// its own column. tools/docgen writes them into the guides; the docs
// tests fail when a guide's table differs.
func GuideTables(ctx context.Context) (map[string]string, error) {
	served, err := ServedTools(ctx)
	if err != nil {
		return nil, fmt.Errorf("render the tool tables: %w", err)
	}
	res := &sdk.ListToolsResult{Tools: served}

	var b strings.Builder
	tableHead(&b, "tool", "required", "optional", "listed, refused", "default step", "one per task")
	var task, step string
	for _, t := range res.Tools {
		a, err := argsOf(t)
		if err != nil {
			return nil, err
		}
		g, guardedKind := guards[t.Name]
		var opt, refused []string
		for _, p := range a.names {
			switch {
			case slices.Contains(a.required, p) || guardedKind && (p == "task" || p == "step"):
			case guardedKind && !slices.Contains(g.carries, p) && p != "owner" && p != "repo":
				refused = append(refused, p)
			default:
				opt = append(opt, p)
			}
		}
		if guardedKind && g.Pass != "" {
			refused = append(refused, "("+g.Pass+" needs `--upstream`)")
		}
		name, defStep, onePer := "`"+t.Name+"`", "", ""
		if t.Annotations != nil && t.Annotations.ReadOnlyHint {
			name += " (read-only)"
		}
		if guardedKind {
			defStep, onePer = "`"+defaultStep(t.Name)+"`", g.OnePer
			task, step = a.desc["task"], a.desc["step"]
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", name, list(a.required), list(opt), list(refused), defStep, onePer)
	}
	fmt.Fprintf(&b, "\nEvery write tool also takes optional `task` and `step`, which its schema describes to the model:\n\n- `task`: %s\n- `step`: %s\n", task, step)
	tables := map[string]string{GuideServerTools: b.String()}

	var up []*sdk.Tool
	var ptask string
	if err := json.Unmarshal(ghmcpTools, &up); err != nil {
		return nil, fmt.Errorf("read %s: %w", GitHubMCPToolsFile, err)
	}
	b.Reset()
	tableHead(&b, "upstream's tool", "acts on, once per (task, step)", "refused in the create ghonce guards", "goes upstream as it came", "default step")
	for _, u := range up {
		t, err := guardedTool(u, true)
		if err != nil {
			return nil, err
		}
		a, err := argsOf(t)
		if err != nil {
			return nil, err
		}
		g := guards[t.Name]
		ptask = a.desc["task"]
		var acts, refused []string
		for _, p := range a.names {
			switch {
			case p == "task" || p == "step":
			case slices.Contains(g.carries, p) || p == "owner" || p == "repo":
				acts = append(acts, p)
			default:
				refused = append(refused, p)
			}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | `%s` |\n", t.Name, list(acts), list(refused), g.Pass, defaultStep(t.Name))
	}
	fmt.Fprintf(&b, "\n%s\n\n- `task`: %s\n", modelSays("guide, behind --upstream"), ptask)
	tables[GuideProxyTools] = b.String()
	return tables, nil
}

// tableHead writes a markdown table's head with cols.
func tableHead(b *strings.Builder, cols ...string) {
	b.WriteString("| " + strings.Join(cols, " | ") + " |\n|" + strings.Repeat(" --- |", len(cols)) + "\n")
}

// ServedTools is `ghonce mcp`'s tools/list, asked of a server started in
// process (with no engine or ledger: listing needs neither), in the order
// it lists them. GuideTables and the README's test read it.
func ServedTools(ctx context.Context) ([]*sdk.Tool, error) {
	s, err := New(Config{Engine: noEngine{}, Ledger: noLedger{}, Task: "T"})
	if err != nil {
		return nil, err
	}
	ct, st := sdk.NewInMemoryTransports()
	ss, err := s.SDK().Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "docgen", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return nil, err
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("list tools: %w", err)
	}
	return res.Tools, nil
}

// toolArgs is what a tool's input schema says of its arguments.
type toolArgs struct {
	names, required []string // names sorted; required in the schema's order
	desc            map[string]string
}

func argsOf(t *sdk.Tool) (toolArgs, error) {
	raw, err := json.Marshal(t.InputSchema)
	if err != nil {
		return toolArgs{}, fmt.Errorf("%s's input schema: %w", t.Name, err)
	}
	var schema struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		return toolArgs{}, fmt.Errorf("%s's input schema: %w", t.Name, err)
	}
	a := toolArgs{required: schema.Required, desc: map[string]string{}}
	for n, p := range schema.Properties {
		a.names = append(a.names, n)
		a.desc[n] = p.Description
	}
	slices.Sort(a.names)
	return a, nil
}

// defaultStep is the default step of the kind a write tool makes.
func defaultStep(tool string) string {
	if g, ok := guards[tool]; ok {
		return kinds.DefaultStep(g.kind)
	}
	return ""
}

func list(xs []string) string { return strings.ReplaceAll(strings.Join(xs, ", "), ", (", " (") }

// noEngine and noLedger stand in for the real ones while the tables are
// rendered: listing tools calls neither.
type noEngine struct{}

func (noEngine) Do(context.Context, *reconcile.Prepared) (*outcome.Result, error) {
	return nil, fmt.Errorf("render the tool tables: no engine")
}

type noLedger struct{ ledger.Ledger }
