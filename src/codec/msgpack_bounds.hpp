// The bounded decoder of protocol.md section 5: every untrusted MessagePack
// document is scanned once, without allocating per declared element, before
// anything reads it as values.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cachekit::msgpack {

constexpr uint32_t kMinDepth = 32;
constexpr uint32_t kMaxDepth = 1024;

// Scan the first document in [data, data+len): checks the depth bound, the
// whole-document declared-slot budget (<= len - 1, checked 64-bit sums) and
// completeness. Returns the offset just past the document. Throws
// cachekit::Error (EDEPTH, EOVERCLAIM, ETRUNCATED, EDESERIALIZE).
size_t scan_document(const uint8_t *data, size_t len, uint32_t max_depth = kMaxDepth);

// scan_document plus "exactly one document" (ETRAILING otherwise).
void check_document(const uint8_t *data, size_t len, uint32_t max_depth = kMaxDepth);

}  // namespace cachekit::msgpack
