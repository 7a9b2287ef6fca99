// Package otlptest is an OTLP/HTTP trace receiver on loopback, for tests
// that read the spans a program exported, as a collector would receive
// them (OTLP's JSON encoding: set OTEL_EXPORTER_OTLP_PROTOCOL=http/json).
package otlptest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
)

// Span is one received span, flattened.
type Span struct {
	TraceID, SpanID, ParentSpanID string
	Name                          string
	Kind                          int // 1 internal, 2 server, 3 client
	Attrs                         map[string]any
	StatusCode                    int // 0 unset, 2 error
	StatusMessage                 string
	Resource                      map[string]any
	Scope                         string
}

// Attr returns a's value as a string ("" when absent).
func (s Span) Attr(a string) string {
	switch v := s.Attrs[a].(type) {
	case nil:
		return ""
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case int64:
		return strconv.FormatInt(v, 10)
	}
	return ""
}

// Receiver collects the spans POSTed to /v1/traces.
type Receiver struct {
	srv *httptest.Server

	mu      sync.Mutex
	spans   []Span
	headers []http.Header
}

// New starts a receiver, closed when t ends.
func New(t testing.TB) *Receiver {
	r := &Receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

// URL is the receiver's root, for OTEL_EXPORTER_OTLP_ENDPOINT.
func (r *Receiver) URL() string { return r.srv.URL }

// Spans returns every span received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Headers returns each export request's headers.
func (r *Receiver) Headers() []http.Header {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]http.Header(nil), r.headers...)
}

type anyValue struct {
	StringValue *string `json:"stringValue"`
	IntValue    *string `json:"intValue"`
	BoolValue   *bool   `json:"boolValue"`
}

type keyValue struct {
	Key   string   `json:"key"`
	Value anyValue `json:"value"`
}

func attrs(kvs []keyValue) map[string]any {
	m := map[string]any{}
	for _, kv := range kvs {
		switch {
		case kv.Value.StringValue != nil:
			m[kv.Key] = *kv.Value.StringValue
		case kv.Value.IntValue != nil:
			n, _ := strconv.ParseInt(*kv.Value.IntValue, 10, 64)
			m[kv.Key] = n
		case kv.Value.BoolValue != nil:
			m[kv.Key] = *kv.Value.BoolValue
		}
	}
	return m
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/v1/traces" || req.Method != http.MethodPost {
		http.NotFound(w, req)
		return
	}
	if req.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "this receiver reads OTLP/JSON only: set OTEL_EXPORTER_OTLP_PROTOCOL=http/json", http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var doc struct {
		ResourceSpans []struct {
			Resource struct {
				Attributes []keyValue `json:"attributes"`
			} `json:"resource"`
			ScopeSpans []struct {
				Scope struct {
					Name string `json:"name"`
				} `json:"scope"`
				Spans []struct {
					TraceID      string     `json:"traceId"`
					SpanID       string     `json:"spanId"`
					ParentSpanID string     `json:"parentSpanId"`
					Name         string     `json:"name"`
					Kind         int        `json:"kind"`
					Attributes   []keyValue `json:"attributes"`
					Status       struct {
						Code    int    `json:"code"`
						Message string `json:"message"`
					} `json:"status"`
				} `json:"spans"`
			} `json:"scopeSpans"`
		} `json:"resourceSpans"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.headers = append(r.headers, req.Header.Clone())
	for _, rs := range doc.ResourceSpans {
		res := attrs(rs.Resource.Attributes)
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				r.spans = append(r.spans, Span{TraceID: s.TraceID, SpanID: s.SpanID, ParentSpanID: s.ParentSpanID,
					Name: s.Name, Kind: s.Kind, Attrs: attrs(s.Attributes), StatusCode: s.Status.Code,
					StatusMessage: s.Status.Message, Resource: res, Scope: ss.Scope.Name})
			}
		}
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{}`))
}
