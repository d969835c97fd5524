#include "codec/msgpack_bounds.hpp"

#include <string>

#include "codec/msgpack_header.hpp"
#include "util/error.hpp"

namespace cachekit::msgpack {

size_t scan_document(const uint8_t *data, size_t len, uint32_t max_depth) {
    if (max_depth < kMinDepth || max_depth > kMaxDepth)
        fail(CACHEKIT_EINVAL, "max_depth must be between 32 and 1024");
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

void check_document(const uint8_t *data, size_t len, uint32_t max_depth) {
    size_t end = scan_document(data, len, max_depth);
    if (end != len)
        fail(CACHEKIT_ETRAILING, std::to_string(len - end) + " trailing bytes after one complete MessagePack document" +
                                     (len >= 2 && data[0] == 0x43 && data[1] == 0x4b
                                          ? " (this looks like a Python SDK CK frame, an auto-mode entry, not an interop value)"
                                          : ""));
}

}  // namespace cachekit::msgpack
