// Canonical re-encoding of MessagePack under the interop args/value profiles
// and the reference SDK's auto-mode argument form.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cachekit/cachekit.h"

namespace cachekit::msgpack {

enum class Profile { Args = CACHEKIT_PROFILE_ARGS, Value = CACHEKIT_PROFILE_VALUE, AutoArgs = CACHEKIT_PROFILE_AUTO_ARGS };

// Bounded-check `data` (exactly one document), then write its canonical form
// to `out` (replacing its contents).
void canonicalize(const uint8_t *data, size_t len, Profile profile, cachekit_buf *out);

}  // namespace cachekit::msgpack
