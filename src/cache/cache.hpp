// The cache handle: L1 -> L2 -> load, with single-flight loads,
// stale-while-revalidate, invalidation that a slow writer cannot undo,
// entry verification (envelope checks, decryption) and per-namespace metrics.
// Every member function is thread-safe.
//
// fork(): the cache is a participant of the fork registry
// (util/fork_hooks.hpp) for the locks it owns directly: its key stripes, its
// two claim tables and the ordering log's namespace table. A stripe is held
// while L1 locks are taken, so the cache joins the registry before it makes
// its L1 (the registry takes locks in join order). Its metrics, single-flight
// table and L1 are participants of their own.
#pragma once

#include <array>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "cache/coherence.hpp"
#include "cache/invalidation_log.hpp"
#include "cache/key_registry.hpp"
#include "cache/l1_hit_source.hpp"
#include "cache/refresh_claims.hpp"
#include "cache/single_flight.hpp"
#include "cache/stored_value.hpp"
#include "codec/keyring.hpp"
#include "l1/l1_cache.hpp"
#include "l2/backend.hpp"
#include "l2/resilience/resilient_backend.hpp"
#include "metrics/cache_metrics.hpp"
#include "util/error.hpp"
#include "util/fork_hooks.hpp"

namespace cachekit::cache {

struct CacheConfig {
    ValueFormat value;                           // format, integrity, tenant; value.keyring set from `keyring`
    std::shared_ptr<crypto::Keyring> keyring;    // null: no encryption
    std::shared_ptr<crypto::Keyring> read_keyring;  // encryption off, a master key present: legacy-decrypt reads
    std::shared_ptr<l2::Backend> backend;        // null: L1 only
    std::function<int()> breaker_state;          // for stats; null: closed
    l2::ResilientBackend *resilient = nullptr;   // `backend`'s resilience layer (health, log label); null: none
    std::string key_prefix;                      // L2 storage prefix (bound in the auto-mode AAD)
    l2::Ttl default_ttl;                         // nullopt: no expiry
    double refresh_ttl_below = 0;                // 0: off; an L2 hit with less than default_ttl x this left is reset to default_ttl
    bool l1_enabled = true;
    l1::Options l1;
    bool swr = false;
    double swr_ratio = 0.5;
    bool fail_closed = false;                    // backend errors are returned instead of degrading
    bool verify_fail_closed = false;             // entries that fail their checks are errors, not misses
    uint64_t max_value_bytes = 100ULL << 20;
    std::chrono::milliseconds load_timeout{30000};
    std::chrono::milliseconds l2_timeout{5000};
    bool cross_process_lock = false;
    std::chrono::milliseconds lock_hold{30000};
    std::chrono::milliseconds lock_wait{5000};
};

enum class Source { None, L1, L2, Loaded, Waited };

struct Lookup {
    Source source = Source::None;
    bool refresh = false;         // this caller owns a stale-while-revalidate refresh
    uint64_t refresh_claim = 0;   // pass back with the refreshed value
    double age_seconds = -1;      // of an L1 hit
    int temporal_keys = -1;       // of a payload checked by this read: 1/0, -1 when not checked here (an L1 hit)
};

// What a loader produces; the C API wraps this in cachekit_load.
struct LoadResult {
    bool has_value = false;
    std::string value;
    std::optional<l2::Ttl> ttl;   // per-value TTL override
    std::string error;
};
using Loader = std::function<int(LoadResult &)>;

class Cache final : private fork_hooks::Participant {
public:
    explicit Cache(CacheConfig config);
    ~Cache();

