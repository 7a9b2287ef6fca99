package main_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startMCPHTTP starts ghonce with args (an MCP server on --http
// 127.0.0.1:0) and env, killed when t ends, and returns the URL it listens
// on and the rest of its stderr.
func startMCPHTTP(t *testing.T, env []string, args ...string) (srv *exec.Cmd, url string, rest io.Reader) {
	t.Helper()
	srv = exec.Command(bin, args...)
	srv.Env = env
	stderr, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Process.Kill(); _ = srv.Wait() })
	url, rest = listeningURL(t, stderr)
	return srv, url, rest
}

// runNodeClient runs the TypeScript SDK client (client.mjs in dir) with
// args and env, records its output, and returns its stdout.
func runNodeClient(t *testing.T, dir string, env []string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	node := exec.CommandContext(ctx, "node", append([]string{filepath.Join(dir, "client.mjs")}, args...)...)
	node.Env = env
	var nodeErr strings.Builder
	node.Stderr = &nodeErr
	stdout, err := node.Output()
	recordOutput(t, []string{"node client.mjs"}, string(stdout), nodeErr.String())
	if err != nil {
		t.Fatalf("node client.mjs: %v\nstdout: %s\nstderr: %s", err, stdout, nodeErr.String())
	}
	return stdout
}

// nodeDir is the Node client's source: package.json pins
// @modelcontextprotocol/sdk, package-lock.json its whole tree.
const nodeDir = "../../internal/mcp/testdata/node"

// A client no one on the project wrote: the official TypeScript SDK lists
// the tools and calls them over stdio, and over Streamable HTTP on
// loopback. Skipped, loudly, without node and npm; never skipped in CI.
func TestMCPWithTheTypeScriptSDK(t *testing.T) {
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not installed, and CI=true: the TypeScript SDK test must run in CI", tool)
			}
			t.Skipf("SKIPPED: %s is not installed, so the TypeScript SDK client test did not run (install Node 18+ to run it; CI must)", tool)
		}
	}
	dir := nodeModules(t)
	w := newWorld(t)

	// A server on Streamable HTTP, port chosen by the system, sharing the ledger.
	srv, url, rest := startMCPHTTP(t, w.env, "mcp", "--http", "127.0.0.1:0", "--ledger", w.ledger, "--task", "ISSUE-42")
	stdout := runNodeClient(t, dir, w.env, bin, w.ledger, url)
	type call struct {
		Structured result `json:"structured"`
		Text       string `json:"text"`
		IsError    bool   `json:"isError"`
	}
	var got struct {
		Stdio struct {
			Tools []struct {
				Name        string         `json:"name"`
				Required    []string       `json:"required"`
				Annotations map[string]any `json:"annotations"`
				HasOutput   bool           `json:"hasOutputSchema"`
			} `json:"tools"`
			First, Again, Bad call
		} `json:"stdio"`
		HTTP struct {
			Tools  int `json:"tools"`
			Status struct {
				Entries []entry `json:"entries"`
			} `json:"status"`
			IsError bool `json:"isError"`
		} `json:"http"`
	}
	oneJSON(t, string(stdout), &got)

	var names []string
	for _, tl := range got.Stdio.Tools {
		names = append(names, tl.Name)
		if tl.Name == "create_pull_request" && !slices.Equal(slices.Sorted(slices.Values(tl.Required)), []string{"base", "head", "owner", "repo", "title"}) {
			t.Errorf("create_pull_request requires %v, want owner, repo, title, head, base", tl.Required)
		}
		if tl.Annotations["idempotentHint"] != true || !tl.HasOutput {
			t.Errorf("%s: annotations %v, output schema %v; want idempotentHint and an output schema", tl.Name, tl.Annotations, tl.HasOutput)
		}
	}
	for _, n := range []string{"create_pull_request", "create_issue", "add_issue_comment", "create_branch", "create_or_update_file", "ghonce_status", "ghonce_key"} {
		if !slices.Contains(names, n) {
			t.Errorf("the TypeScript client does not see tool %s (it sees %v)", n, names)
		}
	}
	f, a := got.Stdio.First, got.Stdio.Again
	if f.IsError || f.Structured.Outcome != "created" || f.Structured.Number == 0 || !strings.HasPrefix(f.Text, "created issue #") {
		t.Errorf("first create_issue: %+v, want created with a number", f)
	}
	if a.IsError || a.Structured.Outcome != "skipped" || a.Structured.Number != f.Structured.Number || !a.Structured.PayloadChanged ||
		!strings.HasPrefix(a.Text, "already done in an earlier attempt") {
		t.Errorf("create_issue with its body reworded: %+v, want skipped, the same issue, payload_changed", a)
	}
	if b := got.Stdio.Bad; !b.IsError || !strings.Contains(b.Text, "invalid arguments") {
		t.Errorf("add_issue_comment with issue_number 0: %+v, want a tool error saying invalid arguments", b)
	}
	if n := len(w.fake.Issues(owner, name)); n != 1 {
		t.Errorf("%d issues on GitHub, want 1", n)
	}
	if h := got.HTTP; h.IsError || h.Tools != len(names) || len(h.Status.Entries) != 1 || h.Status.Entries[0].Number != f.Structured.Number {
		t.Errorf("over Streamable HTTP: %+v, want every tool and the one done entry", h)
	}

	// Stopped with SIGTERM, the HTTP server shuts down and exits 0.
	_ = srv.Process.Signal(syscall.SIGTERM)
	tail, _ := io.ReadAll(rest)
	err := srv.Wait()
	recordOutput(t, srv.Args[1:], "", string(tail))
	if err != nil {
		t.Errorf("ghonce mcp --http after SIGTERM: %v, want exit 0\nstderr: %s", err, tail)
	}
}

