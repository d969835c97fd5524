#include "codec/msgpack_bounds.hpp"

#include <string>
#include <string_view>

#include "codec/msgpack_header.hpp"
#include "util/error.hpp"

namespace cachekit::msgpack {

namespace {

// The reference scanner: header by header, and the one that words the error
// when the fast scanner below gives up.
size_t scan_precisely(const uint8_t *data, size_t len, uint32_t max_depth) {
    if (len == 0) fail(CACHEKIT_ETRUNCATED, "empty input: no MessagePack document");
    // Every element or byte needs at least one input byte, and the root header
    // is the one byte that is not an element: the budget is len - 1.
    const uint64_t budget = uint64_t(len) - 1;
    uint64_t slots = 0;
    // Remaining children of each open container, deepest last.
    uint64_t remaining[kMaxDepth];
    uint32_t depth = 0;
    size_t pos = 0;
    for (;;) {
        Header h;
        switch (read_header(data + pos, len - pos, h)) {
        case HeaderStatus::Ok: break;
        case HeaderStatus::Short:
            fail(CACHEKIT_ETRUNCATED, pos == len ? "the input ends (" + std::to_string(len) + " bytes) before its root item is complete"
                                                 : "the item at byte " + std::to_string(pos) + " is cut short by the end of the " +
                                                       std::to_string(len) + "-byte input");
        case HeaderStatus::Reserved:
            fail(CACHEKIT_EDESERIALIZE, "reserved type byte 0xc1 at byte " + std::to_string(pos));
        }
        uint64_t term = h.kind == Kind::Map ? h.length * 2 : (is_container(h.kind) || has_body(h.kind)) ? h.length : 0;
        slots += term;  // both terms < 2^34, so the 64-bit sum cannot wrap before the check
        if (slots > budget)
            fail(CACHEKIT_EOVERCLAIM, "declared elements and bytes (" + std::to_string(slots) +
                                          ") exceed what the " + std::to_string(len) + "-byte input can hold");
        pos += h.size;
        if (has_body(h.kind)) {
            if (h.length > len - pos)
                fail(CACHEKIT_ETRUNCATED, "a body of " + std::to_string(h.length) + " bytes runs past the end of the input");
            pos += size_t(h.length);
        }
        if (is_container(h.kind)) {
            if (depth + 1 > max_depth)
                fail(CACHEKIT_EDEPTH, "nesting deeper than " + std::to_string(max_depth) + " levels");
            uint64_t children = h.kind == Kind::Map ? h.length * 2 : h.length;
            if (children > 0) {
                remaining[depth++] = children;
                continue;
            }
        }
        // One item is complete: close every container it completes.
        while (depth > 0 && --remaining[depth - 1] == 0) --depth;
        if (depth == 0) return pos;
    }
}

constexpr size_t kGaveUp = SIZE_MAX;

// The keys of the reference SDK's temporal sentinel maps (protocol.md).
bool is_temporal_key(const uint8_t *s, size_t n) {
    if (s[0] != '_' || s[1] != '_') return false;
    const std::string_view v(reinterpret_cast<const char *>(s), n);
    return v == "__datetime__" || v == "__date__" || v == "__time__";
}

// Header bytes of the types 0xc0..0xdf (0: the reserved byte 0xc1).
constexpr uint8_t kHeaderSize[32] = {1, 0, 1, 1, 2, 3, 5, 3, 4, 6, 5, 9, 2, 3, 5, 9,
                                     2, 3, 5, 9, 2, 2, 2, 2, 2, 2, 3, 5, 3, 5, 3, 5};

// The same walk as scan_precisely without building a Header per element: it
// decides only where each item ends and how many children it opens. It
// accepts exactly what scan_precisely accepts (the unit tests and the msgpack
// fuzz target compare the two) and answers kGaveUp for anything else, so
// errors are always worded by the reference scanner. With Note, it also
// fills the DocumentFacts.
//
// It keeps no slot budget: a document that ends within the input has at most
// len - 1 declared slots (every declared child is an item of at least one
// header byte, every declared body byte is an input byte, and the root's
// header byte is neither), so the budget check can only fail on a document
// that also runs past the end, which gives up here too. Each step consumes
// at least one byte, so the walk ends within len steps whatever is declared.
// The one-byte headers the values of services are mostly made of (fixstr,
// fixint, fixmap, fixarray) are decided first, in a few compares.
template <bool Note>
size_t scan_quickly(const uint8_t *data, size_t len, uint32_t max_depth, DocumentFacts *facts) {
    const uint8_t *p = data;
    const uint8_t *const end = data + len;
    uint64_t outer[kMaxDepth];  // the items still due in each enclosing container
    uint32_t depth = 0;         // open containers
    uint64_t left = 1;          // the items still due at this level (the root level: one)
    bool temporal = false;      // a str of 8 or 12 bytes that is a temporal key
    for (;;) {
        if (p == end) return kGaveUp;
        const uint8_t t = *p++;
        if (t - 0xa0u < 0x20u) {  // fixstr
            const size_t n = t & 0x1f;
            if (n > size_t(end - p)) return kGaveUp;
            if constexpr (Note) {
                if ((t & 0xfb) == 0xa8) temporal |= is_temporal_key(p, n);  // 0xa8 or 0xac
            }
            p += n;
        } else if (t < 0x80 || t >= 0xe0) {
            // a fixint
        } else if (t < 0xa0) {  // fixmap, fixarray
            if (depth + 1 > max_depth) return kGaveUp;
            const uint64_t children = t < 0x90 ? uint64_t(t & 0x0f) * 2 : t & 0x0f;
            if (children > 0) {
                outer[depth++] = left;
                left = children;
                continue;
            }
        } else {
            const size_t fields = size_t(kHeaderSize[t - 0xc0]) - 1;  // 0xc1: SIZE_MAX, never there
            if (fields > size_t(end - p)) return kGaveUp;  // 0xc1, or cut short
            const uint8_t *field = p;
            p += fields;
            uint64_t body = 0, children = 0;
            bool sized_str = false;
            switch (t) {
            case 0xc4: case 0xc7: body = field[0]; break;
            case 0xc5: case 0xc8: body = load_be16(field); break;
            case 0xc6: case 0xc9: body = load_be32(field); break;
            case 0xd9: body = field[0], sized_str = true; break;
            case 0xda: body = load_be16(field), sized_str = true; break;
            case 0xdb: body = load_be32(field), sized_str = true; break;
            case 0xd4: body = 1; break;
            case 0xd5: body = 2; break;
            case 0xd6: body = 4; break;
            case 0xd7: body = 8; break;
            case 0xd8: body = 16; break;
            case 0xdc: children = load_be16(field); break;
            case 0xdd: children = load_be32(field); break;
            case 0xde: children = uint64_t(load_be16(field)) * 2; break;
            case 0xdf: children = uint64_t(load_be32(field)) * 2; break;
            default: break;  // nil, bool, floats, ints: no body
            }
            if (body > uint64_t(end - p)) return kGaveUp;
            if constexpr (Note) {
                if (sized_str && (body == 8 || body == 12)) temporal |= is_temporal_key(p, size_t(body));
            }
            p += size_t(body);
            if (t >= 0xdc) {  // array16/32, map16/32
                if (depth + 1 > max_depth) return kGaveUp;
                if (children > 0) {
                    outer[depth++] = left;
                    left = children;
                    continue;
                }
            }
        }
        // One item is complete: close every container it completes.
        while (--left == 0) {
            if (depth == 0) {
                if constexpr (Note) facts->temporal_keys = temporal;
                return size_t(p - data);
            }
            left = outer[--depth];
        }
    }
}

void check_max_depth(uint32_t max_depth) {
    if (max_depth < kMinDepth || max_depth > kMaxDepth)
        fail(CACHEKIT_EINVAL, "max_depth must be between 32 and 1024");
}

}  // namespace

size_t scan_document(const uint8_t *data, size_t len, uint32_t max_depth, DocumentFacts *facts) {
    check_max_depth(max_depth);
    if (facts) {
        *facts = DocumentFacts{};
        if (size_t end = scan_quickly<true>(data, len, max_depth, facts); end != kGaveUp) return end;
        // Only an invalid document gets here (the reference throws); were it
        // valid after all, claim the keys: that reading is always correct.
        facts->temporal_keys = true;
    } else if (size_t end = scan_quickly<false>(data, len, max_depth, nullptr); end != kGaveUp) {
        return end;
    }
    return scan_precisely(data, len, max_depth);
}

size_t scan_document_precisely(const uint8_t *data, size_t len, uint32_t max_depth) {
    check_max_depth(max_depth);
    return scan_precisely(data, len, max_depth);
}

void check_document(const uint8_t *data, size_t len, uint32_t max_depth, DocumentFacts *facts) {
    size_t end = scan_document(data, len, max_depth, facts);
    if (end != len)
        fail(CACHEKIT_ETRAILING, std::to_string(len - end) + " trailing bytes after one complete MessagePack document" +
                                     (len >= 2 && data[0] == 0x43 && data[1] == 0x4b
                                          ? " (this looks like a Python SDK CK frame, an auto-mode entry, not an interop value)"
                                          : ""));
}

}  // namespace cachekit::msgpack
