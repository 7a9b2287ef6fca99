package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ghonce/ghonce/internal/mcp"
)

// Over stdio, every frame that is not a JSON-RPC 2.0 message gets the
// JSON-RPC error the spec names for it, and the server keeps serving:
// after each one, a tools/list still answers.
func TestStdioAnswersBadFramesAndGoesOn(t *testing.T) {
	w := newWorld(t, opts{})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.srv.ServeIO(ctx, inR, outW) }()
	t.Cleanup(func() {
		inW.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("ServeIO: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("ServeIO did not return after its input closed")
		}
		cancel()
		outW.Close()
	})
	lines := bufio.NewReader(outR)
	send := func(frame string) {
		t.Helper()
		if _, err := io.WriteString(inW, frame+"\n"); err != nil {
			t.Fatalf("write %q: %v", frame, err)
		}
	}
	recv := func() map[string]any {
		t.Helper()
		type line struct {
			s   string
			err error
		}
		c := make(chan line, 1)
		go func() { s, err := lines.ReadString('\n'); c <- line{s, err} }()
		select {
		case l := <-c:
			if l.err != nil {
				t.Fatalf("read an answer: %v (the server stopped?)", l.err)
			}
			t.Logf("<- %.200s", l.s)
			var m map[string]any
			if err := json.Unmarshal([]byte(l.s), &m); err != nil {
				t.Fatalf("answer %q is not JSON: %v", l.s, err)
			}
			return m
		case <-time.After(30 * time.Second):
			t.Fatal("no answer within 30s")
		}
		return nil
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := recv(); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	next := 100
	alive := func(after string) {
		t.Helper()
		next++
		send(`{"jsonrpc":"2.0","id":` + itoa(next) + `,"method":"tools/list"}`)
		if m := recv(); m["result"] == nil || m["id"] != float64(next) {
			t.Fatalf("tools/list after %q: %v; want its result", after, m)
		}
	}
	for _, tc := range []struct {
		frame string
		code  float64
		id    any
	}{
		{"garbage", -32700, nil},
		{`{"jsonrpc":"2.0","id":7,"method":`, -32700, nil},
		{"\xff\xfe{}", -32700, nil},
		{`{"jsonrpc":"2.0","id":8,"method":"tools/list"} {}`, -32700, nil},
		{`{}`, -32600, nil},
		{`[]`, -32600, nil},
		{`[{"jsonrpc":"2.0","id":9,"method":"tools/list"},{"jsonrpc":"2.0","id":10,"method":"tools/list"}]`, -32600, nil},
		{`{"jsonrpc":"1.0","id":11,"method":"tools/list"}`, -32600, float64(11)},
		{`{"id":12,"method":"tools/list"}`, -32600, float64(12)},
		{`{"jsonrpc":"2.0","id":null,"method":"tools/list"}`, -32600, nil},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, -32600, nil},
		{`{"jsonrpc":"2.0","id":13,"method":42}`, -32600, float64(13)},
		{`{"jsonrpc":"2.0","id":14,"method":"tools/list","params":"x"}`, -32600, float64(14)},
		{`{"jsonrpc":"2.0","id":15}`, -32600, float64(15)},
		{`"just a string"`, -32600, nil},
		{`42`, -32600, nil},
		{`{"jsonrpc":"2.0","id":"s","method":"tools/list"` + strings.Repeat(" ", mcp.MaxFrame+1) + `}`, -32600, nil},
	} {
		send(tc.frame)
		m := recv()
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != tc.code || m["id"] != tc.id || m["jsonrpc"] != "2.0" {
			t.Errorf("frame %.60q: answer %v; want error %v with id %v", tc.frame, m, tc.code, tc.id)
		}
		alive(tc.frame)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// --http checks Origin as the MCP spec requires: a foreign origin (a web
// page the user happens to visit, or one another local program serves on
// another port) gets 403 for every method; the server's own origin and a
// client that sends none are served.
func TestHTTPRefusesAForeignOrigin(t *testing.T) {
	w := newWorld(t, opts{})
	ts := httptest.NewServer(w.srv.Handler(mcp.HTTPOptions{}))
	t.Cleanup(ts.Close)
	post := func(method, origin string) int {
		t.Helper()
		req, _ := http.NewRequest(method, ts.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	port := ts.URL[strings.LastIndex(ts.URL, ":")+1:]
	other := "1"
	if port == other {
		other = "2"
	}
	for _, o := range []string{"https://evil.example", "http://localhost.evil.example", "null", "http://192.168.1.5:8765", "file://",
		"http://127.0.0.1:" + other, "http://localhost:" + other, "http://[::1]:" + other, "http://127.0.0.1", "https://127.0.0.1:" + port,
		"http://127.0.0.1:" + port + "/page", "http://127.0.0.1:" + port + "1"} {
		for _, m := range []string{"POST", "GET", "DELETE"} {
			if code := post(m, o); code != http.StatusForbidden {
				t.Errorf("%s with Origin %q: status %d, want 403", m, o, code)
			}
		}
	}
	for _, o := range []string{"", ts.URL, "http://localhost:" + port, "http://[::1]:" + port, "HTTP://LOCALHOST:" + port} {
		if code := post("POST", o); code != http.StatusOK {
			t.Errorf("POST with Origin %q: status %d, want 200", o, code)
		}
	}
}

// The frame limit docs/guide/trust.md states is the one the server applies.
func TestDocsStateTheFrameLimit(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "guide", "trust.md"))
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("A line over %d MiB", mcp.MaxFrame>>20); !strings.Contains(string(doc), want) {
		t.Errorf("docs/guide/trust.md does not say %q", want)
	}
}
