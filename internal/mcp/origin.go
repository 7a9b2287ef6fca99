package mcp

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// checkOrigin refuses, with 403, a request whose Origin header names an
// origin other than this server's own (http://localhost:PORT,
// http://127.0.0.1:PORT or http://[::1]:PORT, PORT being the port the
// request came in on), as the MCP spec's Streamable HTTP transport
// requires: a web page the user visits must not drive a server that acts
// with the user's token. A page served by another local program (another
// port, or https) is another origin, refused too. A request without Origin
// (a program, not a browser) passes; "null" (a sandboxed page, a file)
// does not.
func checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Values("Origin"); len(o) > 0 && (len(o) > 1 || !ownOrigin(o[0], r)) {
			http.Error(w, "Forbidden: this request's Origin is not this server's own (loopback, this port); ghonce's MCP server answers only local clients, never a web page", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ownOrigin reports whether Origin o is the origin r was served on: a
// loopback host, the scheme r came in with and the port it came in on.
func ownOrigin(o string, r *http.Request) bool {
	u, err := url.Parse(strings.TrimSpace(o))
	if err != nil || u.Host == "" || u.User != nil || u.Path != "" || u.RawQuery != "" {
		return false
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if u.Scheme != scheme || !isLoopback(u.Hostname()) {
		return false
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return port == servedPort(r)
}

// servedPort is the local port r arrived on ("" if unknown, which no
// Origin matches).
func servedPort(r *http.Request) string {
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, p, err := net.SplitHostPort(a.String()); err == nil {
			return p
		}
	}
	return ""
}
