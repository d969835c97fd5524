// Issue 12, items 1, 2, 3 and 6 (white-box: drives cachekit::cache::Cache over
// a latched memory L2, tests/cache/latched_backend.hpp).
//  - Ordering that no slow reader can undo: a read-through fill that lands
//    while an invalidation (key, namespace, clear) waits inside the backend,
//    a read that saw the old value before an invalidation or a put and lands
//    after it, and a loader that started before a put: none leaves the old
//    value in L1. Each interleaving is forced with a latch, not timed.
//  - The stress test: threads reading, putting, loading and invalidating
//    over a jittery backend; once quiet, every L1 entry equals L2's.
//  - No lock across L2: a clear or namespace invalidation held inside the
//    backend does not hold up a put or get of another key.
//  - A get_or_load miss reads L2 once; a hit reads it once.
//  - Refusals delete only what is proven bad: a key rotation with old and
//    new readers and a reader without encryption keeps every entry.
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cache/cache.hpp"
#include "codec/keyring.hpp"
#include "util/buffer.hpp"
#include "latched_backend.hpp"

namespace {

using cachekit::Buffer;
using cachekit::cache::Cache;
using cachekit::cache::CacheConfig;
using cachekit::cache::LoadResult;
using cachekit::cache::Lookup;
using cachekit::cache::Source;
using Op = ct::LatchedBackend::Op;

std::string auto_key(const std::string &ns, unsigned n) { return ct::shaped_key(ns, std::to_string(n)); }

CacheConfig config_over(std::shared_ptr<cachekit::l2::Backend> backend, bool l1 = true) {
    CacheConfig c;
    c.backend = std::move(backend);
    c.l1_enabled = l1;
    c.l1.sweep_interval_ms = 0;
    return c;
}

struct Rig {
    std::shared_ptr<ct::LatchedBackend> backend = std::make_shared<ct::LatchedBackend>();
    std::unique_ptr<Cache> cache;
    std::unique_ptr<Cache> l2_reader;  // L1 off, the same backend: what L2 holds
    explicit Rig(bool l1 = true) {
        cache = std::make_unique<Cache>(config_over(backend, l1));
        l2_reader = std::make_unique<Cache>(config_over(backend, false));
    }
    std::optional<std::string> get(const std::string &ns, const std::string &key, Source *source = nullptr) {
        Buffer out;
        Lookup info;
        if (cache->get(ns, key, out.get(), &info) != CACHEKIT_OK) return std::nullopt;
        if (source) *source = info.source;
        return std::string(out.view());
    }
    std::optional<std::string> in_l1(const std::string &key) {
        Buffer out;
        if (!cache->l1() || !cache->l1()->get(key, out.get())) return std::nullopt;
        return std::string(out.view());
    }
    std::optional<std::string> in_l2(const std::string &ns, const std::string &key) {
        Buffer out;
        if (l2_reader->get(ns, key, out.get(), nullptr) != CACHEKIT_OK) return std::nullopt;
        return std::string(out.view());
    }
    void put(const std::string &ns, const std::string &key, const std::string &value) {
        assert_int_equal(cache->put(ns, key, value, std::nullopt), CACHEKIT_OK);
    }
};

// Runs `body` on a thread; any exception becomes a failed flag (asserted on
// the test's thread), never a throw out of the thread.
class Worker {
public:
    explicit Worker(std::function<void()> body)
        : thread_([this, body = std::move(body)] {
              try {
                  body();
              } catch (...) {
                  failed_ = true;
              }
              done_.open();
          }) {}
    ~Worker() {
        if (thread_.joinable()) thread_.join();
    }
    bool finished_within(std::chrono::milliseconds budget) { return done_.wait_for(budget); }
    void join() {
        thread_.join();
        assert_false(failed_.load());
    }

private:
    std::atomic<bool> failed_{false};
    ct::Gate done_;
    std::thread thread_;
};

const std::string v1 = ct::mp_str("v1, the old value"), v2 = ct::mp_str("v2, the new value");

// The group invalidations hold the backend inside their L2 call while a get
// copies the old L2 value into L1; once they return, nothing of it is left.
enum class Group { Key, Namespace, All };

void fill_during_invalidation(Group group) {
    Rig r;
    const std::string key = auto_key("o", 1);
    r.put("o", key, v1);
    auto latch = r.backend->arm(group == Group::Key ? Op::Del : Op::Clear);
    std::optional<Worker> invalidator;
    invalidator.emplace([&] {
        switch (group) {
        case Group::Key: r.cache->invalidate("o", key); break;
        case Group::Namespace: r.cache->invalidate_namespace("o"); break;
        case Group::All: r.cache->clear(); break;
        }
    });
    struct Release {
        std::shared_ptr<ct::LatchedBackend::Latch> latch;
        ~Release() { latch->release.open(); }
    } release{latch};
    assert_true(latch->reached.wait_for(10s));
    // L1 was emptied first; the L2 entry is not deleted yet: this read copies it to L1.
    Source source = Source::None;
    assert_true(r.get("o", key, &source) == v1);
    assert_true(source == Source::L2);
    latch->release.open();
    invalidator->join();
    assert_false(r.in_l1(key).has_value());
    assert_false(r.get("o", key).has_value());
    assert_false(r.in_l2("o", key).has_value());
}

void test_key_invalidation_beats_a_fill_during_its_delete(void **) { fill_during_invalidation(Group::Key); }
void test_namespace_invalidation_beats_a_fill_during_its_scan(void **) { fill_during_invalidation(Group::Namespace); }
void test_clear_beats_a_fill_during_its_scan(void **) { fill_during_invalidation(Group::All); }

// A read that saw the old value before a write or invalidation lands after it.
enum class Later { Invalidate, Put };

void slow_read_then(Later later) {
    Rig r;
    const std::string key = auto_key("o", 2);
    r.put("o", key, v1);
    r.cache->l1()->invalidate(key);  // as if evicted: the next get reads L2
    auto latch = r.backend->arm(Op::Get);
    std::optional<std::string> read;
    std::optional<Worker> reader;
    reader.emplace([&] { read = r.get("o", key); });
    struct Release {
        std::shared_ptr<ct::LatchedBackend::Latch> latch;
        ~Release() { latch->release.open(); }
    } release{latch};
    assert_true(latch->reached.wait_for(10s));  // it has read v1 and waits
    if (later == Later::Invalidate) assert_int_equal(r.cache->invalidate("o", key), CACHEKIT_OK);
    else r.put("o", key, v2);
    latch->release.open();
    reader->join();
    assert_true(read == v1);  // what it read, returned: but not kept
    if (later == Later::Invalidate) {
        assert_false(r.in_l1(key).has_value());
        assert_false(r.get("o", key).has_value());
    } else {
        assert_true(r.in_l1(key) != v1);
        assert_true(r.get("o", key) == v2);
        assert_true(r.in_l2("o", key) == v2);
    }
}

void test_a_read_before_an_invalidation_does_not_land_after_it(void **) { slow_read_then(Later::Invalidate); }
void test_a_read_before_a_put_does_not_land_after_it(void **) { slow_read_then(Later::Put); }

// A loader that began before a put: its value is returned to its caller, not stored.
void test_a_load_before_a_put_does_not_land_after_it(void **) {
    Rig r;
    const std::string key = auto_key("o", 3);
    ct::Gate running, put_done;
    std::optional<std::string> loaded;
    std::optional<Worker> loading;
    loading.emplace([&] {
        Buffer out;
        Lookup info;
        r.cache->get_or_load("o", key, std::nullopt,
                             [&](LoadResult &res) {
                                 running.open();
                                 put_done.wait();
                                 res.has_value = true;
                                 res.value = v1;
                                 return 0;
                             },
                             out.get(), &info);
        loaded = std::string(out.view());
    });
    struct Open {
        ct::Gate &g;
        ~Open() { g.open(); }
    } open_on_exit{put_done};
    assert_true(running.wait_for(10s));
    r.put("o", key, v2);
    put_done.open();
    loading->join();
    assert_true(loaded == v1);
    assert_true(r.in_l1(key) == v2);
    assert_true(r.in_l2("o", key) == v2);
    assert_true(r.get("o", key) == v2);
}

// Threads over a jittery backend, then quiet: L1 agrees with L2 for every key.
void test_stress_l1_agrees_with_l2(void **) {
    Rig r;
    r.backend->jitter(true);
    const std::vector<std::string> namespaces = {"a", "b"};
    constexpr unsigned kKeys = 6, kThreads = 4, kOps = 1500;
    auto key_of = [&](unsigned i) { return auto_key(namespaces[i % 2], i); };
    std::atomic<bool> failed{false};
    std::vector<std::thread> threads;
    for (unsigned t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            std::minstd_rand rng(t * 7919 + 1);
            try {
                for (unsigned i = 0; i < kOps; ++i) {
                    const unsigned k = rng() % kKeys;
                    const std::string &ns = namespaces[k % 2];
                    const std::string key = key_of(k);
                    const std::string value = ct::mp_str("t" + std::to_string(t) + "-" + std::to_string(i));
                    const unsigned op = rng() % 100;
                    Buffer out;
                    if (op < 40) {
                        r.cache->get(ns, key, out.get(), nullptr);
                    } else if (op < 65) {
                        r.cache->put(ns, key, value, std::nullopt);
                    } else if (op < 80) {
                        r.cache->get_or_load(ns, key, std::nullopt,
                                             [&](LoadResult &res) {
                                                 res.has_value = true;
                                                 res.value = value;
                                                 return 0;
                                             },
                                             out.get(), nullptr);
                    } else if (op < 90) {
                        r.cache->l1()->invalidate(key);  // an eviction: the next get reads L2
                    } else if (op < 97) {
                        r.cache->invalidate(ns, key);
                    } else if (op < 99) {
                        r.cache->invalidate_namespace(ns);
                    } else {
                        r.cache->clear();
                    }
                }
            } catch (...) {
                failed = true;
            }
        });
    }
    for (auto &th : threads) th.join();
    assert_false(failed.load());
    r.backend->jitter(false);
    for (unsigned k = 0; k < kKeys; ++k) {
        const std::string key = key_of(k);
        std::optional<std::string> l1 = r.in_l1(key);
        if (!l1) continue;
        std::optional<std::string> l2 = r.in_l2(namespaces[k % 2], key);
        if (l1 != l2) {
            print_error("key %u: L1 holds a value that L2 does not (L2 %s)\n", k, l2 ? "differs" : "is empty");
            fail();
        }
    }
}

