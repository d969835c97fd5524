package cachekit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"sort"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzKeyMatchesCanonicalSpec checks the Go key builder against the interop
// spec on random arguments. The fuzzer's bytes drive a generator that builds
// Go values of many types (sized and unsigned ints, float32/64, strings that
// may be invalid UTF-8, []byte, nil and pointers, slices, string-keyed maps,
// a tagged struct, time.Time, Set) and, beside each, the canonical
// MessagePack the spec prescribes for it, written by the small encoder below,
// which shares no code with the package (it follows protocol.md 1b:
// shortest widths, keys sorted by code point, integral floats as ints,
// timestamps as float seconds of whole microseconds, sets sorted and
// deduplicated). Key(ns, op, values...) must then equal the core's key of
// those canonical bytes (which the core keeps as they are: they are already
// canonical), and values the spec refuses (NaN, infinities, invalid UTF-8)
// must be refused with ErrUnsupported. So a wrong mapping of a Go type, a
// width, an order or a float rule on either side shows up as a different key.
func FuzzKeyMatchesCanonicalSpec(f *testing.F) {
	f.Add([]byte{0, 42})
	f.Add([]byte{14, 3, 1, 'b', 0, 5, 1, 'a', 4, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f})
	f.Add([]byte{15, 7, 200, 6, 2, 0xff, 0xfe, 12, 2, 8, 1, 9})
	f.Add([]byte{16, 1, 2, 3, 4, 5, 6, 7, 17, 3, 0, 1, 0, 1, 3, 200})
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &gen{src: data}
		var args []any
		var canon bytes.Buffer
		refused := false
		n := int(g.byte() % 4)
		writeArrayHeader(&canon, n)
		for i := 0; i < n; i++ {
			v, c, ok := g.value(0)
			args = append(args, v)
			canon.Write(c)
			refused = refused || !ok
		}
		got, err := Key("fuzz", "op", args...)
		if refused {
			if !errors.Is(err, ErrUnsupported) {
				t.Fatalf("args %#v: got key %q, err %v; want ErrUnsupported", args, got, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("args %#v: %v", args, err)
		}
		want, err := InteropKey("fuzz", "op", canon.Bytes())
		if err != nil {
			t.Fatalf("core refused the canonical form %x: %v", canon.Bytes(), err)
		}
		if got != want {
			t.Fatalf("args %#v:\n Key          %s\n spec's bytes %s (%x)", args, got, want, canon.Bytes())
		}
	})
}

// gen turns fuzz bytes into values; past the end it reads zeros.
type gen struct {
	src []byte
	pos int
}

func (g *gen) byte() byte {
	if g.pos >= len(g.src) {
		return 0
	}
	b := g.src[g.pos]
	g.pos++
	return b
}

func (g *gen) bytes(n int) []byte {
	out := make([]byte, n)
	for i := range out {
		out[i] = g.byte()
	}
	return out
}

func (g *gen) u64() uint64 { return binary.LittleEndian.Uint64(g.bytes(8)) }

// fuzzStruct is encoded by its tags; its canonical form sorts them ("a" < "b" < "zz").
type fuzzStruct struct {
	Z  []any  `msgpack:"zz"`
	B  string `msgpack:"b"`
	A  int16  `msgpack:"a"`
	no int    // unexported: not part of the key
}

