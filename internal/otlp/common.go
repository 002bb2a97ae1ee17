package otlp

import (
	"encoding/binary"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/resource"
)

// KeyValues writes attributes as repeated opentelemetry.proto.common.v1.KeyValue
// in field.
func (e *Encoder) KeyValues(field int, kvs []attribute.KeyValue) {
	for _, kv := range kvs {
		e.Message(field, func(e *Encoder) {
			e.String(1, string(kv.Key))
			e.Message(2, func(e *Encoder) { e.anyValue(kv.Value) })
		})
	}
}

// anyValue writes the members of an AnyValue.
func (e *Encoder) anyValue(v attribute.Value) {
	switch v.Type() {
	case attribute.BOOL:
		e.tag(2, wireVarint)
		if v.AsBool() {
			e.b = append(e.b, 1)
		} else {
			e.b = append(e.b, 0)
		}
	case attribute.INT64:
		e.tag(3, wireVarint)
		e.b = binary.AppendUvarint(e.b, uint64(v.AsInt64()))
	case attribute.FLOAT64:
		e.Double(4, v.AsFloat64())
	case attribute.STRING:
		e.StringAlways(1, v.AsString())
	case attribute.BYTESLICE:
		e.tag(7, wireBytes)
		b := v.AsByteSlice()
		e.b = binary.AppendUvarint(e.b, uint64(len(b)))
		e.b = append(e.b, b...)
	case attribute.BOOLSLICE:
		e.array(len(v.AsBoolSlice()), func(i int) attribute.Value { return attribute.BoolValue(v.AsBoolSlice()[i]) })
	case attribute.INT64SLICE:
		s := v.AsInt64Slice()
		e.array(len(s), func(i int) attribute.Value { return attribute.Int64Value(s[i]) })
	case attribute.FLOAT64SLICE:
		s := v.AsFloat64Slice()
		e.array(len(s), func(i int) attribute.Value { return attribute.Float64Value(s[i]) })
	case attribute.STRINGSLICE:
		s := v.AsStringSlice()
		e.array(len(s), func(i int) attribute.Value { return attribute.StringValue(s[i]) })
	case attribute.SLICE:
		s := v.AsSlice()
		e.array(len(s), func(i int) attribute.Value { return s[i] })
	case attribute.MAP:
		m := v.AsMap()
		e.Message(6, func(e *Encoder) { e.KeyValues(1, m) })
	default:
		// EMPTY and INVALID: an AnyValue with no member.
	}
}

// array writes an ArrayValue (AnyValue's member 5) of n values.
func (e *Encoder) array(n int, at func(int) attribute.Value) {
	e.Message(5, func(e *Encoder) {
		for i := range n {
			e.Message(1, func(e *Encoder) { e.anyValue(at(i)) })
		}
	})
}

// Resource writes an opentelemetry.proto.resource.v1.Resource in field.
func (e *Encoder) Resource(field int, r *resource.Resource) {
	e.Message(field, func(e *Encoder) { e.KeyValues(1, r.Attributes()) })
}

// Scope writes an opentelemetry.proto.common.v1.InstrumentationScope in
// field.
func (e *Encoder) Scope(field int, s instrumentation.Scope) {
	e.Message(field, func(e *Encoder) {
		e.String(1, s.Name)
		e.String(2, s.Version)
		e.KeyValues(3, s.Attributes.ToSlice())
	})
}
