#include "cache/cache.hpp"

#include <new>
#include <thread>
#include <vector>

#include "cache/key_space.hpp"
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
    config_.value.read_keyring = config_.read_keyring.get();
    // Before the L1 is made: fork() takes the registry's locks in join
    // order, and a stripe is held while the L1's locks are taken.
    fork_hooks::join(this, fork_hooks::Locks::Many);
    try {
        if (config_.l1_enabled) l1_ = std::make_unique<l1::L1Cache>(config_.l1);
    } catch (...) {
        fork_hooks::leave(this);
        throw;
    }
    plain_l1_ = l1_ && !config_.keyring;
    if (plain_l1_) metrics_.count_engine_hits(l1_hits_.emplace(*l1_));
    quick_default_ = plain_l1_ && !config_.swr;
    quick_l1_hits_.store(quick_default_, std::memory_order_relaxed);
    if (l1_ && config_.backend) {
        try {
            CoherenceActions actions;
            // A change reported by the server is a write to L2 (perhaps our
            // own), not an invalidation: recorded as a put records itself, so
            // a fill that read L2 before it does not land, while a load's own
            // L2 write is never taken back for it (as for an invalidation).
            actions.forget_key = [this](std::string_view key) {
                const uint64_t h = l1::L1Cache::hash_key(key);
                std::lock_guard guard(stripe(h));
                log_.key_written(h);
                l1_->invalidate(key);
            };
            // The L1 refuses fills ticketed before it by itself.
            actions.forget_namespace = [this](std::string_view ns) { l1_->invalidate_namespace(ns); };
            coherence_ = Coherence::start(*config_.backend, *l1_, config_.key_prefix, std::move(actions),
                                          config_.resilient ? config_.resilient->label() : std::string());
        } catch (...) {
            fork_hooks::leave(this);
            throw;
        }
    }
}

Cache::~Cache() {
    coherence_.reset();  // its thread calls into the cache
    fork_hooks::leave(this);
}

// The locks this cache owns, stripes first (a stripe is held while the
// others are taken; none of the others is taken while another is held).
// No thread of the cache calls out (L2, a loader) while holding one, so
// before_fork waits only for in-memory work.
void Cache::before_fork() noexcept {
    for (std::mutex &m : stripes_) m.lock();
    claims_.fork_prepare();
    load_claims_.fork_prepare();
    log_.fork_prepare();
    registry_.fork_prepare();
}

void Cache::after_fork_parent() noexcept {
    registry_.fork_parent();
    log_.fork_parent();
    load_claims_.fork_parent();
    claims_.fork_parent();
    for (std::mutex &m : stripes_) m.unlock();
}

// Fresh mutexes: taken by before_fork, or not at all under TSan (Locks::Many).
void Cache::after_fork_child() noexcept {
    registry_.fork_child();
    // The inherited L1 has no feed here: no quick hits from it until the
    // first cache call flushes it and starts this process's feed (check_coherence).
    if (coherence_) quick_l1_hits_.store(false, std::memory_order_relaxed);
    log_.fork_child();
    load_claims_.fork_child();
    claims_.fork_child();
    for (std::mutex &m : stripes_) new (&m) std::mutex;
}

std::string Cache::storage_key(std::string_view key) const {
    std::string k;
    k.reserve(config_.key_prefix.size() + key.size());
    k.append(config_.key_prefix).append(key);
    return k;
}

std::string_view Cache::aad_key(std::string_view key, std::string &scratch) const {
    if ((!config_.keyring && !config_.read_keyring) || config_.key_prefix.empty()) return key;
    scratch = storage_key(key);
    return scratch;
}

void Cache::backend_failed(const Error &e, metrics::NamespaceMetrics &m) {
    if (e.code() == CACHEKIT_ETIMEOUT) m.timeouts.add();
    else m.backend_errors.add();
}