    // CACHEKIT_OK with the payload in `out`, or CACHEKIT_ENOTFOUND.
    int get(std::string_view ns, std::string_view key, cachekit_buf *out, Lookup *info) {
        if (info == nullptr && quick_hit(key, out)) return CACHEKIT_OK;
        return get_rest(ns, key, out, info);
    }
    // get in two steps, for callers that can skip work before the first:
    // the common hit, inline (a plaintext L1 hit nobody asked details of is
    // the engine's lookup and copy, and the engine counts it), then, when
    // it says false, the rest of get (which does not ask the L1 again).
    bool quick_hit(std::string_view key, cachekit_buf *out) {
        return quick_l1_hits_.load(std::memory_order_relaxed) && l1_->get(key, out);
    }
    int get_rest(std::string_view ns, std::string_view key, cachekit_buf *out, Lookup *info);
    // The L1 part of get alone: CACHEKIT_ENOTFOUND on an L1 miss, with no L2
    // read and no miss counted (the caller's next get or get_or_load counts it).
    int peek(std::string_view ns, std::string_view key, cachekit_buf *out, Lookup *info) {
        if (info == nullptr && quick_hit(key, out)) return CACHEKIT_OK;
        return peek_rest(ns, key, out, info);
    }
    int peek_rest(std::string_view ns, std::string_view key, cachekit_buf *out, Lookup *info);
    // Store a payload; ttl nullopt = the cache's default.
    int put(std::string_view ns, std::string_view key, std::string_view payload, std::optional<l2::Ttl> ttl);
    // get, else run the loader once across concurrent callers and store its value.
    int get_or_load(std::string_view ns, std::string_view key, std::optional<l2::Ttl> ttl, const Loader &loader,
                    cachekit_buf *out, Lookup *info);
    // get for a caller that computes a missing value on its own runtime: on
    // a miss (CACHEKIT_ENOTFOUND) `info` gets refresh and a load claim, which
    // put_refresh lands (ordered as get_or_load's loads are) or
    // abandon_refresh releases. `info` is required.
    int get_for_load(std::string_view ns, std::string_view key, cachekit_buf *out, Lookup &info);
    // Land a stale-while-revalidate refresh or a get_for_load load;
    // CACHEKIT_ENOTFOUND when it lost to an invalidation or a newer write.
    int put_refresh(std::string_view ns, std::string_view key, std::string_view payload, std::optional<l2::Ttl> ttl,
                    uint64_t claim);
    void abandon_refresh(std::string_view key, uint64_t claim);
    // Refresh and load claims not yet landed, abandoned or purged (a debug
    // count: a holder that goes away without either leaves one behind).
    size_t claims_held() { return claims_.held() + load_claims_.held(); }

    int invalidate(std::string_view ns, std::string_view key);
    int invalidate_namespace(std::string_view ns);
    int clear();
    // The reference SDK's key registry (docs/redis.md "Key registry"): from
    // now on each L2 write of a key starting with `head` also lists the key in
    // the function's registry, in the same round trip. True when the L2 keeps
    // registries (Redis); false otherwise (nothing is listed, nothing fails).
    bool track_function(std::string_view ns, std::string_view function, std::string_view head);
    // Delete every key the function's registry lists, whichever process (or
    // SDK) wrote it, from L2 and from this cache's L1, and the emptied
    // registry; the number of keys drained. 0 without a registry.
    uint64_t invalidate_function(std::string_view ns, std::string_view function);

    const CacheConfig &config() const { return config_; }
    l1::L1Cache *l1() { return l1_.get(); }
    const metrics::CacheMetrics &metrics() const { return metrics_; }
    // L1 coherence (docs/redis.md): null when off or the backend has no feed.
    const Coherence *coherence() const { return coherence_.get(); }
    int breaker_state() const { return config_.breaker_state ? config_.breaker_state() : CACHEKIT_BREAKER_CLOSED; }

private:
    friend struct CacheTestAccess;  // white-box tests (tests/cache) hold its locks

    void before_fork() noexcept override;
    void after_fork_parent() noexcept override;
    void after_fork_child() noexcept override;

