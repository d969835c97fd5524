#include "l1/l1_cache.hpp"

#include <bit>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "util/buffer.hpp"
#include "util/error.hpp"

namespace cachekit::l1 {

AdmissionPolicy admission_policy(int c_value, const char *what) {
    if (c_value == CACHEKIT_L1_ADMISSION_LRU) return AdmissionPolicy::Lru;
    if (c_value == CACHEKIT_L1_ADMISSION_TINYLFU) return AdmissionPolicy::TinyLfu;
    fail(CACHEKIT_EINVAL, std::string(what) + " is CACHEKIT_L1_ADMISSION_LRU (0) or CACHEKIT_L1_ADMISSION_TINYLFU (1), got " +
                              std::to_string(c_value));
}

uint64_t L1Cache::hash_key(std::string_view key) noexcept {
    return XXH3_64bits(key.data(), key.size());
}

L1Cache::L1Cache(const Options &o)
    : clock_(o.clock),
      precise_(o.precise_clock),
      max_bytes_(o.max_bytes),
      promote_interval_(o.promote_interval_ns),
      sweep_batch_(o.sweep_batch),
      namespaces_(o.max_namespaces) {
    if (o.max_bytes < kMinMaxBytes) fail(CACHEKIT_EINVAL, "L1 max_bytes must be at least 1 MiB");
    if (o.shards > kMaxShards) fail(CACHEKIT_EINVAL, "L1 shards must be at most 1024");
    if (o.sweep_batch == 0) fail(CACHEKIT_EINVAL, "L1 sweep_batch must be positive");
    unsigned n = o.shards == 0 ? kDefaultShards : std::bit_ceil(o.shards);
    shard_mask_ = n - 1;
    retire_slack_ = max_bytes_ / (16 * uint64_t(n));
    if (o.admission == AdmissionPolicy::TinyLfu) admission_ = std::make_unique<Admission>(max_bytes_, n);
    else if (o.admission != AdmissionPolicy::Lru) fail(CACHEKIT_EINVAL, "L1 admission must be Lru or TinyLfu");
    shards_.reserve(n);
    for (unsigned i = 0; i < n; ++i) shards_.push_back(std::make_unique<Shard>());
    if (o.sweep_interval_ms > 0)
        sweeper_ = std::make_unique<Sweeper>(std::chrono::milliseconds(o.sweep_interval_ms),
                                             [this] { sweep(); });
    EpochDomain::join_fork_registry();
    fork_hooks::join(this, fork_hooks::Locks::Many);
}

L1Cache::~L1Cache() {
    fork_hooks::leave(this);
    sweeper_.reset();
    // No reader may be inside a cache being destroyed: everything goes now.
    for (auto &s : shards_) {
        free_chain(s->detach_all());
        free_chain(s->take_all_retired());
    }
}

void L1Cache::free_chain(Entry *chain) noexcept {
    while (chain != nullptr) {
        Entry *nx = chain->next;
        chain->ns->release();  // no reader can see it any more
        chain->~Entry();
        std::free(chain);
        chain = nx;
    }
}

void L1Cache::remove_locked(Shard &s, Entry *e, Reason why) noexcept {
    s.unlink(e);
    switch (why) {
    case Reason::Replaced: break;
    case Reason::Evicted: ++s.counters.evictions; break;
    case Reason::Expired: ++s.counters.expirations; break;
    case Reason::Invalidated: ++s.counters.invalidations; break;
    }
    retire_locked(s, e);
    bytes_.fetch_sub(e->charge(), std::memory_order_acq_rel);
}

void L1Cache::retire_locked(Shard &s, Entry *e) noexcept {
    // The stamp is read after the unlink (both seq_cst): a reader that can
    // still reach e pinned an epoch no later than the stamp.
    s.retire(e, EpochDomain::global().retire_stamp());
    s.retired_bytes += e->charge();
}

uint64_t L1Cache::reclaim_below() noexcept {
    uint64_t now = EpochDomain::global().current();
    return now >= 2 ? now - 1 : 0;  // stamps with stamp + 2 <= now
}

Entry *L1Cache::take_reclaimable_locked(Shard &s) noexcept {
    if (s.retired_head == nullptr && s.retired_tables.empty()) return nullptr;
    Entry *chain = s.take_reclaimable(reclaim_below());
    for (Entry *e = chain; e != nullptr; e = e->next) s.retired_bytes -= e->charge();
    return chain;
}

void L1Cache::after_write(Shard &s, uint64_t retired_bytes) {
    if (retired_bytes == 0) return;
    EpochDomain &domain = EpochDomain::global();
    domain.try_advance();
    // Past its share of the slack, a shard frees its retired entries now
    // rather than on its next write, so removed memory never lingers much
    // beyond the budget.
    if (retired_bytes <= retire_slack_) return;
    domain.try_advance();
    reclaim(s);
}

void L1Cache::reclaim(Shard &s) {
    Entry *chain;
    {
        std::lock_guard lock(s.mu);
        chain = take_reclaimable_locked(s);
    }
    free_chain(chain);
}

// Expired entries first (the heap top), then the LRU tail, or under TinyLFU
// the loser of the admission contest. O(log n).
bool L1Cache::evict_one_locked(Shard &s, uint64_t now, uint64_t incoming) noexcept {
    Entry *top = s.heap_top();
    if (top != nullptr && top->deadline <= now) {
        remove_locked(s, top, Reason::Expired);
        return true;
    }
    Entry *victim = admission_ ? admission_->choose_victim(s, incoming, now, [this](const Entry *e) { return is_stale(e); })
                               : s.lists[kWindow].tail;
    if (victim == nullptr) return false;
    remove_locked(s, victim, is_stale(victim) ? Reason::Invalidated : Reason::Evicted);
    return true;
}

bool L1Cache::evict_elsewhere(const Shard *own, uint64_t now) {
    size_t n = shards_.size();
    unsigned start = victim_cursor_.fetch_add(1, std::memory_order_relaxed);
    for (size_t i = 0; i < n; ++i) {
        Shard &s = *shards_[(start + i) & shard_mask_];
        if (&s == own) continue;
        Entry *reclaimed;
        uint64_t retired;
        bool ok;
        {
            std::lock_guard lock(s.mu);
            reclaimed = take_reclaimable_locked(s);
            ok = evict_one_locked(s, now);
            retired = s.retired_bytes;
        }
        free_chain(reclaimed);
        after_write(s, retired);
        if (ok) return true;
    }
    return false;
}

bool L1Cache::try_reserve(uint64_t bytes) noexcept {
    uint64_t cur = bytes_.load(std::memory_order_relaxed);
    do {
        if (bytes > max_bytes_ || cur > max_bytes_ - bytes) return false;
    } while (!bytes_.compare_exchange_weak(cur, cur + bytes, std::memory_order_acq_rel,
                                           std::memory_order_relaxed));
    note_peak(cur + bytes);
    return true;
}

void L1Cache::note_peak(uint64_t bytes) noexcept {
    uint64_t peak = peak_bytes_.load(std::memory_order_relaxed);
    while (bytes > peak &&
           !peak_bytes_.compare_exchange_weak(peak, bytes, std::memory_order_relaxed)) {
    }
}

void L1Cache::note_hold(uint64_t ns) noexcept {
    uint64_t cur = sweep_max_hold_.load(std::memory_order_relaxed);
    while (ns > cur && !sweep_max_hold_.compare_exchange_weak(cur, ns, std::memory_order_relaxed)) {
    }
}

// Deferred promotion: a hit moves its entry to the LRU head only when the
// promote interval has passed since its last move and it has fallen out of
// the most recent quarter of its shard (lru_seq counts moves to the head, so
// fewer than count / 4 moves since its own means it is still in that
// quarter). Most hits then write nothing at all. Interval 0: exact LRU.
bool L1Cache::promotion_due(const Shard &s, const Entry *e, uint64_t now) const noexcept {
    if (promote_interval_ == 0) return true;
    return left_recent_quarter(s, e) && interval_passed(e, now);
}

bool L1Cache::left_recent_quarter(const Shard &s, const Entry *e) noexcept {
    uint32_t moves_since = s.lru_seq.load(std::memory_order_relaxed) - e->lru_seq.load(std::memory_order_relaxed);
    return moves_since > s.entries() / 4;
}

bool L1Cache::interval_passed(const Entry *e, uint64_t now) const noexcept {
    uint64_t at = e->promoted_at.load(std::memory_order_relaxed);
    return now >= at && now - at >= promote_interval_;
}

void L1Cache::copy_out(const Entry *e, cachekit_buf *out, EntryInfo *info) {
    if (out != nullptr) buf_assign(out, e->key_data() + e->key_len, e->value_len);
    if (info != nullptr) fill_info(e, info);
}

// Apart from copy_out, so the common hit (no info) does not pay for the
// string assignment's register saves.
void L1Cache::fill_info(const Entry *e, EntryInfo *info) {
    info->inserted_at_ns = e->inserted_at;
    info->deadline_ns = e->deadline;
    info->ns.assign(e->ns->name);
    info->value_size = e->value_len;
}

bool L1Cache::get(std::string_view key, cachekit_buf *out, EntryInfo *info) {
    uint64_t h = hash_key(key);
    Shard &s = *shards_[shard_index(h)];
    if (admission_) admission_->record(uint32_t(h));  // every read counts, hit or miss
    if (promote_interval_ != 0) {
        // The lock-free hit: nothing shared is written unless the entry is
        // due for promotion. Misses, expired and invalidated entries go on
        // to the locked path, which removes and counts them. The clock is
        // read only when a deadline or a promotion needs it: an entry
        // without TTL in the recent quarter of its shard needs neither.
        EpochGuard guard;
        Entry *e = s.find_unlocked(uint32_t(h), key);
        if (e != nullptr) {
            uint64_t now = e->deadline == kNever ? 0 : this->now();
            if ((e->deadline == kNever || e->deadline > now) && !is_stale(e)) {
                copy_out(e, out, info);
                if (admission_ && e->segment.load(std::memory_order_relaxed) == kProbation) {
                    // TinyLFU: a probation hit moves to protected at once.
                    if (now == 0) now = this->now();
                    std::lock_guard lock(s.mu);
                    if (e->linked && e->segment.load(std::memory_order_relaxed) == kProbation)
                        admission_->on_probation_hit(s, e, now);
                } else if (left_recent_quarter(s, e)) {
                    if (now == 0) now = this->now();
                    if (interval_passed(e, now)) {
                        std::lock_guard lock(s.mu);
                        if (e->linked && promotion_due(s, e, now)) s.promote(e, now);
                    }
                }
                e->ns->hits.add();
                return true;
            }
        }
    }
    uint64_t now = this->now();
    uint64_t retired = 0;
    {
        std::lock_guard lock(s.mu);
        Entry *e = s.find(uint32_t(h), key);
        if (e != nullptr && e->deadline > now && !is_stale(e)) {
            copy_out(e, out, info);
            if (admission_ && e->segment.load(std::memory_order_relaxed) == kProbation)
                admission_->on_probation_hit(s, e, now);
            else if (promotion_due(s, e, now)) s.promote(e, now);
            e->ns->hits.add();
            return true;
        }
        ++s.counters.misses;
        if (e != nullptr) {
            remove_locked(s, e, e->deadline <= now ? Reason::Expired : Reason::Invalidated);
            retired = s.retired_bytes;
        }
    }
    ensure_sweeper();  // misses only (no hit pays for the check), outside the shard lock
    after_write(s, retired);
    return false;
}

PutResult L1Cache::put(std::string_view ns, std::string_view key, std::string_view value,
                       uint64_t ttl_ns, FillTicket ticket) {
    uint64_t deadline = ttl_ns == 0 ? kNever : add_saturating(now(), ttl_ns);
    return put_until(ns, key, value, deadline, ticket);
}

PutResult L1Cache::put_until(std::string_view ns, std::string_view key, std::string_view value,
                             uint64_t deadline, FillTicket ticket) {
    if (key.size() > kMaxKeySize) fail(CACHEKIT_EINVAL, "L1 key is longer than 64 KiB");
    if (ns.size() > kMaxNamespaceSize) fail(CACHEKIT_EINVAL, "L1 namespace is longer than 64 KiB");
    ensure_sweeper();
    uint64_t h = hash_key(key);
    Shard &s = *shards_[shard_index(h)];
    size_t charge = entry_charge(key.size(), value.size());

    if (value.size() > UINT32_MAX || charge > max_entry_bytes()) {
        Entry *reclaimed;
        uint64_t retired;
        {
            std::lock_guard lock(s.mu);
            reclaimed = take_reclaimable_locked(s);
            if (Entry *old = s.find(uint32_t(h), key)) remove_locked(s, old, Reason::Invalidated);
            ++s.counters.rejected_too_large;
            retired = s.retired_bytes;
        }
        free_chain(reclaimed);
        after_write(s, retired);
        return PutResult::TooLarge;
    }

    NsRecord *rec = namespaces_.acquire(ns);
    void *mem = std::malloc(sizeof(Entry) + key.size() + value.size());
    if (mem == nullptr) {
        rec->release();
        throw std::bad_alloc();
    }
    Entry *e = new (mem) Entry;  // owned here until linked (holding the reference to rec)
    e->hash = uint32_t(h);
    e->deadline = deadline;
    e->ns = rec;
    e->key_len = uint32_t(key.size());
    e->value_len = uint32_t(value.size());
    if (!key.empty()) std::memcpy(e->key_data(), key.data(), key.size());
    if (!value.empty()) std::memcpy(e->key_data() + key.size(), value.data(), value.size());

    for (;;) {
        uint64_t now = this->now();
        Entry *reclaimed = nullptr;
        uint64_t retired = 0;
        bool stored = false, dropped = false;
        try {
            std::lock_guard lock(s.mu);
            reclaimed = take_reclaimable_locked(s);
            uint64_t gen = rec->gen.load(std::memory_order_acquire);
            if (ticket != kNoTicket &&
                (all_epoch_.load(std::memory_order_acquire) > ticket || gen > ticket ||
                 s.tomb[tomb_slot(h)] > ticket)) {
                ++s.counters.dropped_fills;
                dropped = true;
            } else {
                s.prepare_insert();  // may throw; nothing changed yet
                // The old copy's bytes pay for the new entry first: replacing
                // a value of the same size touches the global counter not at all.
                // A new copy takes its old copy's place among the segments.
                uint64_t credit = 0;
                Segment seg = kWindow;
                if (Entry *old = s.find(uint32_t(h), key)) {
                    seg = Segment(old->segment.load(std::memory_order_relaxed));
                    s.unlink(old);
                    retire_locked(s, old);
                    credit = old->charge();
                }
                bool ok = true;
                if (charge <= credit) {
                    if (credit > charge) bytes_.fetch_sub(credit - charge, std::memory_order_acq_rel);
                } else {
                    uint64_t need = charge - credit;
                    uint64_t incoming = seg == kWindow ? charge : 0;
                    while (!(ok = try_reserve(need)) && evict_one_locked(s, now, incoming)) {
                    }
                    if (!ok && credit != 0) bytes_.fetch_sub(credit, std::memory_order_acq_rel);
                }
                if (ok) {
                    e->ns_gen = gen;
                    e->inserted_at = now;
                    s.link(e, now, seg);
                    if (admission_) admission_->after_link(s, now);
                    ++s.counters.inserts;
                    stored = true;
                }
            }
            retired = s.retired_bytes;
        } catch (...) {
            free_chain(reclaimed);
            free_unlinked(e);
            throw;
        }
        free_chain(reclaimed);
        after_write(s, retired);
        if (dropped) {
            free_unlinked(e);
            return PutResult::Invalidated;
        }
        if (stored) return PutResult::Stored;
        // This shard is empty and the budget is still full: make room in
        // another shard (one lock at a time, never nested) and try again.
        if (!evict_elsewhere(&s, now)) std::this_thread::yield();
    }
}

void L1Cache::free_unlinked(Entry *e) noexcept {
    e->next = nullptr;
    free_chain(e);
}

bool L1Cache::invalidate(std::string_view key) {
    ensure_sweeper();
    uint64_t h = hash_key(key);
    Shard &s = *shards_[shard_index(h)];
    uint64_t epoch = next_epoch();
    Entry *reclaimed;
    uint64_t retired;
    bool removed = false;
    {
        std::lock_guard lock(s.mu);
        reclaimed = take_reclaimable_locked(s);
        uint64_t &tomb = s.tomb[tomb_slot(h)];
        if (epoch > tomb) tomb = epoch;
        if (Entry *e = s.find(uint32_t(h), key)) {
            remove_locked(s, e, Reason::Invalidated);
            removed = true;
        }
        retired = s.retired_bytes;
    }
    free_chain(reclaimed);
    after_write(s, retired);
    return removed;
}

void L1Cache::invalidate_namespace(std::string_view ns) {
    ensure_sweeper();
    uint64_t epoch = next_epoch();
    namespaces_.invalidate(ns, epoch);
    ns_invalidations_.fetch_add(1, std::memory_order_acq_rel);
}

void L1Cache::clear() {
    ensure_sweeper();
    uint64_t epoch = next_epoch();
    uint64_t cur = all_epoch_.load(std::memory_order_relaxed);
    while (epoch > cur && !all_epoch_.compare_exchange_weak(cur, epoch, std::memory_order_acq_rel)) {
    }
    for (auto &sp : shards_) {
        Shard &s = *sp;
        Entry *reclaimed;
        uint64_t released = 0, retired;
        {
            std::lock_guard lock(s.mu);
            reclaimed = take_reclaimable_locked(s);
            s.counters.invalidations += s.entries();
            Entry *chain = s.detach_all();
            while (chain != nullptr) {
                Entry *nx = chain->next;
                released += chain->charge();
                retire_locked(s, chain);
                chain = nx;
            }
            retired = s.retired_bytes;
        }
        bytes_.fetch_sub(released, std::memory_order_acq_rel);
        free_chain(reclaimed);
        after_write(s, retired);
    }
    // Free what no reader holds now, and with it the namespace records.
    reclaim_all();
}

void L1Cache::reclaim_all() {
    // Advance twice (when no reader holds us back), then free and drop the
    // records nothing refers to any more.
    EpochDomain::global().try_advance();
    EpochDomain::global().try_advance();
    for (auto &sp : shards_) reclaim(*sp);
    namespaces_.collect();
}

size_t L1Cache::sweep() {
    uint64_t ns_count = ns_invalidations_.load(std::memory_order_acquire);
    size_t removed = 0;
    for (auto &sp : shards_) {
        Shard &s = *sp;
        // Expired entries, from the heap top, a batch per lock hold.
        for (;;) {
            uint64_t now = this->now();
            Entry *reclaimed;
            size_t n = 0;
            {
                std::lock_guard lock(s.mu);
                uint64_t t0 = MonotonicClock::read();
                reclaimed = take_reclaimable_locked(s);
                for (Entry *top; n < sweep_batch_ && (top = s.heap_top()) != nullptr && top->deadline <= now; ++n)
                    remove_locked(s, top, Reason::Expired);
                note_hold(MonotonicClock::read() - t0);
            }
            free_chain(reclaimed);
            removed += n;
            if (n < sweep_batch_) break;
        }
        // Entries of invalidated namespaces: a walk over the buckets, a batch
        // per lock hold, only after a namespace invalidation.
        size_t cursor = 0;
        uint64_t rehashes = 0;
        for (bool first = true;; first = false) {
            Entry *reclaimed;
            bool done = false;
            size_t n = 0;
            {
                std::lock_guard lock(s.mu);
                if (s.ns_seen == ns_count) break;
                if (first) rehashes = s.rehashes;
                uint64_t t0 = MonotonicClock::read();
                reclaimed = take_reclaimable_locked(s);
                BucketTable *t = s.table.load(std::memory_order_relaxed);
                size_t examined = 0;
                while (cursor <= t->mask && examined < sweep_batch_) {
                    Entry *e = t->slots()[cursor++].load(std::memory_order_relaxed);
                    while (e != nullptr) {
                        Entry *nx = e->hnext.load(std::memory_order_relaxed);
                        ++examined;
                        if (is_stale(e)) {
                            remove_locked(s, e, Reason::Invalidated);
                            ++n;
                        }
                        e = nx;
                    }
                }
                if (cursor > t->mask) {
                    done = true;
                    // A rehash mid-walk may have hidden entries from us: keep
                    // the pass owed so the next sweep walks again.
                    if (s.rehashes == rehashes) s.ns_seen = ns_count;
                }
                note_hold(MonotonicClock::read() - t0);
            }
            free_chain(reclaimed);
            removed += n;
            if (done) break;
        }
    }
    // What the passes above retired is freed once the readers of its epoch
    // are done.
    reclaim_all();
    return removed;
}

Stats L1Cache::stats() const {
    ensure_sweeper();
    Stats st;
    for (auto &sp : shards_) {
        Shard &s = *sp;
        std::lock_guard lock(s.mu);
        st.misses += s.counters.misses;
        st.inserts += s.counters.inserts;
        st.evictions += s.counters.evictions;
        st.expirations += s.counters.expirations;
        st.rejected_too_large += s.counters.rejected_too_large;
        st.invalidations += s.counters.invalidations;
        st.dropped_fills += s.counters.dropped_fills;
        st.admitted += s.counters.admitted;
        st.rejected_by_admission += s.counters.rejected_by_admission;
        st.entries += s.entries();
        st.retired_bytes += s.retired_bytes;
    }
    st.hits = namespaces_.total_hits();
    st.bytes = bytes_.load(std::memory_order_acquire);
    st.peak_bytes = peak_bytes_.load(std::memory_order_relaxed);
    st.max_bytes = max_bytes_;
    st.namespaces = namespaces_.size();
    st.sweep_max_hold_ns = sweep_max_hold_.load(std::memory_order_relaxed);
    return st;
}

std::vector<DebugEntry> L1Cache::debug_entries() const {
    std::vector<DebugEntry> out;
    for (unsigned i = 0; i < shards_.size(); ++i) {
        Shard &s = *shards_[i];
        std::lock_guard lock(s.mu);
        for (const LruList &l : s.lists)
            for (const Entry *e = l.head; e != nullptr; e = e->next)
                out.push_back({std::string(e->key()), std::string(e->value().substr(0, 64)), e->value_len,
                               e->ns->name, e->deadline, i, Segment(e->segment.load(std::memory_order_relaxed))});
    }
    return out;
}

}  // namespace cachekit::l1

namespace cachekit::l1 {

// Every lock this cache owns, in one order (none of them is ever taken while
// another is held, except by these handlers).
void L1Cache::before_fork() noexcept {
    if (sweeper_) sweeper_->fork_prepare();
    namespaces_.fork_prepare();
    for (auto &s : shards_) s->mu.lock();
}

void L1Cache::after_fork_parent() noexcept {
    for (auto &s : shards_) s->mu.unlock();
    namespaces_.fork_parent();
    if (sweeper_) sweeper_->fork_parent();
}

void L1Cache::after_fork_child() noexcept {
    for (auto &s : shards_) new (&s->mu) std::mutex;
    namespaces_.fork_child();
    if (sweeper_) sweeper_->fork_child();
}

}  // namespace cachekit::l1
