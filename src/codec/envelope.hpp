// The ByteStorage envelope (protocol.md section 2): LZ4 block + XXH3-64
// around a payload, as a 4-element MessagePack array.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cachekit/cachekit.h"

namespace cachekit::envelope {

constexpr uint64_t kMaxSize = CACHEKIT_ENVELOPE_MAX_SIZE;
constexpr uint64_t kMaxRatio = CACHEKIT_MAX_COMPRESSION_RATIO;

// Write the canonical envelope of data to `out` (replaced).
void wrap(const void *data, size_t len, std::string_view format, cachekit_buf *out);

// Unwrap following the retrieve order; the payload goes to `out` (replaced),
// the format string to `format` when not null. An original_size over
// `max_original_size` (a cache passes its max value size) is ETOOBIG before
// anything is decompressed or allocated for it. A format that is not valid
// UTF-8 is EDESERIALIZE, as the reference decoder's str check makes it.
void unwrap(const uint8_t *envelope, size_t len, cachekit_buf *out, cachekit_buf *format,
            uint64_t max_original_size = kMaxSize);

// True when `data` starts like an envelope (a 4-element array whose first
// element is bin or array): a cheap sniff for inspection, not a check.
bool looks_like_envelope(const uint8_t *data, size_t len);

}  // namespace cachekit::envelope
