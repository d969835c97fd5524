// The bounded decoder of protocol.md section 5: every untrusted MessagePack
// document is scanned once, without allocating per declared element, before
// anything reads it as values.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cachekit::msgpack {

constexpr uint32_t kMinDepth = 32;
constexpr uint32_t kMaxDepth = 1024;

// What a scan noticed on the way, for readers that care.
struct DocumentFacts {
    // A str "__datetime__", "__date__" or "__time__" occurs: the document may
    // hold the reference SDK's temporal sentinel maps. false means it cannot.
    bool temporal_keys = false;
};

// Scan the first document in [data, data+len): checks the depth bound, the
// whole-document declared-slot budget (<= len - 1, checked 64-bit sums) and
// completeness. Returns the offset just past the document. Throws
// cachekit::Error (EDEPTH, EOVERCLAIM, ETRUNCATED, EDESERIALIZE). Fills
// `facts` when given.
size_t scan_document(const uint8_t *data, size_t len, uint32_t max_depth = kMaxDepth, DocumentFacts *facts = nullptr);

// The reference scanner alone (a header at a time). scan_document gives the
// same answers, faster; tests and the fuzz target compare the two.
size_t scan_document_precisely(const uint8_t *data, size_t len, uint32_t max_depth = kMaxDepth);

// scan_document plus "exactly one document" (ETRAILING otherwise).
void check_document(const uint8_t *data, size_t len, uint32_t max_depth = kMaxDepth, DocumentFacts *facts = nullptr);

}  // namespace cachekit::msgpack