// While `blocked` (run on a worker) is held inside the backend call `op`, a
// put and get of `other` in namespace `ns` still finish, and see the put.
void held_call_does_not_block(Rig &r, Op op, const std::function<void()> &blocked, const char *ns,
                              const std::string &other) {
    auto latch = r.backend->arm(op);
    std::optional<Worker> holder;
    holder.emplace(blocked);
    struct Release {
        std::shared_ptr<ct::LatchedBackend::Latch> latch;
        ~Release() { latch->release.open(); }
    } release{latch};
    assert_true(latch->reached.wait_for(10s));
    std::optional<std::string> got;
    Worker writer([&] {
        r.put(ns, other, v2);
        got = r.get(ns, other);
    });
    const bool finished = writer.finished_within(10s);
    latch->release.open();
    writer.join();
    holder->join();
    assert_true(finished);
    assert_true(got == v2);
}

// A clear or namespace invalidation held inside the backend holds up no put or get of another key.
void blocked_group_does_not_block(Group group) {
    Rig r;
    r.put("o", auto_key("o", 1), v1);
    held_call_does_not_block(
        r, Op::Clear,
        [&] {
            if (group == Group::Namespace) r.cache->invalidate_namespace("o");
            else r.cache->clear();
        },
        "p", auto_key("p", 9));
}