// The reference SDK's refresh_ttl_on_get: only an entry that expires (and
// has not yet) and has less than default_ttl x ttl_refresh_threshold left,
// reset to default_ttl. A failure is counted and the hit stands (the reference
// refreshes in the background and only logs its failures).
l2::Ttl Cache::refresh_ttl(std::string_view key, l2::Ttl remaining, metrics::NamespaceMetrics &m) {
    if (!config_.default_ttl || !remaining || remaining->count() <= 0) return remaining;
    if (double(remaining->count()) >= double(config_.default_ttl->count()) * config_.refresh_ttl_below) return remaining;
    try {
        if (config_.backend->expire(storage_key(key), *config_.default_ttl, deadline())) return config_.default_ttl;
    } catch (const Error &e) {
        if (!is_backend_failure(e.code())) throw;
        backend_failed(e, m);
    }
    return remaining;
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
    // Fail open: a refused entry is a miss (counted above). L1 holds only
    // this process's copies, so it lets go of any; the shared L2 entry is
    // deleted only when proven bad. One this reader merely cannot read (a
    // key it lacks in a rotation, no encryption, another serializer, a
    // limit of its own) may be another reader's good entry: left alone.
    (void)ns;
    if (l1_) l1_->invalidate(key);
    if (config_.backend && (v == Verdict::Corrupt || v == Verdict::Tampered)) {
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
    check_coherence();
    l1::EntryInfo entry;
    // The entry's times matter only for SWR or a caller's lookup report.
    l1::EntryInfo *want = info || config_.swr ? &entry : nullptr;
    if (config_.keyring) {
        // Encrypted caches keep ciphertext in L1 and open it on every hit.
        Buffer stored;
        if (!l1_->get(key, stored.get(), &entry)) return false;
        std::string why, bound;
        Verdict v = decode_stored(config_.value, aad_key(key, bound), stored.view(), out, &why);
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
                    metrics::NamespaceMetrics &m, bool *failed) {
    if (!config_.backend) return false;
    // Both tickets before the read: a write or invalidation that could have
    // come after what the read sees records itself after them.
    const l1::FillTicket l1_ticket = l1_ ? l1_->begin_fill() : l1::kNoTicket;
    const InvalidationLog::Ticket ticket = l1_ ? log_.ticket() : 0;
    Buffer stored;
    // An entry that is its own payload is read straight into `out`.
    const bool in_place = stored_is_payload(config_.value);
    cachekit_buf *target = in_place ? out : stored.get();
    l2::Ttl remaining;
    bool found = false;
    const auto started = std::chrono::steady_clock::now();
    try {
        found = l1_ || config_.refresh_ttl_below > 0
                    ? config_.backend->get_with_ttl(storage_key(key), target, &remaining, deadline())
                    : config_.backend->get(storage_key(key), target, deadline());
    } catch (const Error &e) {
        if (e.code() == CACHEKIT_ETOOBIG) {
            // The stored value is over the reply limit (from max_value_bytes):
            // refused unread, a miss like any entry over the limit; left alone.
            m.too_large.add();
            if (config_.verify_fail_closed) throw;
            return false;
        }
        if (!is_backend_failure(e.code())) throw;
        backend_failed(e, m);
        if (config_.fail_closed) throw;
        if (failed) *failed = true;
        return false;
    }
    m.l2_latency_ms.observe(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started).count());
    if (!found) return false;
    std::string why, bound;
    msgpack::DocumentFacts facts;
    Verdict v = in_place ? check_in_place(config_.value, out, &why, info ? &facts : nullptr)
                         : decode_stored(config_.value, aad_key(key, bound), stored.view(), out, &why, info ? &facts : nullptr);
    if (v != Verdict::Ok) {
        if (in_place) out->size = 0;  // a refused entry is a miss: none of it is handed out
        return refused(v, ns, key, why, m);
    }
    m.l2_hits.add();
    if (info) info->temporal_keys = facts.temporal_keys ? 1 : 0;
    if (config_.refresh_ttl_below > 0) remaining = refresh_ttl(key, remaining, m);
    if (l1_ && !(remaining && remaining->count() <= 0)) {
        // L1 never outlives the L2 entry it copies.
        const uint64_t until = remaining ? l1::add_saturating(l1_->now(), ms_to_ns(remaining->count())) : l1::kNever;
        std::string_view keep = config_.keyring ? stored.view() : buf_view(*out);
        fill_l1(ns, key, keep, until, ticket, l1_ticket);
    }
    if (info) info->source = Source::L2;
    return true;
}

bool Cache::changed_since(InvalidationLog::Ticket ticket, uint64_t h, std::string_view ns) {
    std::lock_guard guard(stripe(h));
    return log_.changed_since(ticket, h, ns);
}

void Cache::fill_l1(std::string_view ns, std::string_view key, std::string_view stored, uint64_t until,
                    InvalidationLog::Ticket ticket, l1::FillTicket l1_ticket) {
    const uint64_t h = l1::L1Cache::hash_key(key);
    std::lock_guard guard(stripe(h));
    // A put or invalidation of the key since the read records itself under
    // this mutex: checked and stored as one step. Namespace and whole-cache
    // invalidations are refused by the L1's own ticket check; so is a fill
    // that read L2 before the invalidation feed was subscribed again.
    if (log_.changed_since(ticket, h, ns) || !l1_open()) return;
    l1_->put_until(ns, key, stored, until, l1_ticket);
}

int Cache::get_rest(std::string_view ns, std::string_view key, cachekit_buf *out, Lookup *info) {
    return lookup(ns, key, out, info, nullptr);
}

int Cache::peek_rest(std::string_view ns, std::string_view key, cachekit_buf *out, Lookup *info) {
    if (info == nullptr && quick_l1_hits_.load(std::memory_order_relaxed)) return CACHEKIT_ENOTFOUND;  // quick_hit asked already
    return read_l1(ns, key, out, info, metrics_.of(ns)) ? CACHEKIT_OK : CACHEKIT_ENOTFOUND;
}

int Cache::lookup(std::string_view ns, std::string_view key, cachekit_buf *out, Lookup *info, bool *l2_failed) {
    check_coherence();
    const bool l1_asked = info == nullptr && quick_l1_hits_.load(std::memory_order_relaxed);  // by quick_hit
    metrics::NamespaceMetrics &m = metrics_.of(ns);
    if ((!l1_asked && read_l1(ns, key, out, info, m)) || read_l2(ns, key, out, info, m, l2_failed)) return CACHEKIT_OK;
    m.misses.add();
    return CACHEKIT_ENOTFOUND;
}

Cache::StoreOutcome Cache::store(std::string_view ns, std::string_view key, std::string_view payload,
                                 std::optional<l2::Ttl> ttl, InvalidationLog::Ticket ticket, Write how,
                                 RefreshClaims *claims, uint64_t claim) {
    metrics::NamespaceMetrics &m = metrics_.of(ns);
    if (payload.size() > config_.max_value_bytes) {
        m.too_large.add();
        return StoreOutcome::TooLarge;
    }
    const l2::Ttl expiry = ttl ? *ttl : config_.default_ttl;
    Buffer stored;
    std::string bound;
    if (config_.backend || config_.keyring) encode_stored(config_.value, aad_key(key, bound), payload, stored.get());
    const uint64_t h = l1::L1Cache::hash_key(key);

    const bool fill = how != Write::Put;
    // What happens to the key from here on is seen by the checks below; a
    // fill's earlier window is covered by its claim and ticket.
    const InvalidationLog::Ticket since = fill ? log_.ticket() : ticket;
    // A value computed before a newer write or invalidation is not stored at
    // all: its claim (exact per key) was cancelled, or its namespace or the
    // cache was invalidated since its ticket.
    if (fill && (!claims || !claims->settle(key, claim) || log_.group_invalidated_since(ticket, ns))) {
        m.dropped_fills.add();
        return StoreOutcome::Dropped;
    }
    const uint64_t l1_until =
        !l1_ ? 0 : expiry ? l1::add_saturating(l1_->now(), ms_to_ns(expiry->count())) : l1::kNever;
    // With coherence, the L1 ticket predates the L2 write: a value written
    // while the invalidation feed was down (a change by others missed) is
    // refused by the flush that reopens the L1.
    check_coherence();
    const l1::FillTicket early_ticket = coherence_ ? l1_->begin_fill() : l1::kNoTicket;
    // The L2 write holds no lock of the cache: the log orders it.
    bool in_l2 = false;
    if (config_.backend && how != Write::FillL1Only) {
        // Before the send: the server may deliver the write's message before its reply.
        if (coherence_) coherence_->writing(h);
        try {
            in_l2 = backend_call(m, [&] { write_l2(key, stored.view(), expiry, m); });
        } catch (const Error &e) {  // over the L2's own value limit: too large, as over ours
            if (e.code() != CACHEKIT_ETOOBIG) throw;
            m.too_large.add();
            return StoreOutcome::TooLarge;
        }
        if (in_l2) m.stored_bytes.observe(double(stored.size()));
        if (in_l2 && coherence_ && !fill) coherence_->announce(key);
    }
    bool raced;
    {
        std::lock_guard guard(stripe(h));
        // The L1's ticket before the check: a namespace or whole-cache
        // invalidation recorded after the check is refused by the L1 itself.
        const l1::FillTicket l1_ticket = coherence_ ? early_ticket : l1_ ? l1_->begin_fill() : l1::kNoTicket;
        raced = log_.changed_since(since, h, ns);
        if (l1_) {
            const std::string_view l1_value = config_.keyring ? stored.view() : payload;
            // Raced: which L2 write came last is unknown, so L1 keeps neither.
            // With no L2 the L1 is the store and this lock orders the writes:
            // a put is the newest, a fill lost to the write it raced with.
            if (!config_.backend && raced) {
                if (!fill) l1_->put_until(ns, key, l1_value, l1_until, l1_ticket);
            } else if (raced || !l1_open()) {
                l1_->invalidate(key);
            } else {
                l1_->put_until(ns, key, l1_value, l1_until, l1_ticket);
            }
        }
        if (!fill) {
            // Loads and refreshes of the key that began before this write
            // lose to it. Cancelled before the write is recorded: a fill
            // takes its ticket before it settles its claim, so one that
            // settled in time has a ticket older than the record (it sees
            // the race) and one that did not is refused by its claim.
            claims_.cancel(key);
            load_claims_.cancel(key);
        }
        log_.key_written(h);  // fills that read L2 before this write can no longer land
    }
    if (fill && raced && (!config_.backend || log_.invalidated_since(since, h, ns))) {
        // An invalidation overlapped the L2 write of a value computed before
        // it and may have deleted before that write: take the value back so
        // the invalidation wins. (A put overlapping an invalidation may
        // land in either order: L1 is left empty, L2 holds whichever came last.)
        // With no L2, a raced fill was not stored at all.
        if (in_l2) forget_everywhere(key, h, m);
        m.dropped_fills.add();
        return StoreOutcome::Dropped;
    }
    m.stores.add();
    return StoreOutcome::Stored;
}

int Cache::put(std::string_view ns, std::string_view key, std::string_view payload, std::optional<l2::Ttl> ttl) {
    check_payload(payload);
    if (store(ns, key, payload, ttl, log_.ticket(), Write::Put) == StoreOutcome::TooLarge)
        fail(CACHEKIT_ETOOBIG, "value of " + std::to_string(payload.size()) + " bytes is over max_value_bytes (" +
                                   std::to_string(config_.max_value_bytes) + "): not stored");
    return CACHEKIT_OK;
}

int Cache::get_for_load(std::string_view ns, std::string_view key, cachekit_buf *out, Lookup &info) {
    // As get_or_load up to its loader: the leader's claim, then a second
    // read only when the key was written since the first began.
    const InvalidationLog::Ticket before = log_.ticket();
    if (lookup(ns, key, out, &info, nullptr) == CACHEKIT_OK) return CACHEKIT_OK;
    const uint64_t claim = load_claims_.take(key, config_.load_timeout, log_.ticket(), ns);
    if (changed_since(before, l1::L1Cache::hash_key(key), ns)) {
        metrics::NamespaceMetrics &m = metrics_.of(ns);
        if (read_l1(ns, key, out, &info, m) || read_l2(ns, key, out, &info, m)) {
            load_claims_.settle(key, claim);
            return CACHEKIT_OK;
        }
    }
    info.refresh = true;
    info.refresh_claim = claim;
    return CACHEKIT_ENOTFOUND;
}

int Cache::land_load(std::string_view ns, std::string_view key, std::string_view payload, std::optional<l2::Ttl> ttl,
                     uint64_t claim) {
    RefreshClaims::Held held;
    if (load_claims_.find(key, claim, &held) && held.ns != ns)
        fail(CACHEKIT_EINVAL, "the load claim was taken in another namespace");
    metrics::NamespaceMetrics &m = metrics_.of(ns);
    m.loads.add();  // every load that reports its value, stored or not (as get_or_load counts)
    // Stored only if no put or invalidation of the key cancelled the claim
    // and no invalidation of its namespace or the cache came after it.
    switch (store(ns, key, payload, ttl, held.ticket, Write::Fill, &load_claims_, claim)) {
    case StoreOutcome::Stored: return CACHEKIT_OK;
    case StoreOutcome::Dropped: return CACHEKIT_ENOTFOUND;
    case StoreOutcome::TooLarge:
        load_claims_.settle(key, claim);
        fail(CACHEKIT_ETOOBIG, "loaded value is over max_value_bytes: not stored");
    }
    return CACHEKIT_EINTERNAL;
}

int Cache::put_refresh(std::string_view ns, std::string_view key, std::string_view payload, std::optional<l2::Ttl> ttl,
                       uint64_t claim) {
    check_payload(payload);
    if (claim == 0) fail(CACHEKIT_EINVAL, "a refresh needs the claim its lookup returned");
    if (claim & kLoadClaimTag) return land_load(ns, key, payload, ttl, claim);
    switch (store(ns, key, payload, ttl, log_.ticket(), Write::Fill, &claims_, claim)) {
    case StoreOutcome::Stored: metrics_.of(ns).refreshes.add(); return CACHEKIT_OK;
    case StoreOutcome::Dropped: return CACHEKIT_ENOTFOUND;
    case StoreOutcome::TooLarge: fail(CACHEKIT_ETOOBIG, "refreshed value is over max_value_bytes: not stored");
    }
    return CACHEKIT_EINTERNAL;
}

void Cache::abandon_refresh(std::string_view key, uint64_t claim) {
    if (!(claim & kLoadClaimTag)) {
        claims_.settle(key, claim);
        return;
    }
    // A load that gave up: a load error of the namespace it was claimed in
    // (unknown, so not counted, once a newer load of the key replaced it).
    RefreshClaims::Held held;
    load_claims_.settle(key, claim, &held);
    if (held.known) metrics_.of(held.ns).load_errors.add();
}

int Cache::get_or_load(std::string_view ns, std::string_view key, std::optional<l2::Ttl> ttl, const Loader &loader,
                       cachekit_buf *out, Lookup *info) {
    // A hit (the quick one included) is get's; a miss is counted there too.
    if (info == nullptr && quick_hit(key, out)) return CACHEKIT_OK;
    // Before the read: a store of the key after this ticket means the
    // leader must read again; none means the miss below still holds.
    const InvalidationLog::Ticket before = log_.ticket();
    bool l2_failed = false;
    if (lookup(ns, key, out, info, &l2_failed) == CACHEKIT_OK) return CACHEKIT_OK;
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
        int rc = load_as_leader(ns, key, ttl, loader, out, info, m, {before, l2_failed}, outcome);
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
                          cachekit_buf *out, Lookup *info, metrics::NamespaceMetrics &m, FirstRead first,
                          SingleFlight::Outcome &outcome) {
    auto publish = [&](Source source) {
        outcome.status = CACHEKIT_OK;
        outcome.value.assign(out->ptr ? out->ptr : "", out->size);
        if (info) info->source = source;
        return CACHEKIT_OK;
    };
    const InvalidationLog::Ticket ticket = log_.ticket();
    // A put or invalidation of the key from now on cancels this claim, and
    // the value is then not stored. Released on every way out.
    struct LoadClaim {
        RefreshClaims &claims;
        std::string_view key;
        uint64_t id;
        ~LoadClaim() { claims.settle(key, id); }
    } load_claim{load_claims_, key, load_claims_.take(key, config_.load_timeout)};
    // Another flight may have stored the value since the caller's read:
    // read again only then (a miss otherwise costs one L2 read, not two).
    bool l2_failed = first.l2_failed;
    if (changed_since(first.ticket, l1::L1Cache::hash_key(key), ns) &&
        (read_l1(ns, key, out, info, m) || (!l2_failed && read_l2(ns, key, out, info, m, &l2_failed))))
        return publish(info ? info->source : Source::L2);

    // After a failed L2 read, L2 is left out of this call (no lock, no
    // write): an outage costs a caller one command timeout at most.
    std::optional<std::string> lock_token;
    const std::string lock_name = storage_key(key) + ":lock";
    if (config_.cross_process_lock && config_.backend && !l2_failed) {
        try {
            lock_token = config_.backend->lock(lock_name, config_.lock_hold, deadline());
        } catch (const Error &e) {
            if (!is_backend_failure(e.code())) throw;
            backend_failed(e, m);  // no lock: compute unlocked
        }
        if (!lock_token) {
            // Another process computes: wait a bounded time for its value, then compute anyway.
            const auto until = std::chrono::steady_clock::now() + config_.lock_wait;
            while (!l2_failed && std::chrono::steady_clock::now() < until) {
                std::this_thread::sleep_for(milliseconds(25));
                if (read_l2(ns, key, out, info, m, &l2_failed)) return publish(Source::L2);
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
    // Too large: returned, not stored.
    store(ns, key, result.value, result.ttl ? result.ttl : ttl, ticket, l2_failed ? Write::FillL1Only : Write::Fill,
          &load_claims_, load_claim.id);
    buf_assign(out, result.value);
    outcome.status = CACHEKIT_OK;
    outcome.value = std::move(result.value);
    if (info) info->source = Source::Loaded;
    return CACHEKIT_OK;
}

void Cache::forget_key(std::string_view key, uint64_t h) {
    std::lock_guard guard(stripe(h));
    log_.key_invalidated(h);
    claims_.cancel(key);
    load_claims_.cancel(key);
    if (l1_) l1_->invalidate(key);
}

void Cache::forget_everywhere(std::string_view key, uint64_t h, metrics::NamespaceMetrics &m) {
    forget_key(key, h);
    if (!config_.backend) return;
    // No lock of the cache is held across the delete. Recorded again after
    // it: a fill that read the old value before the delete is refused (or,
    // had it landed already, removed) by the second record.
    try {
        backend_call(m, [&] { config_.backend->del(storage_key(key), deadline()); });
    } catch (...) {
        forget_key(key, h);
        throw;
    }
    forget_key(key, h);
    if (coherence_) coherence_->announce(key);
}

void Cache::forget_group(const std::function<void()> &record, const l2::KeySelection &which,
                         metrics::NamespaceMetrics &m) {
    record();
    if (!config_.backend) return;
    // The SCAN runs with no lock of the cache held (stores go on meanwhile);
    // recorded again after it, as for one key.
    try {
        backend_call(m, [&] { config_.backend->clear(which, l2::Deadline::after(config_.l2_timeout * 20)); });
    } catch (...) {
        record();
        throw;
    }
    record();
}

void Cache::write_l2(std::string_view key, std::string_view stored, l2::Ttl expiry, metrics::NamespaceMetrics &m) {
    std::optional<std::string> registry = registry_.set_of(key);
    if (!registry) {
        config_.backend->set(storage_key(key), stored, expiry, deadline());
        return;
    }
    // The set's name and its members as the reference SDK writes them: the
    // name under the cache's key_prefix, the member the bare key.
    if (!config_.backend->set_registered(storage_key(key), stored, expiry, storage_key(*registry), key, deadline()))
        m.registry_errors.add();  // fail open: the value is stored, only other processes' drains miss it
}

bool Cache::track_function(std::string_view ns, std::string_view function, std::string_view head) {
    registry_.track(ns, function, head);
    return config_.backend && config_.backend->keeps_registry();
}

uint64_t Cache::invalidate_function(std::string_view ns, std::string_view function) {
    metrics::NamespaceMetrics &m = metrics_.of(ns);
    std::vector<std::string> drained;
    if (config_.backend && config_.backend->keeps_registry()) {
        const std::string set = storage_key(KeyRegistry::set_name(ns, function));
        backend_call(m, [&] {
            drained = config_.backend->drain_registry(set, config_.key_prefix, l2::Deadline::after(config_.l2_timeout * 20));
        });
    }
    // After the drain: loads and fills of these keys that began before it
    // do not land (a fill whose L2 write raced the drain takes it back, as
    // after invalidate), and this process's L1 lets the keys go.
    for (const std::string &key : drained) forget_key(key, l1::L1Cache::hash_key(key));
    m.invalidations.add();
    return drained.size();
}

int Cache::invalidate(std::string_view ns, std::string_view key) {
    metrics::NamespaceMetrics &m = metrics_.of(ns);
    forget_everywhere(key, l1::L1Cache::hash_key(key), m);
    m.invalidations.add();
    return CACHEKIT_OK;
}

int Cache::invalidate_namespace(std::string_view ns) {
    metrics::NamespaceMetrics &m = metrics_.of(ns);
    // Only keys of the cache's shape in this namespace (key_space.hpp).
    // Not a backend failure, so always returned: the file backend cannot clear a namespace.
    forget_group(
        [&] {
            log_.namespace_invalidated(ns);
            claims_.cancel_all();  // (loads: their ticket sees the group record)
            if (l1_) l1_->invalidate_namespace(ns);
        },
        own_namespace_keys(config_.value.format, config_.key_prefix, ns), m);
    m.invalidations.add();
    return CACHEKIT_OK;
}

int Cache::clear() {
    // Only keys of the cache's shape under its prefix (key_space.hpp): other
    // applications' keys in the same database stay.
    l2::KeySelection own = own_keys(config_.value.format, config_.key_prefix);
    own.hashed_names_clear_all = true;  // a file directory is the cache's own
    forget_group(
        [&] {
            log_.all_invalidated();
            claims_.cancel_all();  // (loads: their ticket sees the group record)
            if (l1_) l1_->clear();
        },
        own, metrics_.of(""));
    return CACHEKIT_OK;
}

}  // namespace cachekit::cache
