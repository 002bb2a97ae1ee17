package otlp

import (
	"encoding/binary"
	"math"
)

// Protobuf wire types.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

// Encoder appends protobuf fields to a buffer. Fields are written in the
// order given; a zero scalar is written too only by the methods that say
// so, as proto3 leaves zero values out.
type Encoder struct{ b []byte }

// Bytes is the encoded message.
func (e *Encoder) Bytes() []byte { return e.b }

// Reset empties the encoder, keeping its buffer.
func (e *Encoder) Reset() { e.b = e.b[:0] }

func (e *Encoder) tag(field, wire int) {
	e.b = binary.AppendUvarint(e.b, uint64(field)<<3|uint64(wire))
}

// Uint writes a varint field (uint32, uint64, an enum); zero is left out.
func (e *Encoder) Uint(field int, v uint64) {
	if v != 0 {
		e.tag(field, wireVarint)
		e.b = binary.AppendUvarint(e.b, v)
	}
}

// Int writes an int64 field as protobuf does (two's complement varint);
// zero is left out.
func (e *Encoder) Int(field int, v int64) { e.Uint(field, uint64(v)) }

// Bool writes a bool field; false is left out.
func (e *Encoder) Bool(field int, v bool) {
	if v {
		e.Uint(field, 1)
	}
}

// Fixed64 writes a fixed64 (or sfixed64) field; zero is left out.
func (e *Encoder) Fixed64(field int, v uint64) {
	if v != 0 {
		e.tag(field, wireFixed64)
		e.b = binary.LittleEndian.AppendUint64(e.b, v)
	}
}

// Fixed32 writes a fixed32 field; zero is left out.
func (e *Encoder) Fixed32(field int, v uint32) {
	if v != 0 {
		e.tag(field, wireFixed32)
		e.b = binary.LittleEndian.AppendUint32(e.b, v)
	}
}

// Double writes a double field, zero included: the callers' doubles are
// members of a oneof or optional, where presence counts.
func (e *Encoder) Double(field int, v float64) {
	e.tag(field, wireFixed64)
	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v))
}

// String writes a string field; "" is left out.
func (e *Encoder) String(field int, s string) {
	if s != "" {
		e.tag(field, wireBytes)
		e.b = binary.AppendUvarint(e.b, uint64(len(s)))
		e.b = append(e.b, s...)
	}
}

// StringAlways writes a string field even when it is "" (a oneof member).
func (e *Encoder) StringAlways(field int, s string) {
	e.tag(field, wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(len(s)))
	e.b = append(e.b, s...)
}

// BytesField writes a bytes field; empty is left out.
func (e *Encoder) BytesField(field int, v []byte) {
	if len(v) > 0 {
		e.tag(field, wireBytes)
		e.b = binary.AppendUvarint(e.b, uint64(len(v)))
		e.b = append(e.b, v...)
	}
}

// PackedFixed64 writes a packed repeated fixed64 field; empty is left out.
func (e *Encoder) PackedFixed64(field int, vs []uint64) {
	if len(vs) == 0 {
		return
	}
	e.tag(field, wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(8*len(vs)))
	for _, v := range vs {
		e.b = binary.LittleEndian.AppendUint64(e.b, v)
	}
}

// PackedDouble writes a packed repeated double field; empty is left out.
func (e *Encoder) PackedDouble(field int, vs []float64) {
	if len(vs) == 0 {
		return
	}
	e.tag(field, wireBytes)
	e.b = binary.AppendUvarint(e.b, uint64(8*len(vs)))
	for _, v := range vs {
		e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v))
	}
}

// Message writes an embedded message field whose members fn writes, even
// when it has none (an empty message is still present).
func (e *Encoder) Message(field int, fn func(*Encoder)) {
	e.tag(field, wireBytes)
	start := len(e.b)
	fn(e)
	n := len(e.b) - start
	// The length goes before the members: make room for its varint and
	// move them up.
	var lenBuf [binary.MaxVarintLen64]byte
	l := binary.PutUvarint(lenBuf[:], uint64(n))
	e.b = append(e.b, lenBuf[:l]...)
	copy(e.b[start+l:], e.b[start:start+n])
	copy(e.b[start:], lenBuf[:l])
}

// SFixed64 writes an sfixed64 field, zero included (a oneof member).
func (e *Encoder) SFixed64(field int, v int64) {
	e.tag(field, wireFixed64)
	e.b = binary.LittleEndian.AppendUint64(e.b, uint64(v))
}

// field is one field read by nextField: its number and wire type, and its
// value (a varint's or fixed's in v, a length-delimited one's in data).
type field struct {
	num, wire int
	v         uint64
	data      []byte
}

// nextField reads the field at the start of b and returns it and the rest
// of b; ok is false when b does not start with a well-formed field.
func nextField(b []byte) (f field, rest []byte, ok bool) {
	tag, n := binary.Uvarint(b)
	if n <= 0 {
		return f, nil, false
	}
	b = b[n:]
	f.num, f.wire = int(tag>>3), int(tag&7)
	switch f.wire {
	case wireVarint:
		if f.v, n = binary.Uvarint(b); n <= 0 {
			return f, nil, false
		}
		return f, b[n:], true
	case wireFixed64:
		if len(b) < 8 {
			return f, nil, false
		}
		return field{num: f.num, wire: f.wire, v: binary.LittleEndian.Uint64(b)}, b[8:], true
	case wireFixed32:
		if len(b) < 4 {
			return f, nil, false
		}
		return field{num: f.num, wire: f.wire, v: uint64(binary.LittleEndian.Uint32(b))}, b[4:], true
	case wireBytes:
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return f, nil, false
		}
		f.data = b[n : n+int(l)]
		return f, b[n+int(l):], true
	}
	return f, nil, false
}

// partialSuccess reads an Export<Signal>ServiceResponse: how many items
// the collector rejected and why (its partial_success, field 1, whose
// rejected count is field 1 and message field 2 in every signal's
// response). A response that does not decode is taken as full success:
// the collector said 200.
func partialSuccess(resp []byte) (rejected int64, msg string) {
	for len(resp) > 0 {
		f, rest, ok := nextField(resp)
		if !ok {
			return 0, ""
		}
		resp = rest
		if f.num != 1 || f.wire != wireBytes {
			continue
		}
		for inner := f.data; len(inner) > 0; {
			g, rest, ok := nextField(inner)
			if !ok {
				return 0, ""
			}
			inner = rest
			switch {
			case g.num == 1 && g.wire == wireVarint:
				rejected = int64(g.v)
			case g.num == 2 && g.wire == wireBytes:
				msg = string(g.data)
			}
		}
	}
	return rejected, msg
}
