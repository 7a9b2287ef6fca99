package mcp

import (
	"net"
	"net/http"
	"net/url"
	"strings"
)

// checkOrigin refuses, with 403, a request whose Origin header names a
// site other than this machine's loopback (http://localhost:PORT,
// http://127.0.0.1:PORT, http://[::1]:PORT), as the MCP spec's Streamable
// HTTP transport requires: a web page the user visits must not drive a
// server that acts with the user's token. A request without Origin (a
// program, not a browser) passes; "null" (a sandboxed page, a file) does
// not.
func checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Values("Origin"); len(o) > 0 && (len(o) > 1 || !loopbackOrigin(o[0])) {
			http.Error(w, "Forbidden: the Origin of this request is not this machine's loopback; ghonce's MCP server answers only local clients", http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func loopbackOrigin(o string) bool {
	u, err := url.Parse(strings.TrimSpace(o))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return false
	}
	h := u.Hostname()
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
