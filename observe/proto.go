package observe

import "encoding/binary"

// The OTLP protobuf encoding of an ExportTraceServiceRequest, written by
// hand (opentelemetry-proto's trace/v1 and common/v1 field numbers) so the
// core module needs no protobuf runtime: only the fields ghonce sets.

type pbuf []byte

func (b pbuf) varint(v uint64) pbuf { return binary.AppendUvarint(b, v) }

func (b pbuf) tag(field, wire int) pbuf { return b.varint(uint64(field)<<3 | uint64(wire)) }

func (b pbuf) bytes(field int, v []byte) pbuf {
	return append(b.tag(field, 2).varint(uint64(len(v))), v...)
}

func (b pbuf) str(field int, v string) pbuf {
	return append(b.tag(field, 2).varint(uint64(len(v))), v...)
}

func (b pbuf) uvarintField(field int, v uint64) pbuf { return b.tag(field, 0).varint(v) }

func (b pbuf) fixed64(field int, v uint64) pbuf {
	return binary.LittleEndian.AppendUint64(b.tag(field, 1), v)
}

func protoKV(a Attr) []byte {
	var v pbuf
	switch x := a.Value.(type) {
	case string:
		v = v.str(1, x) // AnyValue.string_value
	case bool:
		n := uint64(0)
		if x {
			n = 1
		}
		v = v.uvarintField(2, n) // AnyValue.bool_value
	case int64:
		v = v.uvarintField(3, uint64(x)) // AnyValue.int_value
	}
	var kv pbuf
	return kv.str(1, a.Key).bytes(2, v) // KeyValue.key, value
}

func (t *Tracer) encodeProto(batch []*Span) []byte {
	var res pbuf
	for _, a := range t.resource {
		res = res.bytes(1, protoKV(a)) // Resource.attributes
	}
	var scope pbuf
	scope = scope.str(1, t.scope).str(2, t.version) // InstrumentationScope.name, version
	var ss pbuf
	ss = ss.bytes(1, scope) // ScopeSpans.scope
	for _, s := range batch {
		s.mu.Lock()
		var sp pbuf
		sp = sp.bytes(1, s.sc.TraceID[:]).bytes(2, s.sc.SpanID[:])
		if s.parent != [8]byte{} {
			sp = sp.bytes(4, s.parent[:])
		}
		sp = sp.str(5, s.name).uvarintField(6, uint64(s.kind)).
			fixed64(7, uint64(s.start.UnixNano())).fixed64(8, uint64(s.end.UnixNano()))
		for _, a := range s.attrs {
			sp = sp.bytes(9, protoKV(a))
		}
		if s.errStatus {
			var st pbuf
			st = st.str(2, s.errMsg).uvarintField(3, 2) // Status.message, code ERROR
			sp = sp.bytes(15, st)
		}
		s.mu.Unlock()
		ss = ss.bytes(2, sp) // ScopeSpans.spans
	}
	var rs pbuf
	rs = rs.bytes(1, res).bytes(2, ss) // ResourceSpans.resource, scope_spans
	var req pbuf
	return req.bytes(1, rs) // ExportTraceServiceRequest.resource_spans
}
