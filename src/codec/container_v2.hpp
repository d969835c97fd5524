// Interop/v2 (DRAFT): C1 02 + canonical msgpack [method, original_size, payload:bin].
#pragma once

#include <cstddef>
#include <cstdint>

#include "cachekit/cachekit.h"

namespace cachekit::container_v2 {

bool has_magic(const uint8_t *data, size_t len);
void wrap(const uint8_t *value, size_t len, int method, cachekit_buf *out);
// An original_size over `max_original_size` (512 MiB for the C API; a
// reader's own value limit otherwise) is ETOOBIG before anything is allocated.
void unwrap(const uint8_t *container, size_t len, cachekit_buf *out, uint64_t max_original_size = CACHEKIT_ENVELOPE_MAX_SIZE);

}  // namespace cachekit::container_v2