void test_a_blocked_namespace_invalidation_lets_other_keys_through(void **) {
    blocked_group_does_not_block(Group::Namespace);
}
void test_a_blocked_clear_lets_other_keys_through(void **) { blocked_group_does_not_block(Group::All); }

// A key invalidation held inside its L2 delete holds up no put or get of
// another key, not even one that shares its stripe mutex.
void test_a_blocked_key_invalidation_lets_its_stripe_through(void **) {
    Rig r;
    const std::string key = auto_key("o", 1);
    const uint64_t stripe = cachekit::l1::L1Cache::hash_key(key) % 256;
    std::string neighbour;
    for (unsigned n = 2; neighbour.empty(); ++n)
        if (cachekit::l1::L1Cache::hash_key(auto_key("o", n)) % 256 == stripe) neighbour = auto_key("o", n);
    r.put("o", key, v1);
    held_call_does_not_block(r, Op::Del, [&] { r.cache->invalidate("o", key); }, "o", neighbour);
}

// One L2 read per get_or_load miss and per hit.
void reads_per_call(bool l1) {
    Rig r(l1);
    const std::string key = auto_key("o", 4);
    Buffer out;
    Lookup info;
    const int before = r.backend->gets();
    assert_int_equal(r.cache->get_or_load("o", key, std::nullopt,
                                          [&](LoadResult &res) {
                                              res.has_value = true;
                                              res.value = v1;
                                              return 0;
                                          },
                                          out.get(), &info),
                     CACHEKIT_OK);
    assert_true(info.source == Source::Loaded);
    assert_int_equal(r.backend->gets() - before, 1);
    if (l1) r.cache->l1()->invalidate(key);
    const int hit_before = r.backend->gets();
    assert_true(r.get("o", key) == v1);
    assert_int_equal(r.backend->gets() - hit_before, 1);
}

