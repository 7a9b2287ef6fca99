package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"reflect"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/internal/mcp"
	"github.com/ghonce/ghonce/tests/harness"
)

var updateGHMCP = flag.Bool("update-ghmcp", false, "rewrite "+mcp.GitHubMCPToolsFile+" from the pinned github-mcp-server's tools/list")

// githubMCPServer is the pinned github-mcp-server (`make
// github-mcp-server`, or GHONCE_GITHUB_MCP_SERVER); without it the test is
// skipped loudly, and fails under CI=true.
func githubMCPServer(t *testing.T) string {
	t.Helper()
	path, err := harness.GitHubMCPServer()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%v; CI=true, so this test must run", err)
		}
		t.Skipf("SKIPPED: %v; the schema drift check did not run (CI runs it)", err)
	}
	return path
}

// pinnedTools lists the pinned github-mcp-server's tools (it needs no
// GitHub for that), and those it offers with its granular issue tools
// turned on (create_issue) that it does not offer by default.
func pinnedTools(t *testing.T) map[string]*sdk.Tool {
	t.Helper()
	out := listPinned(t)
	for name, tool := range listPinned(t, "--features=issues_granular") {
		if _, ok := out[name]; !ok {
			out[name] = tool
		}
	}
	return out
}

func listPinned(t *testing.T, flags ...string) map[string]*sdk.Tool {
	t.Helper()
	cmd := exec.Command(githubMCPServer(t), append([]string{"stdio"}, flags...)...)
	cmd.Env = append(harness.CleanEnv(), "GITHUB_PERSONAL_ACCESS_TOKEN=not-a-token")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "drift", Version: "1"}, nil).Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	out := map[string]*sdk.Tool{}
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		out[tool.Name] = tool
	}
	return out
}

// ghonce's guarded tools are github-mcp-server's: the file ghonce serves
// them from (standalone) is what the pinned server lists. Fails when
// either drifts; `go test ./internal/mcp -run Drift -update-ghmcp`
// rewrites the file after a deliberate upgrade.
func TestGuardedToolsDoNotDriftFromThePinnedGitHubMCPServer(t *testing.T) {
	pinned := pinnedTools(t)
	var want []*sdk.Tool
	for _, name := range mcp.GuardedToolNames() {
		tool, ok := pinned[name]
		if !ok {
			t.Fatalf("the pinned github-mcp-server has no tool %s", name)
		}
		want = append(want, &sdk.Tool{Name: tool.Name, Title: tool.Title, Description: tool.Description, InputSchema: tool.InputSchema, Annotations: tool.Annotations})
	}
	b, err := json.MarshalIndent(want, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, '\n')
	if *updateGHMCP {
		if err := os.WriteFile(mcp.GitHubMCPToolsFile, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(mcp.GitHubMCPToolsFile)
	if err != nil {
		t.Fatal(err)
	}
	// The file is a list; its order is not what is compared (the guards'
	// names come from a map), each tool by its name is.
	byName := func(raw []byte) map[string]any {
		var list []map[string]any
		_ = json.Unmarshal(raw, &list)
		m := map[string]any{}
		for _, tool := range list {
			name, _ := tool["name"].(string)
			m[name] = tool
		}
		return m
	}
	if got, exp := byName(have), byName(b); !reflect.DeepEqual(got, exp) {
		t.Fatalf("%s differs from what the pinned github-mcp-server lists:\n%s\nwant:\n%s\n(after a deliberate upgrade: go test ./internal/mcp -run Drift -update-ghmcp)", mcp.GitHubMCPToolsFile, have, b)
	}
	if !bytes.Equal(have, b) {
		t.Logf("%s is equal in content but not in layout; -update-ghmcp rewrites it", mcp.GitHubMCPToolsFile)
	}

	// And the tools ghonce serves alone are those, with task and step.
	w := newWorld(t, opts{})
	res, err := w.cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]*sdk.Tool{}
	for _, tool := range res.Tools {
		served[tool.Name] = tool
	}
	for _, name := range mcp.GuardedToolNames() {
		g, ok := served[name]
		if !ok {
			t.Errorf("ghonce mcp does not serve %s", name)
			continue
		}
		gs, us := asMap(t, g.InputSchema), asMap(t, pinned[name].InputSchema)
		gp := gs["properties"].(map[string]any)
		delete(gp, "task")
		delete(gp, "step")
		if !reflect.DeepEqual(gs, us) {
			t.Errorf("%s: ghonce's input schema (without task and step)\n%v\ndrifted from the pinned github-mcp-server's\n%v", name, gs, us)
		}
		if g.Annotations == nil || pinned[name].Annotations == nil || g.Annotations.Title != pinned[name].Annotations.Title || !g.Annotations.IdempotentHint {
			t.Errorf("%s: annotations %+v, want the pinned server's title with idempotentHint", name, g.Annotations)
		}
	}
}

func asMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
