package cachekit

import (
	"encoding/binary"
	"math"
)

// appendScalarArgs writes args as a MessagePack array, without the general
// encoder, when every argument is nil, a bool, an integer, a float or a
// string (the usual key arguments); false when one is anything else. Any
// valid encoding will do (the core canonicalises); this one is the shortest.
func appendScalarArgs(dst []byte, args []any) ([]byte, bool) {
	switch n := len(args); {
	case n < 16:
		dst = append(dst, 0x90|byte(n))
	case n <= math.MaxUint16:
		dst = binary.BigEndian.AppendUint16(append(dst, 0xdc), uint16(n))
	default:
		return dst, false
	}
	for _, a := range args {
		switch v := a.(type) {
		case nil:
			dst = append(dst, 0xc0)
		case bool:
			if v {
				dst = append(dst, 0xc3)
			} else {
				dst = append(dst, 0xc2)
			}
		case int:
			dst = appendInt(dst, int64(v))
		case int64:
			dst = appendInt(dst, v)
		case int32:
			dst = appendInt(dst, int64(v))
		case int16:
			dst = appendInt(dst, int64(v))
		case int8:
			dst = appendInt(dst, int64(v))
		case uint:
			dst = appendUint(dst, uint64(v))
		case uint64:
			dst = appendUint(dst, v)
		case uint32:
			dst = appendUint(dst, uint64(v))
		case uint16:
			dst = appendUint(dst, uint64(v))
		case uint8:
			dst = appendUint(dst, uint64(v))
		case float64:
			dst = binary.BigEndian.AppendUint64(append(dst, 0xcb), math.Float64bits(v))
		case float32:
			dst = binary.BigEndian.AppendUint64(append(dst, 0xcb), math.Float64bits(float64(v)))
		case string:
			dst = appendStr(dst, v)
		default:
			return dst, false
		}
	}
	return dst, true
}

func appendUint(dst []byte, v uint64) []byte {
	switch {
	case v < 128:
		return append(dst, byte(v))
	case v <= math.MaxUint8:
		return append(dst, 0xcc, byte(v))
	case v <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(dst, 0xcd), uint16(v))
	case v <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(dst, 0xce), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(dst, 0xcf), v)
}

func appendInt(dst []byte, v int64) []byte {
	switch {
	case v >= 0:
		return appendUint(dst, uint64(v))
	case v >= -32:
		return append(dst, byte(v))
	case v >= math.MinInt8:
		return append(dst, 0xd0, byte(v))
	case v >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(dst, 0xd1), uint16(v))
	case v >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(dst, 0xd2), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(dst, 0xd3), uint64(v))
}

func appendStr(dst []byte, s string) []byte {
	switch n := len(s); {
	case n < 32:
		dst = append(dst, 0xa0|byte(n))
	case n <= math.MaxUint8:
		dst = append(dst, 0xd9, byte(n))
	case n <= math.MaxUint16:
		dst = binary.BigEndian.AppendUint16(append(dst, 0xda), uint16(n))
	default:
		dst = binary.BigEndian.AppendUint32(append(dst, 0xdb), uint32(n))
	}
	return append(dst, s...)
}
