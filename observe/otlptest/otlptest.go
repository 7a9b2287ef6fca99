// Package otlptest is an OTLP/HTTP trace receiver on loopback, for tests
// that read the spans a program exported, as a collector would receive
// them. It decodes with OpenTelemetry's generated OTLP types
// (go.opentelemetry.io/proto/otlp), not with anything ghonce wrote, so a
// test that reads a span here proves ghonce's hand-written encoder against
// the protocol's own definition. Only tests import it: the ghonce binary
// carries no protobuf runtime.
package otlptest

import (
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"
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
	Start, End                    uint64 // Unix nanoseconds
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

func attrs(kvs []*common.KeyValue) map[string]any {
	m := map[string]any{}
	for _, kv := range kvs {
		switch v := kv.GetValue().GetValue().(type) {
		case *common.AnyValue_StringValue:
			m[kv.GetKey()] = v.StringValue
		case *common.AnyValue_IntValue:
			m[kv.GetKey()] = v.IntValue
		case *common.AnyValue_BoolValue:
			m[kv.GetKey()] = v.BoolValue
		}
	}
	return m
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path != "/v1/traces" || req.Method != http.MethodPost {
		http.NotFound(w, req)
		return
	}
	if req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "this receiver reads OTLP/HTTP protobuf", http.StatusUnsupportedMediaType)
		return
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var doc collectortrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &doc); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.headers = append(r.headers, req.Header.Clone())
	for _, rs := range doc.GetResourceSpans() {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, Span{TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentSpanID: hex.EncodeToString(s.GetParentSpanId()), Name: s.GetName(), Kind: int(s.GetKind()),
					Attrs: attrs(s.GetAttributes()), StatusCode: int(s.GetStatus().GetCode()), StatusMessage: s.GetStatus().GetMessage(),
					Resource: res, Scope: ss.GetScope().GetName(), Start: s.GetStartTimeUnixNano(), End: s.GetEndTimeUnixNano()})
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(nil)
}
