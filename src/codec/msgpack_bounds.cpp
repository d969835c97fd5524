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
template <bool Note>
size_t scan_quickly(const uint8_t *data, size_t len, uint32_t max_depth, DocumentFacts *facts) {
    const uint64_t budget = uint64_t(len) - 1;
    uint64_t slots = 0;
    uint64_t remaining[kMaxDepth];
    uint32_t depth = 0;
    size_t pos = 0;
    for (;;) {
        if (pos >= len) return kGaveUp;
        const uint8_t t = data[pos];
        const uint8_t *field = data + pos + 1;
        size_t header = 1;
        uint64_t body = 0, children = 0;
        bool container = false, maybe_temporal = false;  // a str of 8 or 12 bytes
        if (t <= 0x7f || t >= 0xe0) {
            // a fixint
        } else if (t <= 0x8f) {
            children = uint64_t(t & 0x0f) * 2, container = true;
        } else if (t <= 0x9f) {
            children = t & 0x0f, container = true;
        } else if (t <= 0xbf) {
            body = t & 0x1f;
            maybe_temporal = (t & 0xfb) == 0xa8;  // 0xa8 or 0xac
        } else {
            header = kHeaderSize[t - 0xc0];
            if (header == 0 || header > len - pos) return kGaveUp;  // 0xc1, or cut short
            switch (t) {
            case 0xc4: case 0xc7: body = field[0]; break;
            case 0xc5: case 0xc8: body = load_be16(field); break;
            case 0xc6: case 0xc9: body = load_be32(field); break;
            case 0xd9: body = field[0], maybe_temporal = body == 8 || body == 12; break;
            case 0xda: body = load_be16(field), maybe_temporal = body == 8 || body == 12; break;
            case 0xdb: body = load_be32(field), maybe_temporal = body == 8 || body == 12; break;
            case 0xd4: body = 1; break;
            case 0xd5: body = 2; break;
            case 0xd6: body = 4; break;
            case 0xd7: body = 8; break;
            case 0xd8: body = 16; break;
            case 0xdc: children = load_be16(field), container = true; break;
            case 0xdd: children = load_be32(field), container = true; break;
            case 0xde: children = uint64_t(load_be16(field)) * 2, container = true; break;
            case 0xdf: children = uint64_t(load_be32(field)) * 2, container = true; break;
            default: break;  // nil, bool, floats, ints: no body
            }
        }
        slots += body + children;  // one of the two is 0, each < 2^34: the sum cannot wrap before the check
        if (slots > budget) return kGaveUp;
        pos += header;
        if (body > len - pos) return kGaveUp;
        if constexpr (Note) {
            if (maybe_temporal) facts->temporal_keys |= is_temporal_key(data + pos, size_t(body));
        }
        pos += size_t(body);
        if (container) {
            if (depth + 1 > max_depth) return kGaveUp;
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