// value returns a Go value, its canonical bytes and whether the spec accepts it.
func (g *gen) value(depth int) (any, []byte, bool) {
	var c bytes.Buffer
	kind := g.byte() % 18
	if depth >= 3 && kind >= 12 {
		kind %= 12 // bounded nesting
	}
	switch kind {
	case 0:
		v := int64(g.u64())
		writeInt(&c, v)
		return v, c.Bytes(), true
	case 1:
		v := g.u64()
		writeUint(&c, v)
		return v, c.Bytes(), true
	case 2:
		var v any
		var x int64
		switch b := g.bytes(4); b[0] % 3 {
		case 0:
			x = int64(int8(b[1]))
			v = int8(x)
		case 1:
			x = int64(int16(binary.LittleEndian.Uint16(b[1:])))
			v = int16(x)
		default:
			x = int64(int32(binary.LittleEndian.Uint32(append(b[1:], g.byte()))))
			v = int32(x)
		}
		writeInt(&c, x)
		return v, c.Bytes(), true
	case 3:
		x := uint64(binary.LittleEndian.Uint32(g.bytes(4)))
		var v any = uint32(x)
		if x < 1<<16 {
			v = uint16(x)
		}
		writeUint(&c, x)
		return v, c.Bytes(), true
	case 4:
		v := math.Float64frombits(g.u64())
		ok := writeArgFloat(&c, v)
		return v, c.Bytes(), ok
	case 5:
		v := math.Float32frombits(binary.LittleEndian.Uint32(g.bytes(4)))
		ok := writeArgFloat(&c, float64(v))
		return v, c.Bytes(), ok
	case 6:
		s := string(g.bytes(int(g.byte() % 40)))
		writeStr(&c, s)
		return s, c.Bytes(), utf8.ValidString(s)
	case 7:
		b := g.bytes(int(g.byte() % 40))
		writeHeader(&c, len(b), 0xc4, 0, 0) // bin8/16/32
		c.Write(b)
		return b, c.Bytes(), true
	case 8:
		v := g.byte()%2 == 1
		if v {
			c.WriteByte(0xc3)
		} else {
			c.WriteByte(0xc2)
		}
		return v, c.Bytes(), true
	case 9:
		c.WriteByte(0xc0)
		return nil, c.Bytes(), true
	case 10:
		c.WriteByte(0xc0)
		return (*int)(nil), c.Bytes(), true
	case 11:
		x := int(int32(binary.LittleEndian.Uint32(g.bytes(4))))
		writeInt(&c, int64(x))
		return &x, c.Bytes(), true
	case 12:
		n := int(g.byte() % 5)
		out := make([]any, n)
		ok := true
		writeArrayHeader(&c, n)
		for i := range out {
			v, b, vok := g.value(depth + 1)
			out[i] = v
			c.Write(b)
			ok = ok && vok
		}
		return out, c.Bytes(), ok
	case 13:
		n := int(g.byte() % 20)
		out := make([]int64, n)
		writeArrayHeader(&c, n)
		for i := range out {
			out[i] = int64(int16(binary.LittleEndian.Uint16(g.bytes(2))))
			writeInt(&c, out[i])
		}
		return out, c.Bytes(), true
	case 14:
		n := int(g.byte() % 5)
		m := map[string]any{}
		vals := map[string][]byte{}
		ok := true
		for i := 0; i < n; i++ {
			k := string(g.bytes(int(g.byte() % 4)))
			v, b, vok := g.value(depth + 1)
			if _, dup := m[k]; dup {
				continue // a Go map holds each key once
			}
			m[k], vals[k] = v, b
			ok = ok && vok && utf8.ValidString(k)
		}
		writeSortedMap(&c, vals)
		return m, c.Bytes(), ok
	case 15:
		s := fuzzStruct{A: int16(binary.LittleEndian.Uint16(g.bytes(2))), B: string(g.bytes(int(g.byte() % 8))), no: 1}
		vals := map[string][]byte{}
		var a, b, z bytes.Buffer
		writeInt(&a, int64(s.A))
		writeStr(&b, s.B)
		ok := utf8.ValidString(s.B)
		if g.byte()%2 == 0 {
			z.WriteByte(0xc0) // a nil slice is nil
		} else {
			v, zb, vok := g.value(depth + 1)
			s.Z = []any{v}
			writeArrayHeader(&z, 1)
			z.Write(zb)
			ok = ok && vok
		}
		vals["a"], vals["b"], vals["zz"] = a.Bytes(), b.Bytes(), z.Bytes()
		writeSortedMap(&c, vals)
		return s, c.Bytes(), ok
	case 16:
		// Any instant between 1900 and 2100, to the nanosecond.
		sec := int64(binary.LittleEndian.Uint64(g.bytes(8))%(200*365*86400)) - 70*365*86400
		nsec := int64(binary.LittleEndian.Uint32(g.bytes(4)) % 1e9)
		tm := time.Unix(sec, nsec).In(time.FixedZone("x", int(int8(g.byte()))*900))
		micros := sec*1_000_000 + nsec/1000
		writeArgFloat(&c, float64(micros)/1e6)
		return tm, c.Bytes(), true
	default:
		// A set of small ints and short strings, repeats included.
		n := int(g.byte() % 6)
		set := Set{}
		var elems [][]byte
		for i := 0; i < n; i++ {
			var b bytes.Buffer
			if x := g.byte(); x%2 == 0 {
				set = append(set, int64(x%7))
				writeInt(&b, int64(x%7))
			} else {
				s := string([]byte{'a' + x%5})
				set = append(set, s)
				writeStr(&b, s)
			}
			elems = append(elems, b.Bytes())
		}
		sort.Slice(elems, func(i, j int) bool { return bytes.Compare(elems[i], elems[j]) < 0 })
		var uniq [][]byte
		for i, e := range elems {
			if i == 0 || !bytes.Equal(e, elems[i-1]) {
				uniq = append(uniq, e)
			}
		}
		writeArrayHeader(&c, len(uniq))
		for _, e := range uniq {
			c.Write(e)
		}
		return set, c.Bytes(), true
	}
}

