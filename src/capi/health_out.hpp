// Filling a caller's cachekit_health (backend and cache shims share it):
// the fields that fit in its struct_size, strings cut to their arrays.
#pragma once

#include <algorithm>
#include <cstring>
#include <string_view>

#include "cachekit/cachekit.h"
#include "capi/boundary.hpp"
#include "l2/resilience/resilient_backend.hpp"

namespace cachekit::capi {

inline void copy_text(char *to, size_t size, std::string_view text) {
    size_t n = std::min(text.size(), size - 1);
    // Never cut inside a UTF-8 sequence (continuation bytes are 10xxxxxx).
    if (n < text.size())
        while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
    std::memcpy(to, text.data(), n);
    to[n] = '\0';
}

inline void put_health(cachekit_health *out, const l2::ResilientBackend *backend, int coherence) {
    require(out != nullptr, "out is NULL");
    require(out->struct_size >= sizeof(size_t), "out->struct_size is too small");
    cachekit_health h;
    std::memset(&h, 0, sizeof h);
    h.coherence = coherence;
    if (backend != nullptr) {
        const l2::HealthSnapshot s = backend->health_snapshot();
        h.state = !s.down                                                  ? CACHEKIT_HEALTH_OK
                  : backend->breaker_state() != l2::CircuitBreaker::State::Closed ? CACHEKIT_HEALTH_BREAKER_OPEN
                                                                          : CACHEKIT_HEALTH_DOWN;
        h.consecutive_failures = s.consecutive_failures;
        h.since = s.since;
        h.last_error_at = s.last_error_at;
        copy_text(h.backend, sizeof h.backend, backend->label());
        copy_text(h.last_error, sizeof h.last_error, s.last_error);
    }
    h.struct_size = out->struct_size;
    std::memcpy(out, &h, std::min(out->struct_size, sizeof h));
}

}  // namespace cachekit::capi
