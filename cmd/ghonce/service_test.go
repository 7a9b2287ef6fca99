package main_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/ghonce/ghonce/fixtures"
	"github.com/ghonce/ghonce/internal/fakegithub"
	"github.com/ghonce/ghonce/ledger/postgres/pgtest"
	"github.com/ghonce/ghonce/tests/harness"
)

const serviceBearer = "fleet-bearer-token-7b1e0c9d2f4a6e8b0c1d3f5a7b9c"

// bearerTransport sends the service's bearer token with every request.
type bearerTransport struct{}

func (bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+serviceBearer)
	return http.DefaultTransport.RoundTrip(r)
}

// replica is one `ghonce mcp --http` process of a fleet.
type replica struct {
	cmd  *exec.Cmd
	url  string
	rest io.Reader
}

// startReplica starts `ghonce mcp --http 0.0.0.0:0` on the Postgres
// ledger loc, with the bearer token from a file, as a replica of a fleet
// runs; it returns its URL on loopback.
func (w *world) startReplica(loc string) *replica {
	w.t.Helper()
	tokenFile := filepath.Join(w.dir, "mcp-token")
	if err := os.WriteFile(tokenFile, []byte(serviceBearer+"\n"), 0o600); err != nil {
		w.t.Fatal(err)
	}
	cmd, url, rest := startMCPHTTP(w.t, w.env, "mcp", "--http", "0.0.0.0:0", "--allowed-host", "ghonce.internal",
		"--auth-token-file", tokenFile, "--ledger", loc, "--task", "ISSUE-42", "--settle", "1s")
	// Listening on every interface, it names [::]; clients here reach it on loopback.
	url = strings.Replace(strings.Replace(url, "[::]", "127.0.0.1", 1), "0.0.0.0", "127.0.0.1", 1)
	return &replica{cmd: cmd, url: strings.TrimSuffix(url, "/mcp"), rest: rest}
}

// session connects an MCP client to r with the bearer token.
func (r *replica) session(t *testing.T) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "fleet-client", Version: "1"}, nil).
		Connect(ctx, &sdk.StreamableClientTransport{Endpoint: r.url + "/mcp", HTTPClient: &http.Client{Transport: bearerTransport{}}}, nil)
	if err != nil {
		t.Fatalf("connect to %s: %v", r.url, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s %s", url, resp.Status, b)
	}
	return string(b)
}

// Two replicas of `ghonce mcp --http` on one Postgres ledger, behind a
// client whose retry goes to the other replica: the first is killed
// (SIGKILL) the moment GitHub commits its pull request; the retry, on the
// second replica, takes the dead replica's claim over and returns the
// first call's pull request. One pull request in all.
func TestTwoReplicasOneLedgerRetryOnTheOther(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.push("fix-42")
	loc := pgtest.Schema(t)
	wantExit(t, w.exec(nil, nil, "init", "--ledger", loc), 0, "init on Postgres")
	a, b := w.startReplica(loc), w.startReplica(loc)

	var killed atomic.Bool
	w.fake.OnCommit(func(c *fixtures.Commit) {
		if c.Kind == fakegithub.KindPull && killed.CompareAndSwap(false, true) {
			harness.KillAndWaitDead(a.cmd.Process)
		}
	})
	call := func(cs *sdk.ClientSession, title string) (*sdk.CallToolResult, error) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		return cs.CallTool(ctx, &sdk.CallToolParams{Name: "create_pull_request",
			Arguments: mcpArgs("title", title, "head", "fix-42", "base", "main", "body", "Generated fix.")})
	}
	if _, err := call(a.session(t), "Fix #42"); err == nil || !killed.Load() {
		t.Fatalf("the call on replica A: err %v, killed %v; want A killed at GitHub's commit", err, killed.Load())
	}
	w.fake.OnCommit(nil)
	made := w.ourPRs()
	if len(made) != 1 {
		t.Fatalf("after A died: %d pull requests, want the 1 GitHub committed", len(made))
	}

	// The client's retry goes to replica B, reworded as a model rewords.
	res, err := call(b.session(t), "Fix issue 42")
	if err != nil || res.IsError {
		t.Fatalf("the retry on replica B: %v %+v", err, res)
	}
	var out struct {
		Outcome string `json:"outcome"`
		Number  int    `json:"number"`
	}
	if bs, err := json.Marshal(res.StructuredContent); err != nil || json.Unmarshal(bs, &out) != nil {
		t.Fatalf("structuredContent %s: %v", bs, err)
	}
	if out.Outcome != "found" || out.Number != made[0].Number {
		t.Fatalf("the retry on replica B: %+v, want found, #%d (the first call's)", out, made[0].Number)
	}
	if n := len(w.ourPRs()); n != 1 {
		t.Fatalf("%d pull requests after the retry, want 1", n)
	}

	// What B's operator sees: it took the key over, and found the PR.
	m := scrape(t, b.url+"/metrics")
	for _, want := range []string{"ghonce_takeovers_total 1", `ghonce_actions_total{kind="pr",outcome="found"} 1`, "ghonce_ledger_attempting_entries 0"} {
		if !strings.Contains(m, want) {
			t.Errorf("replica B's /metrics lacks %q:\n%s", want, m)
		}
	}
	if h := scrape(t, b.url+"/healthz"); strings.TrimSpace(h) != "ok" {
		t.Errorf("/healthz: %q", h)
	}
	// Stopped with SIGTERM, B exits 0.
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	tail, _ := io.ReadAll(b.rest)
	if err := b.cmd.Wait(); err != nil {
		t.Errorf("replica B after SIGTERM: %v, want exit 0\nstderr: %s", err, tail)
	}
	recordOutput(t, b.cmd.Args[1:], "", string(tail))
}

// Another than a loopback address needs a bearer token, and an address on
// every interface needs the host names clients use.
func TestMCPHTTPFleetFlags(t *testing.T) {
	w := newWorld(t)
	short := filepath.Join(w.dir, "short")
	_ = os.WriteFile(short, []byte("too-short\n"), 0o600)
	for _, tc := range []struct {
		args []string
		env  []string
		want string
	}{
		{[]string{"--http", "0.0.0.0:0"}, nil, "--auth-token-file"},
		{[]string{"--http", "0.0.0.0:0"}, []string{"GHONCE_MCP_AUTH_TOKEN=" + serviceBearer}, "--allowed-host"},
		{[]string{"--http", "127.0.0.1:0", "--auth-token-file", short}, nil, "at least 32 characters"},
		{[]string{"--http", "127.0.0.1:0", "--auth-token-file", filepath.Join(w.dir, "missing")}, nil, "read the bearer token"},
		{[]string{"--auth-token-file", short}, nil, "are for --http"},
	} {
		o := w.exec(nil, tc.env, append([]string{"mcp", "--ledger", w.ledger}, tc.args...)...)
		wantExit(t, o, 2, strings.Join(tc.args, " "))
		if !strings.Contains(o.Stderr, tc.want) || strings.Contains(o.Stderr, serviceBearer) || strings.Contains(o.Stderr, "too-short") {
			t.Errorf("%v: stderr %q, want it to say %q and show no token", tc.args, o.Stderr, tc.want)
		}
	}
}
