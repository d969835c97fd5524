#include "cache/cache.hpp"

#include <thread>

#include "codec/msgpack_bounds.hpp"
#include "l1/clock.hpp"
#include "util/buffer.hpp"
#include "util/error.hpp"

namespace cachekit::cache {
namespace {

using std::chrono::milliseconds;

bool is_backend_failure(int code) {
    return code == CACHEKIT_EBACKEND || code == CACHEKIT_ETIMEOUT || code == CACHEKIT_ECIRCUIT_OPEN ||
           code == CACHEKIT_EBUSY;
}

void check_payload(std::string_view payload) {
    try {
        msgpack::check_document(reinterpret_cast<const uint8_t *>(payload.data()), payload.size());
    } catch (const Error &e) {
        fail(CACHEKIT_EINVAL, std::string("a cached value must be one MessagePack document: ") + e.what());
    }
}

int verdict_status(Verdict v) {
    switch (v) {
    case Verdict::Tampered: return CACHEKIT_EAUTH;
    case Verdict::WrongKey: return CACHEKIT_EKEYNOTFOUND;
    default: return CACHEKIT_ECORRUPT;
    }
}

// Milliseconds (a TTL, perhaps a hostile server's PTTL) to nanoseconds,
// saturating at "never" instead of wrapping.
uint64_t ms_to_ns(int64_t ms) {
    if (ms <= 0) return 0;
    return uint64_t(ms) > l1::kNever / 1000000u ? l1::kNever : uint64_t(ms) * 1000000u;
}

double seconds_between(uint64_t from_ns, uint64_t to_ns) { return to_ns > from_ns ? double(to_ns - from_ns) / 1e9 : 0.0; }

}  // namespace

Cache::Cache(CacheConfig config)
    : config_(std::move(config)) {
    config_.value.keyring = config_.keyring.get();
    if (config_.l1_enabled) l1_ = std::make_unique<l1::L1Cache>(config_.l1);
    plain_l1_ = l1_ && !config_.keyring;
    if (plain_l1_) metrics_.count_engine_hits(*l1_);
    quick_l1_hits_ = plain_l1_ && !config_.swr;
}

Cache::~Cache() = default;

std::string Cache::storage_key(std::string_view key) const {
    std::string k;
    k.reserve(config_.key_prefix.size() + key.size());
    k.append(config_.key_prefix).append(key);
    return k;
}

std::string Cache::namespace_prefix(std::string_view ns) const {
    // Auto-mode keys are "ns:{ns}:..."; interop keys "{ns}:{operation}:...".
    std::string p = config_.key_prefix;
    if (config_.value.format == Format::Auto) p.append("ns:");
    return p.append(ns).append(":");
}

void Cache::backend_failed(const Error &e, metrics::NamespaceMetrics &m) {
    if (e.code() == CACHEKIT_ETIMEOUT) m.timeouts.add();
    else m.backend_errors.add();
}

bool Cache::backend_call(metrics::NamespaceMetrics &m, const std::function<void()> &call) {
    try {
        call();
        return true;
    } catch (const Error &e) {
        if (!is_backend_failure(e.code())) throw;
        backend_failed(e, m);
        if (config_.fail_closed) throw;
        return false;  // fail open: counted, then carried on without L2
    }
}

bool Cache::refused(Verdict v, std::string_view ns, std::string_view key, const std::string &why,
                    metrics::NamespaceMetrics &m) {
    switch (v) {
    case Verdict::Corrupt: m.corrupt.add(); break;
    case Verdict::Tampered: m.tampered.add(); break;
    case Verdict::WrongKey: m.wrong_key.add(); break;
    case Verdict::Downgrade: m.downgrade.add(); break;
    case Verdict::SerializerMismatch: m.serializer_mismatch.add(); break;
    case Verdict::TooLarge: m.too_large.add(); break;
    case Verdict::Ok: return true;
    }
    if (config_.verify_fail_closed)  // keep the entry for inspection, report it
        fail(verdict_status(v), "cache entry refused (" + std::string(verdict_name(v)) + "): " + why);
    // Fail open: a refused entry is a miss, gone from both tiers.
    (void)ns;
    if (l1_) l1_->invalidate(key);
    if (config_.backend) {
        try {
            config_.backend->del(storage_key(key), deadline());
        } catch (const Error &e) {
            if (!is_backend_failure(e.code())) throw;
            backend_failed(e, m);
        }
    }
    return false;
}

bool Cache::read_l1(std::string_view ns, std::string_view key, cachekit_buf *out, Lookup *info,
                    metrics::NamespaceMetrics &m) {
    if (!l1_) return false;
    l1::EntryInfo entry;
    // The entry's times matter only for SWR or a caller's lookup report.
    l1::EntryInfo *want = info || config_.swr ? &entry : nullptr;
    if (config_.keyring) {
        // Encrypted caches keep ciphertext in L1 and open it on every hit.
        Buffer stored;
        if (!l1_->get(key, stored.get(), &entry)) return false;
        std::string why;
        Verdict v = decode_stored(config_.value, key, stored.view(), out, &why);
        if (v != Verdict::Ok) return refused(v, ns, key, why, m);
        // Counted here, as only an entry that opens is a hit, and like the
        // engine's count: under the namespace the entry was put in.
        (entry.ns == ns ? m : metrics_.of(entry.ns)).l1_hits.add();
    } else if (!l1_->get(key, out, want)) {  // a plaintext hit: the engine counts it
        return false;
    }
    const bool swr = want && config_.swr && entry.deadline_ns != l1::kNever && entry.deadline_ns > entry.inserted_at_ns;
    if (!info && !swr) return true;  // the common hit: no clock read
    const uint64_t now = l1_->now();
    if (info) {
        info->source = Source::L1;
        info->age_seconds = seconds_between(entry.inserted_at_ns, now);
    }
    if (swr) {
        // Jitter the threshold per key (0.9x..1.1x) so entries written together do not all turn stale together.
        const uint64_t h = l1::L1Cache::hash_key(key);
        const double jitter = 0.9 + 0.2 * double((h >> 17) % 1024) / 1023.0;
        const double threshold = double(entry.deadline_ns - entry.inserted_at_ns) * config_.swr_ratio * jitter;
        if (double(now - entry.inserted_at_ns) >= threshold) {
            m.stale_served.add();
            // Only a caller that can learn of the claim may take it.
            if (info) {
                if (uint64_t claim = claims_.claim(key, config_.load_timeout); claim != 0) {
                    info->refresh = true;
                    info->refresh_claim = claim;
                }
            }
        }
    }
    return true;
}

bool Cache::read_l2(std::string_view ns, std::string_view key, cachekit_buf *out, Lookup *info,
                    metrics::NamespaceMetrics &m) {
    if (!config_.backend) return false;
    const l1::FillTicket l1_ticket = l1_ ? l1_->begin_fill() : l1::kNoTicket;
    Buffer stored;
    l2::Ttl remaining;
    bool found = false;
    const auto started = std::chrono::steady_clock::now();
    try {
        found = l1_ ? config_.backend->get_with_ttl(storage_key(key), stored.get(), &remaining, deadline())
                    : config_.backend->get(storage_key(key), stored.get(), deadline());
    } catch (const Error &e) {
        if (!is_backend_failure(e.code())) throw;
        backend_failed(e, m);
        if (config_.fail_closed) throw;
        return false;
    }
    m.l2_latency_ms.observe(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
    if (!found) return false;
    std::string why;
    msgpack::DocumentFacts facts;
    Verdict v = decode_stored(config_.value, key, stored.view(), out, &why, info ? &facts : nullptr);
    if (v != Verdict::Ok) return refused(v, ns, key, why, m);
    m.l2_hits.add();
    if (info) info->temporal_keys = facts.temporal_keys ? 1 : 0;
    if (l1_ && !(remaining && remaining->count() <= 0)) {
        // L1 never outlives the L2 entry it copies.
        const uint64_t until = remaining ? l1::add_saturating(l1_->now(), ms_to_ns(remaining->count())) : l1::kNever;
        std::string_view keep = config_.keyring ? stored.view() : buf_view(*out);
        l1_->put_until(ns, key, keep, until, l1_ticket);
    }
    if (info) info->source = Source::L2;
    return true;
}

int Cache::get_rest(std::string_view ns, std::string_view key, cachekit_buf *out, Lookup *info) {
    const bool l1_asked = info == nullptr && quick_l1_hits_;  // by quick_hit
    metrics::NamespaceMetrics &m = metrics_.of(ns);
    if ((!l1_asked && read_l1(ns, key, out, info, m)) || read_l2(ns, key, out, info, m)) return CACHEKIT_OK;
    m.misses.add();
    return CACHEKIT_ENOTFOUND;
}

Cache::StoreOutcome Cache::store(std::string_view ns, std::string_view key, std::string_view payload,
                                 std::optional<l2::Ttl> ttl, InvalidationLog::Ticket ticket, uint64_t claim) {
    metrics::NamespaceMetrics &m = metrics_.of(ns);
    if (payload.size() > config_.max_value_bytes) {
        m.too_large.add();
        return StoreOutcome::TooLarge;
    }
    const l2::Ttl expiry = ttl ? *ttl : config_.default_ttl;
    Buffer stored;
    if (config_.backend || config_.keyring) encode_stored(config_.value, key, payload, stored.get());
    const uint64_t h = l1::L1Cache::hash_key(key);

    std::shared_lock writers(writers_);
    std::lock_guard guard(stripe(h));
    if (claim != 0) {
        if (!claims_.settle(key, claim)) {
            m.dropped_fills.add();
            return StoreOutcome::Dropped;
        }
    } else {
        claims_.cancel(key);  // a newer write wins over a pending refresh
    }
    if (log_.invalidated_since(ticket, h, ns)) {
        m.dropped_fills.add();
        return StoreOutcome::Dropped;
    }
    const uint64_t l1_until =
        !l1_ ? 0 : expiry ? l1::add_saturating(l1_->now(), ms_to_ns(expiry->count())) : l1::kNever;
    if (config_.backend) {
        try {
            if (backend_call(m, [&] { config_.backend->set(storage_key(key), stored.view(), expiry, deadline()); }))
                m.stored_bytes.observe(double(stored.size()));
        } catch (const Error &e) {  // over the L2's own value limit: too large, as over ours
            if (e.code() != CACHEKIT_ETOOBIG) throw;
            m.too_large.add();
            return StoreOutcome::TooLarge;
        }
    }
    if (l1_) l1_->put_until(ns, key, config_.keyring ? stored.view() : payload, l1_until);
    m.stores.add();
    return StoreOutcome::Stored;
}

int Cache::put(std::string_view ns, std::string_view key, std::string_view payload, std::optional<l2::Ttl> ttl) {
    check_payload(payload);
    if (store(ns, key, payload, ttl, log_.ticket(), 0) == StoreOutcome::TooLarge)
        fail(CACHEKIT_ETOOBIG, "value of " + std::to_string(payload.size()) + " bytes is over max_value_bytes (" +
                                   std::to_string(config_.max_value_bytes) + "): not stored");
    return CACHEKIT_OK;
}

int Cache::put_refresh(std::string_view ns, std::string_view key, std::string_view payload, std::optional<l2::Ttl> ttl,
                       uint64_t claim) {
    check_payload(payload);
    if (claim == 0) fail(CACHEKIT_EINVAL, "a refresh needs the claim its lookup returned");
    switch (store(ns, key, payload, ttl, log_.ticket(), claim)) {
    case StoreOutcome::Stored: metrics_.of(ns).refreshes.add(); return CACHEKIT_OK;
    case StoreOutcome::Dropped: return CACHEKIT_ENOTFOUND;
    case StoreOutcome::TooLarge: fail(CACHEKIT_ETOOBIG, "refreshed value is over max_value_bytes: not stored");
    }
    return CACHEKIT_EINTERNAL;
}

void Cache::abandon_refresh(std::string_view key, uint64_t claim) { claims_.settle(key, claim); }

int Cache::get_or_load(std::string_view ns, std::string_view key, std::optional<l2::Ttl> ttl, const Loader &loader,
                       cachekit_buf *out, Lookup *info) {
    // A hit (the quick one included) is get's; a miss is counted there too.
    if (get(ns, key, out, info) == CACHEKIT_OK) return CACHEKIT_OK;
    metrics::NamespaceMetrics &m = metrics_.of(ns);
    SingleFlight::Join join = flights_.join(key, config_.load_timeout);
    if (!join.is_leader) {
        m.waits.add();
        if (join.outcome.status != CACHEKIT_OK) fail(join.outcome.status, join.outcome.message);
        buf_assign(out, join.outcome.value);
        if (info) info->source = Source::Waited;
        return CACHEKIT_OK;
    }
    SingleFlight::Outcome outcome;
    try {
        int rc = load_as_leader(ns, key, ttl, loader, out, info, m, outcome);
        flights_.finish(join.flight, std::move(outcome));
        return rc;
    } catch (const Error &e) {
        flights_.finish(join.flight, {e.code(), {}, e.what()});
        throw;
    } catch (const std::bad_alloc &) {
        flights_.finish(join.flight, {CACHEKIT_ENOMEM, {}, "out of memory"});
        throw;
    } catch (...) {
        flights_.finish(join.flight, {CACHEKIT_EINTERNAL, {}, "the loader threw"});
        throw;
    }
}

int Cache::load_as_leader(std::string_view ns, std::string_view key, std::optional<l2::Ttl> ttl, const Loader &loader,
                          cachekit_buf *out, Lookup *info, metrics::NamespaceMetrics &m,
                          SingleFlight::Outcome &outcome) {
    auto publish = [&](Source source) {
        outcome.status = CACHEKIT_OK;
        outcome.value.assign(out->ptr ? out->ptr : "", out->size);
        if (info) info->source = source;
        return CACHEKIT_OK;
    };
    // Another flight may have stored the value just before this one began.
    if (read_l1(ns, key, out, info, m) || read_l2(ns, key, out, info, m)) return publish(info ? info->source : Source::L2);
    const InvalidationLog::Ticket ticket = log_.ticket();

    std::optional<std::string> lock_token;
    const std::string lock_name = storage_key(key) + ":lock";
    if (config_.cross_process_lock && config_.backend) {
        try {
            lock_token = config_.backend->lock(lock_name, config_.lock_hold, deadline());
        } catch (const Error &e) {
            if (!is_backend_failure(e.code())) throw;
            backend_failed(e, m);  // no lock: compute unlocked
        }
        if (!lock_token) {
            // Another process computes: wait a bounded time for its value, then compute anyway.
            const auto until = std::chrono::steady_clock::now() + config_.lock_wait;
            while (std::chrono::steady_clock::now() < until) {
                std::this_thread::sleep_for(milliseconds(25));
                if (read_l2(ns, key, out, info, m)) return publish(Source::L2);
            }
        }
    }
    struct Unlock {
        Cache &cache;
        const std::string &name;
        std::optional<std::string> &token;
        ~Unlock() {
            if (!token) return;
            try {
                cache.config_.backend->unlock(name, *token, cache.deadline());
            } catch (...) {
            }  // the lock expires by itself
        }
    } unlock{*this, lock_name, lock_token};

    LoadResult result;
    const int status = loader(result);
    if (status != 0 || !result.has_value) {
        m.load_errors.add();
        fail(CACHEKIT_EUSER, result.error.empty() ? "the loader failed" : result.error);
    }
    check_payload(result.value);
    m.loads.add();
    store(ns, key, result.value, result.ttl ? result.ttl : ttl, ticket, 0);  // too large: returned, not stored
    buf_assign(out, result.value);
    outcome.status = CACHEKIT_OK;
    outcome.value = std::move(result.value);
    if (info) info->source = Source::Loaded;
    return CACHEKIT_OK;
}

int Cache::invalidate(std::string_view ns, std::string_view key) {
    metrics::NamespaceMetrics &m = metrics_.of(ns);
    const uint64_t h = l1::L1Cache::hash_key(key);
    std::shared_lock writers(writers_);
    std::lock_guard guard(stripe(h));
    log_.key_invalidated(h);
    claims_.cancel(key);
    if (l1_) l1_->invalidate(key);
    if (config_.backend) {
        backend_call(m, [&] { config_.backend->del(storage_key(key), deadline()); });
    }
    m.invalidations.add();
    return CACHEKIT_OK;
}

int Cache::invalidate_namespace(std::string_view ns) {
    metrics::NamespaceMetrics &m = metrics_.of(ns);
    std::unique_lock writers(writers_);
    log_.namespace_invalidated(ns);
    claims_.cancel_all();
    if (l1_) l1_->invalidate_namespace(ns);
    if (config_.backend) {
        // Not a backend failure, so always returned: the file backend cannot clear a prefix.
        backend_call(m, [&] { config_.backend->clear(namespace_prefix(ns), l2::Deadline::after(config_.l2_timeout * 20)); });
    }
    m.invalidations.add();
    return CACHEKIT_OK;
}

int Cache::clear() {
    std::unique_lock writers(writers_);
    log_.all_invalidated();
    claims_.cancel_all();
    if (l1_) l1_->clear();
    if (config_.backend) {
        metrics::NamespaceMetrics &m = metrics_.of("");
        backend_call(m, [&] { config_.backend->clear(config_.key_prefix, l2::Deadline::after(config_.l2_timeout * 20)); });
    }
    return CACHEKIT_OK;
}

}  // namespace cachekit::cache
