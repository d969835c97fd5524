package cachekit

import (
	"encoding/binary"
	"fmt"
)

// maxDepth bounds nesting in every decoder of the package: the protocol's
// decode bounds allow 32 to 1024, and the core uses 1024.
const maxDepth = 1024

// boundsWalker checks a document against the decode bounds before anything
// is decoded from it. The MessagePack library trusts header counts for its
// own allocations (a 5-byte array32 header would make a slice of 2^32-1
// elements: an out-of-memory abort no recover catches), so no byte reaches
// it before this walk has shown that every count is backed by the input.
// The zero value is ready; its stack is kept between documents.
type boundsWalker struct {
	owed []uint64 // per open collection: the items it still owes
}

// check accepts exactly one complete document whose declared slots
// (collection items, a map pair counting two, str/bin/ext bytes) sum to at
// most len(data)-1 and whose nesting is at most maxDepth; the errors carry
// the statuses the core's check gives (Overclaim, DepthExceeded, Truncated,
// TrailingBytes, DeserializationFailed).
func (w *boundsWalker) check(data []byte) error {
	if len(data) == 0 {
		return decodeError(StatusTruncated, "empty input: no MessagePack document")
	}
	budget := uint64(len(data) - 1) // every byte but the root header can back one slot
	var declared uint64
	owed := w.owed[:0]
	defer func() { w.owed = owed[:0] }()
	pos := 0
	for {
		if pos >= len(data) {
			return decodeError(StatusTruncated, fmt.Sprintf("the document ends at byte %d with %d collections still open", pos, len(owed)))
		}
		c := data[pos]
		pos++
		// What this header declares: items of a collection, or bytes of a
		// str/bin/ext payload (skip also counts an ext's type byte and
		// the fixed payloads of numbers and fixext, which declare nothing).
		var items, skip, slots uint64
		collection := false
		lenBytes := 0
		switch {
		case c <= 0x7f || c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3: // fixint, nil, bool
		case c <= 0x8f: // fixmap
			items, collection = 2*uint64(c&0x0f), true
		case c <= 0x9f: // fixarray
			items, collection = uint64(c&0x0f), true
		case c <= 0xbf: // fixstr
			skip = uint64(c & 0x1f)
			slots = skip
		case c == 0xc1:
			return decodeError(StatusDeserialization, fmt.Sprintf("the reserved byte 0xc1 at offset %d", pos-1))
		case c >= 0xc4 && c <= 0xc6: // bin 8/16/32
			lenBytes = 1 << (c - 0xc4)
		case c >= 0xc7 && c <= 0xc9: // ext 8/16/32: a length, then the type byte
			lenBytes = 1 << (c - 0xc7)
		case c == 0xca || c == 0xcb: // float32, float64
			skip = 4 << (c - 0xca)
		case c >= 0xcc && c <= 0xcf: // uint 8..64
			skip = 1 << (c - 0xcc)
		case c >= 0xd0 && c <= 0xd3: // int 8..64
			skip = 1 << (c - 0xd0)
		case c >= 0xd4 && c <= 0xd8: // fixext 1..16: the type byte and the payload
			skip = 1 + 1<<(c-0xd4)
		case c >= 0xd9 && c <= 0xdb: // str 8/16/32
			lenBytes = 1 << (c - 0xd9)
		case c == 0xdc || c == 0xdd: // array 16/32
			lenBytes, collection = 2<<(c-0xdc), true
		case c == 0xde || c == 0xdf: // map 16/32
			lenBytes, collection = 2<<(c-0xde), true
		}
		if lenBytes > 0 {
			if len(data)-pos < lenBytes {
				return decodeError(StatusTruncated, fmt.Sprintf("the header at offset %d is cut off", pos-1))
			}
			var n uint64
			switch lenBytes {
			case 1:
				n = uint64(data[pos])
			case 2:
				n = uint64(binary.BigEndian.Uint16(data[pos:]))
			default:
				n = uint64(binary.BigEndian.Uint32(data[pos:]))
			}
			pos += lenBytes
			switch {
			case c == 0xde || c == 0xdf:
				items = 2 * n // 64-bit: 2 x (2^32-1) cannot wrap
			case collection:
				items = n
			default:
				slots, skip = n, n
				if c >= 0xc7 && c <= 0xc9 {
					skip++ // the ext type byte
				}
			}
		}
		declared += items + slots // each term < 2^33: the running sum cannot wrap
		if declared > budget {
			return decodeError(StatusOverclaim, fmt.Sprintf("the header at offset %d brings the declared items and bytes to %d, more than the %d bytes the input can back", pos-1-lenBytes, declared, budget))
		}
		if uint64(len(data)-pos) < skip {
			return decodeError(StatusTruncated, fmt.Sprintf("the value at offset %d needs %d bytes, %d are left", pos-1-lenBytes, skip, len(data)-pos))
		}
		pos += int(skip)
		if collection {
			if len(owed) >= maxDepth {
				return decodeError(StatusDepthExceeded, fmt.Sprintf("nesting deeper than %d at offset %d", maxDepth, pos-1-lenBytes))
			}
			if items > 0 {
				owed = append(owed, items)
				continue
			}
		}
		// One item is complete: it pays its collection, which may complete
		// its own in turn.
		for len(owed) > 0 {
			owed[len(owed)-1]--
			if owed[len(owed)-1] > 0 {
				break
			}
			owed = owed[:len(owed)-1]
		}
		if len(owed) == 0 {
			break
		}
	}
	if pos != len(data) {
		return decodeError(StatusTrailingBytes, fmt.Sprintf("%d bytes after one complete document", len(data)-pos))
	}
	return nil
}
