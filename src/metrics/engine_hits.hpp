// Hits another layer counts itself, per namespace: the seam through which a
// cache's metrics report a plaintext L1's hits without knowing the L1.
//
// metrics owns this interface and includes nothing above it; src/cache
// implements it over the L1 engine (cache/l1_hit_source.hpp), so no include
// arrow runs from metrics up to l1. The engine's hit path is untouched: it
// bumps a StripedCounter of its own per hit, as before. CacheMetrics calls
// the interface only when a series is made or folded (pin, unpin) and when a
// snapshot is taken (total_hits); a series' hits are read straight from the
// pinned counter, with no call through the interface.
#pragma once

#include <cstdint>
#include <string_view>

#include "metrics/striped_counter.hpp"

namespace cachekit::metrics {

// One namespace's hit counter in the source, kept valid while pinned.
struct EngineHitsPin {
    const StripedCounter *hits = nullptr;  // nullptr: the source has no counter of its own for the namespace
    const void *token = nullptr;           // the source's own handle, given back to unpin()

    explicit operator bool() const noexcept { return hits != nullptr; }
};

class EngineHitSource {
public:
    // Pin the counter of namespace `ns`'s hits (each hit counted under the
    // namespace its entry was put in). An empty pin when the source keeps no
    // counter of its own for `ns`. May throw std::bad_alloc.
    virtual EngineHitsPin pin(std::string_view ns) = 0;
    // Give back a pin that pin() returned (an empty one is ignored).
    virtual void unpin(const EngineHitsPin &pin) noexcept = 0;
    // Every hit so far, pinned namespaces' and the rest alike; never falls.
    virtual uint64_t total_hits() const = 0;

protected:
    EngineHitSource() = default;
    EngineHitSource(const EngineHitSource &) = default;
    EngineHitSource &operator=(const EngineHitSource &) = default;
    ~EngineHitSource() = default;  // not owned through this interface
};

}  // namespace cachekit::metrics
