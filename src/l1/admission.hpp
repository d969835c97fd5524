// W-TinyLFU admission for the L1 (Options::admission = Admission::TinyLfu),
// after the design of Einziger, Friedman and Manes ("TinyLFU: A Highly
// Efficient Cache Admission Policy"). Each shard's entries live in three LRU
// lists (Segment): a small window (1% of the shard's share of the budget)
// that every new entry enters, and a main region split into probation (20%)
// and protected (80%). A hit on a probation entry moves it to protected;
// protected's overflow goes back to probation's head.
//
// The contest: when a put needs room and the window (with the incoming
// entry) is over its share, the window's LRU entry (the candidate) is
// weighed against the main region's LRU entry (the victim, probation's tail,
// else protected's) by their estimated frequencies (frequency_sketch.hpp).
// The candidate moves into probation and the victim is evicted only if the
// candidate's estimate is higher; otherwise the candidate is evicted. Each
// eviction a put needs is one contest, so an entry that needs the room of
// several is weighed against each victim in turn (with the window's next
// candidate once the first has moved in). While a shard's main region is
// below its share, window overflow moves in without a contest.
//
// Every read of the cache (hit or miss, locked or not) counts in the
// sketch; a put does not. All functions but record() run under the shard
// lock.
#pragma once

#include <cstdint>

#include "l1/frequency_sketch.hpp"
#include "l1/shard.hpp"

namespace cachekit::l1 {

class Admission {
public:
    // The budget and shard count of the cache; `charge_guess` is the typical
    // entry charge used to size the sketch (one counter a row per entry).
    Admission(uint64_t max_bytes, unsigned shards, uint64_t charge_guess = kChargeGuess);

    static constexpr uint64_t kChargeGuess = 256;

    void record(uint32_t hash) noexcept { sketch_.increment(hash); }
    unsigned estimate(uint32_t hash) const noexcept { return sketch_.estimate(hash); }

    // After a new entry was linked into the window: its overflow moves into
    // a main region that still has room; protected's overflow to probation.
    void after_link(Shard &s, uint64_t now) noexcept;
    // A hit on a probation entry: it moves to protected.
    void on_probation_hit(Shard &s, Entry *e, uint64_t now) noexcept;
    // The entry to evict so that `incoming` bytes can join the window, after
    // the contest above (which may move the candidate into probation and
    // counts admitted / rejected_by_admission); nullptr when the shard is
    // empty. `stale` tells an entry of an invalidated namespace, which goes
    // first and without a contest.
    template <class Stale>
    Entry *choose_victim(Shard &s, uint64_t incoming, uint64_t now, Stale stale) noexcept {
        Entry *cand = s.lists[kWindow].bytes + incoming > window_share_ ? s.lists[kWindow].tail : nullptr;
        Entry *victim = s.lists[kProbation].tail ? s.lists[kProbation].tail : s.lists[kProtected].tail;
        if (victim == nullptr) return s.lists[kWindow].tail;
        if (cand == nullptr || stale(victim)) return victim;
        if (stale(cand)) return cand;
        return contest(s, cand, victim, now);
    }

    const FrequencySketch &sketch() const noexcept { return sketch_; }
    uint64_t window_share() const noexcept { return window_share_; }
    uint64_t main_share() const noexcept { return main_share_; }
    uint64_t protected_share() const noexcept { return protected_share_; }

private:
    Entry *contest(Shard &s, Entry *cand, Entry *victim, uint64_t now) noexcept;
    void demote_protected_overflow(Shard &s, uint64_t now) noexcept;

    uint64_t window_share_;     // per shard
    uint64_t main_share_;       // per shard: probation + protected
    uint64_t protected_share_;  // per shard
    FrequencySketch sketch_;
};

}  // namespace cachekit::l1