// The spec's canonical MessagePack, written independently of the package.

func writeUint(c *bytes.Buffer, v uint64) {
	switch {
	case v < 128:
		c.WriteByte(byte(v))
	case v <= math.MaxUint8:
		c.Write([]byte{0xcc, byte(v)})
	case v <= math.MaxUint16:
		c.Write(binary.BigEndian.AppendUint16([]byte{0xcd}, uint16(v)))
	case v <= math.MaxUint32:
		c.Write(binary.BigEndian.AppendUint32([]byte{0xce}, uint32(v)))
	default:
		c.Write(binary.BigEndian.AppendUint64([]byte{0xcf}, v))
	}
}

func writeInt(c *bytes.Buffer, v int64) {
	switch {
	case v >= 0:
		writeUint(c, uint64(v))
	case v >= -32:
		c.WriteByte(byte(v))
	case v >= math.MinInt8:
		c.Write([]byte{0xd0, byte(v)})
	case v >= math.MinInt16:
		c.Write(binary.BigEndian.AppendUint16([]byte{0xd1}, uint16(v)))
	case v >= math.MinInt32:
		c.Write(binary.BigEndian.AppendUint32([]byte{0xd2}, uint32(v)))
	default:
		c.Write(binary.BigEndian.AppendUint64([]byte{0xd3}, uint64(v)))
	}
}

// writeArgFloat writes an argument float (integral ones in [-2^63, 2^64) as
// ints) and reports false for NaN and infinities, which the spec refuses.
func writeArgFloat(c *bytes.Buffer, v float64) bool {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return false
	}
	if v == math.Trunc(v) && v >= -(1<<63) && v < (1<<64) {
		if v >= 0 {
			writeUint(c, uint64(v))
		} else {
			writeInt(c, int64(v))
		}
		return true
	}
	c.Write(binary.BigEndian.AppendUint64([]byte{0xcb}, math.Float64bits(v)))
	return true
}

// writeHeader writes a str or bin length header: the fix form when fix != 0
// and n < fixMax, else the 8/16/32-bit forms code8, code8+1, code8+2.
func writeHeader(c *bytes.Buffer, n int, code8 byte, fix byte, fixMax int) {
	switch {
	case fix != 0 && n < fixMax:
		c.WriteByte(fix | byte(n))
	case n <= math.MaxUint8:
		c.Write([]byte{code8, byte(n)})
	case n <= math.MaxUint16:
		c.Write(binary.BigEndian.AppendUint16([]byte{code8 + 1}, uint16(n)))
	default:
		c.Write(binary.BigEndian.AppendUint32([]byte{code8 + 2}, uint32(n)))
	}
}

func writeStr(c *bytes.Buffer, s string) {
	writeHeader(c, len(s), 0xd9, 0xa0, 32)
	c.WriteString(s)
}

func writeArrayHeader(c *bytes.Buffer, n int) {
	switch {
	case n < 16:
		c.WriteByte(0x90 | byte(n))
	case n <= math.MaxUint16:
		c.Write(binary.BigEndian.AppendUint16([]byte{0xdc}, uint16(n)))
	default:
		c.Write(binary.BigEndian.AppendUint32([]byte{0xdd}, uint32(n)))
	}
}

// writeSortedMap writes a map of canonical values with its string keys in
// code point (UTF-8 byte) order.
func writeSortedMap(c *bytes.Buffer, vals map[string][]byte) {
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) < 16 {
		c.WriteByte(0x80 | byte(len(keys)))
	} else {
		c.Write(binary.BigEndian.AppendUint16([]byte{0xde}, uint16(len(keys))))
	}
	for _, k := range keys {
		writeStr(c, k)
		c.Write(vals[k])
	}
}
