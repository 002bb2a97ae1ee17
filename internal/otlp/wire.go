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
