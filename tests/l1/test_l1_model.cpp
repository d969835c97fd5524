// Randomized model test of the L1 engine: thousands of random operations
// (put, get, invalidate key / namespace / all, advance the clock, sweep)
// against a simple reference model, with fixed seeds. With one shard the model
// is exact: contents, LRU order, deadlines, counters and byte accounting are
// compared after every operation. With several shards a weaker model checks
// that every hit returns the latest live value and that the budget holds.
#include <cinttypes>
#include <cstdio>
#include <list>
#include <map>
#include <random>
#include <string>

#include "l1/l1_cache.hpp"
#include "util/buffer.hpp"

#include "cmocka_cpp.hpp"  // last: it defines a fail() macro

using namespace cachekit;
using namespace cachekit::l1;

namespace {

constexpr uint64_t kTick = 1000000;  // 1 ms of the manual clock
constexpr uint64_t kBudget = uint64_t(1) << 20;

struct Rng {
    explicit Rng(uint64_t seed) : eng(seed) {}
    uint64_t below(uint64_t n) { return eng() % n; }
    std::mt19937_64 eng;
};

struct MEntry {
    std::string key, value, ns;
    uint64_t deadline, promoted_at, ns_gen;
    size_t charge;
    uint32_t lru_seq;  // the model's move-to-head count at this entry's last move
};

// The exact reference: one LRU list, linear scans, no cleverness.
struct Model {
    uint64_t promote_interval;
    std::list<MEntry> lru;  // front: most recent
    std::map<std::string, std::list<MEntry>::iterator> index;
    std::map<std::string, uint64_t> ns_gen;
    uint64_t bytes = 0;
    uint32_t lru_seq = 0;  // moves to the LRU head so far
    Stats st;

    enum Why { Replaced, Evicted, Expired, Invalidated };

    bool stale(const MEntry &e) { return e.ns_gen != ns_gen[e.ns]; }

    void remove(std::list<MEntry>::iterator it, Why why) {
        switch (why) {
        case Replaced: break;
        case Evicted: ++st.evictions; break;
        case Expired: ++st.expirations; break;
        case Invalidated: ++st.invalidations; break;
        }
        bytes -= it->charge;
        index.erase(it->key);
        lru.erase(it);
    }

    bool evict_one(uint64_t now) {
        auto best = lru.end();
        for (auto it = lru.begin(); it != lru.end(); ++it) {
            if (it->deadline == kNever) continue;
            if (best == lru.end() || it->deadline < best->deadline) best = it;
        }
        if (best != lru.end() && best->deadline <= now) {
            remove(best, Expired);
            return true;
        }
        if (lru.empty()) return false;
        auto victim = std::prev(lru.end());
        remove(victim, stale(*victim) ? Invalidated : Evicted);
        return true;
    }

    PutResult put(const std::string &ns, const std::string &key, const std::string &value,
                  uint64_t deadline, uint64_t now) {
        size_t charge = entry_charge(key.size(), value.size());
        auto old = index.find(key);
        if (charge > kBudget / 8) {
            if (old != index.end()) remove(old->second, Invalidated);
            ++st.rejected_too_large;
            return PutResult::TooLarge;
        }
        if (old != index.end()) remove(old->second, Replaced);
        while (bytes + charge > kBudget) assert_true(evict_one(now));
        lru.push_front(MEntry{key, value, ns, deadline, now, ns_gen[ns], charge, ++lru_seq});
        index[key] = lru.begin();
        bytes += charge;
        ++st.inserts;
        return PutResult::Stored;
    }

    bool get(const std::string &key, uint64_t now, std::string *value) {
        auto f = index.find(key);
        if (f == index.end()) {
            ++st.misses;
            return false;
        }
        auto it = f->second;
        if (it->deadline <= now) {
            remove(it, Expired);
            ++st.misses;
            return false;
        }
        if (stale(*it)) {
            remove(it, Invalidated);
            ++st.misses;
            return false;
        }
        *value = it->value;
        // Promotion as the engine defers it: the interval has passed and the
        // entry is no longer among the most recent quarter of the list.
        bool due = promote_interval == 0 ||
                   (now >= it->promoted_at && now - it->promoted_at >= promote_interval &&
                    uint32_t(lru_seq - it->lru_seq) > lru.size() / 4);
        if (due) {
            it->promoted_at = now;
            it->lru_seq = ++lru_seq;
            lru.splice(lru.begin(), lru, it);
        }
        ++st.hits;
        return true;
    }