// listeningURL reads the server's stderr up to the line naming its URL and
// returns the URL and the rest of the stream.
func listeningURL(t *testing.T, stderr io.Reader) (string, io.Reader) {
	t.Helper()
	br := bufio.NewReader(stderr)
	var seen strings.Builder
	for {
		line, err := br.ReadString('\n')
		seen.WriteString(line)
		if _, url, ok := strings.Cut(line, " at http://"); ok {
			return "http://" + strings.TrimSpace(url), br
		}
		if err != nil {
			t.Fatalf("ghonce mcp --http ended before saying where it listens: %v\nstderr: %s", err, seen.String())
		}
	}
}

// nodeModules installs the pinned packages (npm ci) once per lock file into
// the user's cache directory and returns that directory, with client.mjs
// copied in (ES modules resolve packages from the script's own directory).
func nodeModules(t *testing.T) string {
	t.Helper()
	lock, err := os.ReadFile(filepath.Join(nodeDir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(lock)
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "ghonce-test", "node-"+hex.EncodeToString(sum[:6]))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			t.Fatal(err)
		}
		tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		for _, f := range []string{"package.json", "package-lock.json"} {
			copyFile(t, filepath.Join(nodeDir, f), filepath.Join(tmp, f))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		npm := exec.CommandContext(ctx, "npm", "ci", "--no-audit", "--no-fund", "--ignore-scripts")
		npm.Dir = tmp
		if out, err := npm.CombinedOutput(); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("npm ci (needs the npm registry): %v\n%s", err, out)
			}
			t.Skipf("SKIPPED: npm ci could not install @modelcontextprotocol/sdk (is the npm registry reachable?), so the TypeScript SDK client test did not run: %v\n%s", err, out)
		}
		// Another test process may have won the race; either tree will do.
		if err := os.Rename(tmp, dir); err != nil && !errors.Is(err, os.ErrExist) {
			if _, serr := os.Stat(dir); serr != nil {
				t.Fatal(err)
			}
		}
	}
	// Written under a temporary name and renamed, so that concurrent runs
	// never see half a script.
	tmp := filepath.Join(dir, "client.mjs."+strings.ReplaceAll(t.Name(), "/", "_")+".tmp")
	copyFile(t, filepath.Join(nodeDir, "client.mjs"), tmp)
	if err := os.Rename(tmp, filepath.Join(dir, "client.mjs")); err != nil {
		t.Fatal(err)
	}
	return dir
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
