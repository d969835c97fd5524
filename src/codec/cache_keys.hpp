// Cache keys: the reference Python SDK's auto mode and interop/v1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cachekit/cachekit.h"

namespace cachekit::keys {

// "s", "a", "o", "w", "l" or "x" + 4 hex digits; EINVAL for an empty identity.
std::string serializer_code(std::string_view identity);

// The auto-mode key; `ns` empty means no namespace segment.
std::string auto_key(std::string_view ns, std::string_view module, std::string_view qualname,
                     const uint8_t *args, size_t args_len, bool integrity, std::string_view serializer);

// The reference SDK's (0.24+) key of a function with a key function:
// {16 hex of BLAKE3("{module}.{qualname}")}-{ns, or "default" when empty}:{key}.
std::string custom_key(std::string_view ns, std::string_view module, std::string_view qualname, std::string_view key);

// Why `segment` is not a valid interop segment (a phrase to follow its
// name), or nullptr when it is one.
const char *interop_segment_problem(std::string_view segment, bool is_namespace);

// Validate an interop segment (ESEGMENT with the reason).
void check_interop_segment(std::string_view segment, const char *what, bool is_namespace);

// The interop/v1 key; the canonical args go to `canonical` (replaced).
std::string interop_key(std::string_view ns, std::string_view operation, const uint8_t *args, size_t args_len,
                        cachekit_buf *canonical);

}  // namespace cachekit::keys
