// The bounded msgpack scanners side by side, for the tests and the fuzz
// target that compare them: the fast one with and without noting facts, and
// the reference. outcome() is the end offset, or -1 - |error code|.
#pragma once

#include <cstddef>
#include <cstdint>

#include "codec/msgpack_bounds.hpp"
#include "util/error.hpp"

namespace scan_outcomes {

using Scan = size_t (*)(const uint8_t *, size_t, uint32_t);

inline size_t fast(const uint8_t *d, size_t n, uint32_t depth) { return cachekit::msgpack::scan_document(d, n, depth); }

inline size_t noting(const uint8_t *d, size_t n, uint32_t depth) {
    cachekit::msgpack::DocumentFacts facts;
    return cachekit::msgpack::scan_document(d, n, depth, &facts);
}

inline size_t reference(const uint8_t *d, size_t n, uint32_t depth) {
    return cachekit::msgpack::scan_document_precisely(d, n, depth);
}

inline int64_t outcome(Scan scan, const uint8_t *data, size_t size, uint32_t depth) {
    try {
        return int64_t(scan(data, size, depth));
    } catch (const cachekit::Error &e) {
        return -1 - int64_t(e.code() < 0 ? -e.code() : e.code());
    }
}

}  // namespace scan_outcomes