void test_a_miss_reads_l2_once(void **) { reads_per_call(true); }
void test_a_miss_reads_l2_once_without_l1(void **) { reads_per_call(false); }

// A key rotation: entries written under the new key (old key kept as a
// previous one) and under the old key; readers with the new key, with only
// the old key, and without encryption. The ones that cannot read an entry
// miss (counted as wrong_key), and every entry stays in L2.
void test_a_rotation_keeps_every_entry(void **) {
    const std::string old_hex(64, 'a'), new_hex(64, 'b');
    auto backend = std::make_shared<ct::LatchedBackend>();
    auto encrypted = [&](const std::string &current, const std::string &previous) {
        CacheConfig c = config_over(backend, false);
        c.keyring = cachekit::crypto::Keyring::from_hex(current, previous);
        return std::make_unique<Cache>(c);
    };
    auto new_cache = encrypted(new_hex, old_hex);
    auto old_cache = encrypted(old_hex, "");
    auto plain_cache = std::make_unique<Cache>(config_over(backend, false));
    const std::string by_new = auto_key("r", 1), by_old = auto_key("r", 2);
    assert_int_equal(new_cache->put("r", by_new, v1, std::nullopt), CACHEKIT_OK);
    assert_int_equal(old_cache->put("r", by_old, v2, std::nullopt), CACHEKIT_OK);
    auto stored = [&](const std::string &key) { return backend->inner().exists(key, cachekit::l2::Deadline::after(5s)); };
    for (int round = 0; round < 2; ++round) {
        for (const std::string &key : {by_new, by_old}) {
            Buffer out;
            old_cache->get("r", key, out.get(), nullptr);
            plain_cache->get("r", key, out.get(), nullptr);
            assert_true(stored(key));
        }
    }
    // The new reader opens both; the old one only its own.
    Buffer out;
    assert_int_equal(new_cache->get("r", by_new, out.get(), nullptr), CACHEKIT_OK);
    assert_int_equal(new_cache->get("r", by_old, out.get(), nullptr), CACHEKIT_OK);
    assert_int_equal(old_cache->get("r", by_old, out.get(), nullptr), CACHEKIT_OK);
    assert_int_equal(old_cache->get("r", by_new, out.get(), nullptr), CACHEKIT_ENOTFOUND);
    auto wrong_keys = [](Cache &c) { return const_cast<cachekit::metrics::CacheMetrics &>(c.metrics()).of("r").wrong_key.total(); };
    assert_true(wrong_keys(*old_cache) >= 2);
    assert_true(wrong_keys(*plain_cache) >= 4);
    assert_true(stored(by_new) && stored(by_old));
}

// A proven-bad entry is still deleted.
void test_a_corrupt_entry_is_deleted(void **) {
    auto backend = std::make_shared<ct::LatchedBackend>();
    Cache cache(config_over(backend, false));
    const std::string key = auto_key("r", 3);
    backend->inner().set(key, "CK\x03garbage", std::nullopt, cachekit::l2::Deadline::after(5s));
    Buffer out;
    assert_int_equal(cache.get("r", key, out.get(), nullptr), CACHEKIT_ENOTFOUND);
    assert_false(backend->inner().exists(key, cachekit::l2::Deadline::after(5s)));
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_invalidation_beats_a_fill_during_its_delete),
        cmocka_unit_test(test_namespace_invalidation_beats_a_fill_during_its_scan),
        cmocka_unit_test(test_clear_beats_a_fill_during_its_scan),
        cmocka_unit_test(test_a_read_before_an_invalidation_does_not_land_after_it),
        cmocka_unit_test(test_a_read_before_a_put_does_not_land_after_it),
        cmocka_unit_test(test_a_load_before_a_put_does_not_land_after_it),
        cmocka_unit_test(test_stress_l1_agrees_with_l2),
        cmocka_unit_test(test_a_blocked_namespace_invalidation_lets_other_keys_through),
        cmocka_unit_test(test_a_blocked_clear_lets_other_keys_through),
        cmocka_unit_test(test_a_blocked_key_invalidation_lets_its_stripe_through),
        cmocka_unit_test(test_a_miss_reads_l2_once),
        cmocka_unit_test(test_a_miss_reads_l2_once_without_l1),
        cmocka_unit_test(test_a_rotation_keeps_every_entry),
        cmocka_unit_test(test_a_corrupt_entry_is_deleted),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
