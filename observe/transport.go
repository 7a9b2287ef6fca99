package observe

import (
	"net/http"
	"strconv"
)

// Transport returns base with every request counted in m
// (ghonce_github_requests_total) and traced by t as a client span, a child
// of the span the request's context carries. With both nil it returns base.
// The span carries the method, the URL without its query, the server and
// the status code (OpenTelemetry's HTTP client conventions); never a
// header.
func Transport(base http.RoundTripper, t *Tracer, m *Metrics) http.RoundTripper {
	if t == nil && m == nil {
		return base
	}
	return &transport{base: base, t: t, m: m}
}

type transport struct {
	base http.RoundTripper
	t    *Tracer
	m    *Metrics
}

func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	u := *req.URL
	u.RawQuery, u.User, u.Fragment = "", nil, ""
	_, sp := tr.t.Start(req.Context(), req.Method, Client,
		String("http.request.method", req.Method), String("url.full", u.String()),
		String("server.address", req.URL.Hostname()))
	if p := req.URL.Port(); p != "" && sp != nil {
		if n, err := strconv.Atoi(p); err == nil {
			sp.Set(Int("server.port", int64(n)))
		}
	}
	resp, err := tr.base.RoundTrip(req)
	code := 0
	if resp != nil {
		code = resp.StatusCode
	}
	tr.m.GitHubRequest(req.Method, code)
	switch {
	case err != nil:
		sp.Fail("transport", "no answer from GitHub")
	case code >= 400:
		sp.Set(Int("http.response.status_code", int64(code)))
		sp.Fail(strconv.Itoa(code), http.StatusText(code))
	default:
		sp.Set(Int("http.response.status_code", int64(code)))
	}
	sp.End()
	return resp, err
}
