package main_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/harness"
)

// The real github-mcp-server (v1.9.0, pinned in tools/github-mcp-server)
// is the upstream of the proxy tests. Its GITHUB_HOST setting keeps only
// the host name (GitHub Enterprise at http://HOST/api/v3/, any port
// dropped), so its fake GitHub listens on port 80 of a loopback address of
// its own (127.0.0.2 and up), which needs root; CI runs as root.

// githubMCPServer returns the pinned github-mcp-server binary: the file
// GHONCE_GITHUB_MCP_SERVER names, else bin/github-mcp-server at the module
// root (`make github-mcp-server`). Without it the test is skipped, loudly;
// under CI=true it fails.
func githubMCPServer(t *testing.T) string {
	t.Helper()
	path := os.Getenv("GHONCE_GITHUB_MCP_SERVER")
	if path == "" {
		root, err := harness.ModuleRoot()
		if err != nil {
			t.Fatal(err)
		}
		path = filepath.Join(root, "bin", "github-mcp-server")
	}
	if _, err := os.Stat(path); err != nil {
		skipOrFail(t, "github-mcp-server is not built (%v): run `make github-mcp-server`", err)
	}
	return path
}

func skipOrFail(t *testing.T, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; CI=true, so the tests against the real github-mcp-server must run", msg)
	}
	t.Skipf("SKIPPED: %s; the tests against the real github-mcp-server did not run (CI runs them)", msg)
}

// loopback80 listens on port 80 of the first loopback address from
// 127.0.0.2 up that is free (tests in parallel, and packages tested in
// parallel, each take one).
func loopback80(t *testing.T) (net.Listener, string) {
	t.Helper()
	var last error
	for i := 2; i < 255; i++ {
		host := fmt.Sprintf("127.0.0.%d", i)
		l, err := net.Listen("tcp", host+":80")
		if err == nil {
			return l, host
		}
		last = err
		if !errors.Is(err, syscall.EADDRINUSE) {
			break
		}
	}
	skipOrFail(t, "cannot listen on port 80 of a loopback address (%v): the fake GitHub for github-mcp-server needs it (run as root)", last)
	return nil, ""
}

// newUpstreamWorld is newWorld with its fake GitHub where github-mcp-server
// can reach it: env carries GITHUB_HOST and GITHUB_PERSONAL_ACCESS_TOKEN
// beside ghonce's GH_TOKEN and GITHUB_API_URL (the same fake, the same
// token).
func newUpstreamWorld(t *testing.T) (*world, string) {
	t.Helper()
	ghmcp := githubMCPServer(t)
	l, host := loopback80(t)
	w := newWorldWith(t, fixtures.Options{Listener: l})
	w.env = append(w.env, "GITHUB_HOST=http://"+host, "GITHUB_PERSONAL_ACCESS_TOKEN="+token)
	return w, ghmcp
}

// connect starts cmd and connects the Go SDK's client to it over stdio.
func connect(t *testing.T, cmd *exec.Cmd) (*sdk.ClientSession, *syncBuffer) {
	t.Helper()
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "ghonce-test", Version: "1"}, nil).
		Connect(ctx, &sdk.CommandTransport{Command: cmd, TerminateDuration: time.Minute}, nil)
	if err != nil {
		t.Fatalf("start %s: %v\nstderr: %s", strings.Join(cmd.Args, " "), err, stderr)
	}
	t.Cleanup(func() { _ = cs.Close(); recordOutput(t, cmd.Args, "", stderr.String()) })
	return cs, stderr
}

func callTool(t *testing.T, cs *sdk.ClientSession, tool string, args map[string]any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	b, _ := json.Marshal(res)
	recordOutput(t, []string{"mcp", tool}, string(b), "")
	return res
}

func resultText(res *sdk.CallToolResult) string {
	var txt []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			txt = append(txt, tc.Text)
		}
	}
	return strings.Join(txt, "\n")
}

// The component itself: github-mcp-server, alone, against the fake, reads
// and writes the fake's repository. What the proxy tests build on.
func TestGitHubMCPServerAgainstTheFake(t *testing.T) {
	w, ghmcp := newUpstreamWorld(t)
	cmd := exec.Command(ghmcp, "stdio")
	cmd.Env = w.env
	cs, stderr := connect(t, cmd)

	res := callTool(t, cs, "get_me", map[string]any{})
	if res.IsError || !strings.Contains(resultText(res), login) {
		t.Fatalf("get_me: isError %v: %s, want %s\nstderr: %s", res.IsError, resultText(res), login, stderr)
	}
	w.push("fix-42")
	res = callTool(t, cs, "create_pull_request", map[string]any{"owner": owner, "repo": name, "title": "Fix #42", "head": "fix-42", "base": "main"})
	if res.IsError {
		t.Fatalf("create_pull_request: %s\nstderr: %s", resultText(res), stderr)
	}
	if prs := w.fake.PullRequests(owner, name); len(prs) != 1 || prs[0].Title != "Fix #42" {
		t.Fatalf("the fake's PRs after create_pull_request: %+v, want the one", prs)
	}
}