    void invalidate(const std::string &key) {
        auto f = index.find(key);
        if (f != index.end()) remove(f->second, Invalidated);
    }

    void clear() {
        while (!lru.empty()) remove(lru.begin(), Invalidated);
    }

    void sweep(uint64_t now) {
        for (auto it = lru.begin(); it != lru.end();) {
            auto nx = std::next(it);
            if (it->deadline <= now) remove(it, Expired);
            it = nx;
        }
        for (auto it = lru.begin(); it != lru.end();) {
            auto nx = std::next(it);
            if (stale(*it)) remove(it, Invalidated);
            it = nx;
        }
    }
};

std::string make_key(uint64_t i) {
    // 1..40 bytes, some sharing prefixes, one with a NUL inside.
    std::string k = "k" + std::to_string(i);
    k.append(i % 37, char('a' + i % 26));
    if (i % 50 == 7) k.push_back('\0');
    return k;
}

std::string make_value(Rng &rng, uint64_t op) {
    uint64_t r = rng.below(100);
    size_t len;
    if (r < 3) len = kBudget / 8 + rng.below(4096);  // too large
    else if (r < 10) len = 0;
    else if (r < 40) len = rng.below(300);
    else len = rng.below(60000);
    std::string v = "v" + std::to_string(op) + ":";
    v.resize(len, char('A' + op % 26));
    if (len < v.size()) v.resize(len);
    return v;
}

const char *const kNamespaces[] = {"", "alpha", "beta", "gamma"};

void compare_exact(L1Cache &cache, Model &m, uint64_t op) {
    std::vector<DebugEntry> got = cache.debug_entries();
    if (got.size() != m.lru.size())
        fail_msg("op %" PRIu64 ": %zu entries, model has %zu", op, got.size(), m.lru.size());
    size_t i = 0;
    for (const MEntry &e : m.lru) {
        const DebugEntry &d = got[i++];
        if (d.key != e.key || d.value_size != e.value.size() || d.value_head != std::string_view(e.value).substr(0, 64) ||
            d.ns != e.ns || d.deadline_ns != e.deadline)
            fail_msg("op %" PRIu64 ": LRU position %zu holds %s, model has %s", op, i - 1,
                     d.key.c_str(), e.key.c_str());
    }
    Stats s = cache.stats();
    assert_int_equal(s.entries, m.lru.size());
    assert_int_equal(s.bytes, m.bytes);
    assert_true(s.bytes <= kBudget);
    assert_true(s.peak_bytes <= kBudget);
    assert_int_equal(s.hits, m.st.hits);
    assert_int_equal(s.misses, m.st.misses);
    assert_int_equal(s.inserts, m.st.inserts);
    assert_int_equal(s.evictions, m.st.evictions);
    assert_int_equal(s.expirations, m.st.expirations);
    assert_int_equal(s.rejected_too_large, m.st.rejected_too_large);
    assert_int_equal(s.invalidations, m.st.invalidations);
}

void run_exact(uint64_t seed, uint64_t promote_ticks, int ops) {
    ManualClock clock;
    Options o;
    o.max_bytes = kBudget;
    o.shards = 1;
    o.sweep_interval_ms = 0;
    o.promote_interval_ns = promote_ticks * kTick;
    o.sweep_batch = 7;  // small, so sweeps take several lock holds
    o.clock = &clock;
    L1Cache cache(o);
    Model m;
    m.promote_interval = o.promote_interval_ns;
    Rng rng(seed);
    Buffer out;
    uint64_t hits = 0, evictions_seen = 0;
    for (int op = 0; op < ops; ++op) {
        uint64_t now = clock.now_ns();
        uint64_t r = rng.below(1000);
        std::string key = make_key(rng.below(250));
        if (r < 420) {
            std::string want;
            bool mh = m.get(key, now, &want);
            bool ch = cache.get(key, out.get());
            if (mh != ch) fail_msg("seed %" PRIu64 " op %d: get hit %d, model %d", seed, op, ch, mh);
            if (ch) {
                assert_true(out.view() == want);
                ++hits;
            }
        } else if (r < 750) {
            std::string ns = kNamespaces[rng.below(4)];
            std::string value = make_value(rng, uint64_t(op));
            // Deadlines are unique (the op number is below one tick), so the
            // expiry order has no ties for the model to guess.
            uint64_t deadline = rng.below(10) < 4 ? kNever : now + (1 + rng.below(1000)) * kTick + uint64_t(op);
            PutResult mr = m.put(ns, key, value, deadline, now);
            PutResult cr = cache.put_until(ns, key, value, deadline);
            assert_int_equal(int(cr), int(mr));
        } else if (r < 790) {
            m.invalidate(key);
            cache.invalidate(key);
        } else if (r < 797) {
            std::string ns = kNamespaces[rng.below(4)];
            ++m.ns_gen[ns];
            cache.invalidate_namespace(ns);
        } else if (r < 798) {
            m.clear();
            cache.clear();
        } else if (r < 960) {
            clock.advance(rng.below(15) * kTick);
        } else {
            m.sweep(now);
            cache.sweep();
        }
        compare_exact(cache, m, uint64_t(op));
        evictions_seen = m.st.evictions;
    }
    // The run must have exercised what it claims to.
    Stats s = cache.stats();
    std::printf("seed %" PRIu64 " promote %" PRIu64 ": hits %" PRIu64 " misses %" PRIu64
                " evictions %" PRIu64 " expirations %" PRIu64 " rejected %" PRIu64
                " invalidations %" PRIu64 "\n",
                seed, promote_ticks, s.hits, s.misses, s.evictions, s.expirations,
                s.rejected_too_large, s.invalidations);
    assert_true(hits > 100);
    assert_true(evictions_seen > 50);
    assert_true(s.expirations > 50);
    assert_true(s.rejected_too_large > 20);
}

void test_exact_lru(void **) {
    for (uint64_t seed : {1u, 2u, 3u, 42u, 2024u}) run_exact(seed, 0, 5000);
}

void test_exact_deferred_promotion(void **) {
    for (uint64_t seed : {7u, 8u, 9u}) run_exact(seed, 5, 5000);
}

// Several shards: eviction order is per shard, so compare only what must hold
// for any policy: a hit returns the latest live value, never anything else.
void test_sharded_weak_model(void **) {
    for (uint64_t seed : {11u, 12u, 13u}) {
        ManualClock clock;
        Options o;
        o.max_bytes = kBudget;
        o.shards = 8;
        o.sweep_interval_ms = 0;
        o.clock = &clock;
        L1Cache cache(o);
        struct Live { std::string value; uint64_t deadline; std::string ns; uint64_t gen; };
        std::map<std::string, Live> live;
        std::map<std::string, uint64_t> gens;
        Rng rng(seed);
        Buffer out;
        uint64_t hits = 0;
        for (int op = 0; op < 6000; ++op) {
            uint64_t now = clock.now_ns();
            uint64_t r = rng.below(1000);
            std::string key = make_key(rng.below(400));
            if (r < 450) {
                bool hit = cache.get(key, out.get());
                auto it = live.find(key);
                bool may = it != live.end() && it->second.deadline > now && gens[it->second.ns] == it->second.gen;
                if (hit) {
                    assert_true(may);
                    assert_true(out.view() == it->second.value);
                    ++hits;
                }
            } else if (r < 800) {
                std::string ns = kNamespaces[rng.below(4)];
                std::string value = make_value(rng, uint64_t(op));
                uint64_t deadline = rng.below(10) < 3 ? kNever : now + (1 + rng.below(100)) * kTick;
                if (cache.put_until(ns, key, value, deadline) == PutResult::Stored)
                    live[key] = Live{value, deadline, ns, gens[ns]};
                else
                    live.erase(key);
            } else if (r < 850) {
                cache.invalidate(key);
                live.erase(key);
            } else if (r < 860) {
                std::string ns = kNamespaces[rng.below(4)];
                ++gens[ns];
                cache.invalidate_namespace(ns);
            } else if (r < 862) {
                cache.clear();
                live.clear();
            } else if (r < 970) {
                clock.advance(rng.below(15) * kTick);
            } else {
                cache.sweep();
            }
            Stats s = cache.stats();
            assert_true(s.bytes <= kBudget);
            assert_true(s.peak_bytes <= kBudget);
            uint64_t sum = 0;
            std::vector<DebugEntry> all = cache.debug_entries();
            for (const DebugEntry &d : all) {
                sum += entry_charge(d.key.size(), d.value_size);
                assert_int_equal(d.shard, cache.shard_of(d.key));
            }
            assert_int_equal(sum, s.bytes);
            assert_int_equal(all.size(), s.entries);
        }
        assert_true(hits > 100);
    }
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_lru),
        cmocka_unit_test(test_exact_deferred_promotion),
        cmocka_unit_test(test_sharded_weak_model),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