    enum class StoreOutcome { Stored, Dropped, TooLarge };
    int land_load(std::string_view ns, std::string_view key, std::string_view payload, std::optional<l2::Ttl> ttl,
                  uint64_t claim);
    // Put: a write as of now (`ticket` taken when it began). Fill: a value
    // computed under `claim` (of `claims`) after `ticket`, dropped if a put
    // or invalidation of the key cancelled the claim or its namespace or the
    // cache was invalidated since the ticket. FillL1Only: the same without
    // L2 (the call's L2 read failed).
    enum class Write { Put, Fill, FillL1Only };
    StoreOutcome store(std::string_view ns, std::string_view key, std::string_view payload,
                       std::optional<l2::Ttl> ttl, InvalidationLog::Ticket ticket, Write how,
                       RefreshClaims *claims = nullptr, uint64_t claim = 0);
    // log_.changed_since under the key's stripe mutex.
    bool changed_since(InvalidationLog::Ticket ticket, uint64_t key_hash, std::string_view ns);
    // get_rest, telling whether the L2 read failed (degraded to a miss).
    int lookup(std::string_view ns, std::string_view key, cachekit_buf *out, Lookup *info, bool *l2_failed);
    bool read_l1(std::string_view ns, std::string_view key, cachekit_buf *out, Lookup *info,
                 metrics::NamespaceMetrics &m);
    bool read_l2(std::string_view ns, std::string_view key, cachekit_buf *out, Lookup *info,
                 metrics::NamespaceMetrics &m, bool *failed = nullptr);
    // Copy what an L2 read found into L1 unless the key changed since the read began.
    void fill_l1(std::string_view ns, std::string_view key, std::string_view stored, uint64_t until,
                 InvalidationLog::Ticket ticket, l1::FillTicket l1_ticket);
    // The L2 write of a store: with the key listed in its registry when one covers it.
    void write_l2(std::string_view key, std::string_view stored, l2::Ttl expiry, metrics::NamespaceMetrics &m);
    // Invalidate one key: recorded and dropped from L1 before and after the L2 delete.
    void forget_key(std::string_view key, uint64_t key_hash);
    void forget_everywhere(std::string_view key, uint64_t key_hash, metrics::NamespaceMetrics &m);
    // Run `record` (log, claims, L1), clear `which` from L2, run `record` again.
    void forget_group(const std::function<void()> &record, const l2::KeySelection &which,
                      metrics::NamespaceMetrics &m);
    bool refused(Verdict v, std::string_view ns, std::string_view key, const std::string &why,
                 metrics::NamespaceMetrics &m);
    void backend_failed(const Error &e, metrics::NamespaceMetrics &m);
    // refresh_ttl_on_get: reset the TTL of an L2 hit with `remaining` left
    // when it is due; returns what the entry has left afterwards.
    l2::Ttl refresh_ttl(std::string_view key, l2::Ttl remaining, metrics::NamespaceMetrics &m);
    // Run a write-side backend call under the cache's policy: false when it
    // failed and was degraded (counted); rethrows when fail-closed.
    bool backend_call(metrics::NamespaceMetrics &m, const std::function<void()> &call);
    std::string storage_key(std::string_view key) const;
    // The key an encrypted entry's AAD binds: the key it is stored under, key_prefix
    // included, in both formats (protocol change of 2026-10: cachekit-py 0.24 binds it
    // in auto mode, cachekit-rs 0.10+ under a client .namespace(); encryption.json's
    // aad_key_with_prefix_sealed_without). Without a prefix that is the bare key, as
    // interop/v1 wants. `scratch` holds the prefixed form when one is needed.
    std::string_view aad_key(std::string_view key, std::string &scratch) const;
    l2::Deadline deadline() const { return l2::Deadline::after(config_.l2_timeout); }
    std::mutex &stripe(uint64_t key_hash) { return stripes_[key_hash % stripes_.size()]; }
    // What get_or_load's first read left: its ticket, and whether L2 failed.
    struct FirstRead {
        InvalidationLog::Ticket ticket;
        bool l2_failed;
    };
    int load_as_leader(std::string_view ns, std::string_view key, std::optional<l2::Ttl> ttl, const Loader &loader,
                       cachekit_buf *out, Lookup *info, metrics::NamespaceMetrics &m, FirstRead first,
                       SingleFlight::Outcome &outcome);

    CacheConfig config_;
    std::unique_ptr<l1::L1Cache> l1_;
    bool plain_l1_ = false;       // an L1 holding plaintext: its hits are the engine's to count
    // With plain_l1_: the engine as the metrics' hit source. Made after l1_
    // and gone before it; outlives metrics_, which holds pins of it.
    std::optional<L1HitSource> l1_hits_;
    // plain_l1_ without SWR: a hit needs nothing but the engine. Atomic: a
    // forked child with coherence turns it off until its feed restarts.
    std::atomic<bool> quick_l1_hits_{false};
    bool quick_default_ = false;
    metrics::CacheMetrics metrics_;
    InvalidationLog log_;
    RefreshClaims claims_;       // stale-while-revalidate refreshes
    // Running loads: exact per key, unlike the striped log. Their ids carry
    // kLoadClaimTag, so put_refresh tells them from refresh claims.
    static constexpr uint64_t kLoadClaimTag = uint64_t(1) << 63;
    RefreshClaims load_claims_{kLoadClaimTag};
    SingleFlight flights_;
    KeyRegistry registry_;       // which keys are listed in which key registry
    // Serialise a key's in-memory check-and-store (L1 fill, store) against
    // its write and invalidation records; never held across an L2 call.
    std::array<std::mutex, 256> stripes_;
    static_assert(InvalidationLog::kStripes % 256 == 0, "one log slot must map to one stripe");
    // Last: its feed thread calls into everything above, so it stops first.
    std::unique_ptr<Coherence> coherence_;
    // Before any L1 use: a forked child's L1 is flushed and its feed started.
    void check_coherence() {
        if (coherence_ && !coherence_->same_process()) {
            coherence_->restart_in_child();
            quick_l1_hits_.store(quick_default_, std::memory_order_relaxed);
        }
    }
    bool l1_open() const { return !coherence_ || coherence_->l1_open(); }
};

}  // namespace cachekit::cache
