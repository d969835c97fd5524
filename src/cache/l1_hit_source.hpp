// The L1 engine as the hit source of a cache's metrics
// (metrics/engine_hits.hpp): src/cache knows both layers, so the wiring
// lives here and metrics never includes l1.
//
// A pin is the engine's namespace record, pinned; its hit counter is the one
// the engine bumps on each hit, read by the metrics at snapshot time.
#pragma once

#include <cstdint>
#include <string_view>

#include "l1/l1_cache.hpp"
#include "l1/namespaces.hpp"
#include "metrics/engine_hits.hpp"

namespace cachekit::cache {

class L1HitSource final : public metrics::EngineHitSource {
public:
    // `l1` must outlive this object, which must outlive every pin.
    explicit L1HitSource(l1::L1Cache &l1) noexcept : l1_(l1) {}
    L1HitSource(const L1HitSource &) = delete;
    L1HitSource &operator=(const L1HitSource &) = delete;

    metrics::EngineHitsPin pin(std::string_view ns) override {
        const l1::NsRecord *rec = l1_.pin_namespace(ns);
        if (rec == nullptr) return {};
        return {&rec->hits, rec};
    }
    void unpin(const metrics::EngineHitsPin &pin) noexcept override {
        if (pin.token != nullptr) l1::L1Cache::unpin_namespace(static_cast<const l1::NsRecord *>(pin.token));
    }
    uint64_t total_hits() const override { return l1_.total_hits(); }

private:
    l1::L1Cache &l1_;
};

}  // namespace cachekit::cache
