package observe

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"sync"
	"time"
)

// SpanContext identifies a span across processes, as W3C Trace Context's
// traceparent header carries it.
type SpanContext struct {
	TraceID [16]byte
	SpanID  [8]byte
	Sampled bool
}

// Valid reports whether sc names a span (neither id all zeros).
func (sc SpanContext) Valid() bool { return sc.TraceID != [16]byte{} && sc.SpanID != [8]byte{} }

// Traceparent is sc as a W3C traceparent header value.
func (sc SpanContext) Traceparent() string {
	flags := "00"
	if sc.Sampled {
		flags = "01"
	}
	return "00-" + hex.EncodeToString(sc.TraceID[:]) + "-" + hex.EncodeToString(sc.SpanID[:]) + "-" + flags
}

// ParseTraceparent reads a W3C traceparent header value (version 00, or a
// later version's first four fields); ok is false for anything malformed
// or all-zero, which the caller then ignores, starting a trace of its own.
func ParseTraceparent(s string) (sc SpanContext, ok bool) {
	parts := strings.Split(strings.TrimSpace(s), "-")
	if len(parts) < 4 || len(parts[0]) != 2 || parts[0] == "ff" || (parts[0] == "00" && len(parts) != 4) {
		return sc, false
	}
	if !lowerHex(parts[0]) || len(parts[1]) != 32 || len(parts[2]) != 16 || len(parts[3]) != 2 {
		return sc, false
	}
	for _, p := range parts[1:4] {
		if !lowerHex(p) {
			return sc, false
		}
	}
	if _, err := hex.Decode(sc.TraceID[:], []byte(parts[1])); err != nil {
		return sc, false
	}
	if _, err := hex.Decode(sc.SpanID[:], []byte(parts[2])); err != nil {
		return sc, false
	}
	var flags [1]byte
	if _, err := hex.Decode(flags[:], []byte(parts[3])); err != nil {
		return sc, false
	}
	sc.Sampled = flags[0]&1 == 1
	return sc, sc.Valid()
}

func lowerHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// Kind is a span's kind, as OTLP numbers it.
type Kind int

const (
	Internal Kind = 1
	Server   Kind = 2
	Client   Kind = 3
)

// Attr is a span attribute: a string, an int64 or a bool.
type Attr struct {
	Key   string
	Value any
}

// String, Int and Bool make attributes.
func String(k, v string) Attr    { return Attr{k, v} }
func Int(k string, v int64) Attr { return Attr{k, v} }
func Bool(k string, v bool) Attr { return Attr{k, v} }

// Span is one operation being traced. A nil *Span (tracing off, or the
// trace not sampled) ignores every call.
type Span struct {
	t      *Tracer
	host   HostSpan // the host's span (NewHostTracer), which records it all
	sc     SpanContext
	parent [8]byte
	name   string
	kind   Kind
	start  time.Time

	mu        sync.Mutex
	end       time.Time
	attrs     []Attr
	errStatus bool
	errMsg    string
	ended     bool
}

// Context returns s's identity, the zero SpanContext for a nil span.
func (s *Span) Context() SpanContext {
	if s == nil {
		return SpanContext{}
	}
	return s.sc
}

// Set adds attributes (a later value of a key replaces an earlier one).
func (s *Span) Set(attrs ...Attr) {
	if s == nil {
		return
	}
	if s.host != nil {
		s.host.Set(attrs...)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range attrs {
		replaced := false
		for i := range s.attrs {
			if s.attrs[i].Key == a.Key {
				s.attrs[i], replaced = a, true
			}
		}
		if !replaced {
			s.attrs = append(s.attrs, a)
		}
	}
}

// Fail marks s as failed, with errType as its error.type attribute and msg
// as its status message. msg must not carry a secret.
func (s *Span) Fail(errType, msg string) {
	if s == nil {
		return
	}
	if s.host != nil {
		s.host.Fail(errType, msg)
		return
	}
	s.Set(String("error.type", errType))
	s.mu.Lock()
	s.errStatus, s.errMsg = true, msg
	s.mu.Unlock()
}

// End ends s and queues it for export; later calls do nothing.
func (s *Span) End() {
	if s == nil {
		return
	}
	if s.host != nil {
		s.host.End()
		return
	}
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended, s.end = true, s.t.now()
	s.mu.Unlock()
	s.t.queue(s)
}

type spanKey struct{}
type remoteKey struct{}

// SpanFromContext returns the span ctx carries, nil if none.
func SpanFromContext(ctx context.Context) *Span {
	s, _ := ctx.Value(spanKey{}).(*Span)
	return s
}

// ContextWithRemote returns ctx carrying sc, a span of another process
// (an MCP client's, from its traceparent), as the parent of the next span
// started from it.
func ContextWithRemote(ctx context.Context, sc SpanContext) context.Context {
	if !sc.Valid() {
		return ctx
	}
	return context.WithValue(ctx, remoteKey{}, sc)
}

// ContextWithSpan returns ctx carrying s as the parent of the spans started
// from it.
func ContextWithSpan(ctx context.Context, s *Span) context.Context {
	if s == nil {
		return ctx
	}
	return context.WithValue(ctx, spanKey{}, s)
}

// parentOf is the span context ctx's next span descends from.
func parentOf(ctx context.Context) (SpanContext, bool) {
	if s := SpanFromContext(ctx); s != nil {
		return s.sc, true
	}
	sc, ok := ctx.Value(remoteKey{}).(SpanContext)
	return sc, ok
}

// Start starts a span named name as a child of the span ctx carries (or of
// the remote parent ContextWithRemote put there), and returns ctx carrying
// it. On a nil Tracer it returns ctx and a nil span: nothing is recorded
// and nothing allocated beyond the call.
func (t *Tracer) Start(ctx context.Context, name string, kind Kind, attrs ...Attr) (context.Context, *Span) {
	if t == nil {
		return ctx, nil
	}
	if t.host != nil {
		ctx, hs := t.host.Start(ctx, name, kind, attrs...)
		s := &Span{t: t, host: hs, sc: hs.Context(), name: name, kind: kind}
		return context.WithValue(ctx, spanKey{}, s), s
	}
	parent, hasParent := parentOf(ctx)
	s := &Span{t: t, name: name, kind: kind, start: t.now()}
	if hasParent && parent.Valid() {
		s.sc.TraceID = parent.TraceID
		s.parent = parent.SpanID
	} else {
		hasParent = false
		_, _ = rand.Read(s.sc.TraceID[:])
	}
	_, _ = rand.Read(s.sc.SpanID[:])
	s.sc.Sampled = t.sample(s.sc.TraceID, parent, hasParent)
	if !s.sc.Sampled {
		// Not recorded, but its children stay in the trace, unsampled.
		return context.WithValue(ctx, remoteKey{}, s.sc), nil
	}
	s.attrs = append(s.attrs, attrs...)
	return context.WithValue(ctx, spanKey{}, s), s
}

// sample decides whether a new span is recorded (OTEL_TRACES_SAMPLER).
func (t *Tracer) sample(trace [16]byte, parent SpanContext, hasParent bool) bool {
	if hasParent && t.parentBased {
		return parent.Sampled
	}
	switch {
	case t.ratio >= 1:
		return true
	case t.ratio <= 0:
		return false
	}
	// The trace id's low 8 bytes against the ratio, as the SDKs'
	// TraceIDRatioBased does: the same trace gets the same answer everywhere.
	return binary.BigEndian.Uint64(trace[8:])>>1 < uint64(t.ratio*(1<<63))
}
