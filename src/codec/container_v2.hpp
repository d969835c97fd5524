// Interop/v2 (DRAFT): C1 02 + canonical msgpack [method, original_size, payload:bin].
#pragma once

#include <cstddef>
#include <cstdint>

#include "cachekit/cachekit.h"

namespace cachekit::container_v2 {

bool has_magic(const uint8_t *data, size_t len);
void wrap(const uint8_t *value, size_t len, int method, cachekit_buf *out);
void unwrap(const uint8_t *container, size_t len, cachekit_buf *out);

}  // namespace cachekit::container_v2
