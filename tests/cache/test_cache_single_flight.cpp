// Issue 5, item 1: single-flight through the public C API, over the memory
// backend and a real (private, loopback) Redis.
//  - 64 threads asking for one missing key run the loader exactly once and
//    all get the same bytes (one LOADED, the others WAITED or an L1/L2 hit);
//  - a loader error reaches every waiter (CACHEKIT_EUSER + its message) and
//    nothing is cached;
//  - a loader asking for its own key gets CACHEKIT_EDEADLOCK, the outer call
//    still completes;
//  - a waiter bounded by load_timeout_ms gets CACHEKIT_ETIMEOUT.
#include <memory>

#include "../redis/redis_server.hpp"
#include "cache_test_util.hpp"

namespace {

using cachekit::testing::RedisServer;
using ct::Buf;

std::unique_ptr<RedisServer> g_redis;  // started in main when redis-server is installed

struct Loader {
    std::atomic<int> calls{0};
    int sleep_ms = 0;
    std::string value;
    std::string error;  // non-empty: fail with this message
    static int run(cachekit_load *load, void *payload) {
        auto *self = static_cast<Loader *>(payload);
        self->calls.fetch_add(1);
        if (self->sleep_ms) std::this_thread::sleep_for(std::chrono::milliseconds(self->sleep_ms));
        if (!self->error.empty()) {
            cachekit_load_set_error(load, self->error.c_str());
            return 1;
        }
        return cachekit_load_set_value(load, self->value.data(), self->value.size());
    }
};

ct::CacheHandle open_cache(const char *url, uint32_t load_timeout_ms = 0) {
    cachekit_cache_options o = ct::default_options();
    o.backend_url = url;
    o.load_timeout_ms = load_timeout_ms;
    return ct::new_cache(&o);
}

struct Outcome {
    int rc = 0;
    std::string bytes;
    std::string message;
    int source = -1;
};

// `threads` callers released together call get_or_load(key).
std::vector<Outcome> herd(cachekit_cache *c, const char *ns, const std::string &key, Loader &loader, int threads) {
    std::vector<Outcome> out(static_cast<size_t>(threads));
    std::atomic<int> ready{0};
    ct::Gate go;
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            Buf buf;
            cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
            ready.fetch_add(1);
            go.wait();
            Outcome &o = out[size_t(t)];
            o.rc = cachekit_cache_get_or_load(c, buf.get(), &info, ns, key.data(), key.size(),
                                              CACHEKIT_TTL_DEFAULT, &Loader::run, &loader);
            o.bytes = buf.str();
            o.source = info.source;
            if (o.rc != CACHEKIT_OK) o.message = cachekit_error_last_message();
        });
    }
    while (ready.load() < threads) std::this_thread::yield();
    go.open();
    for (auto &th : pool) th.join();
    return out;
}

void check_compute_once(const char *url) {
    ct::CacheHandle cache = open_cache(url);
    cachekit_cache *c = cache.get();
    Loader loader;
    loader.sleep_ms = 50;
    loader.value = ct::mp_str("computed exactly once");
    const std::string key = "ns:sf:func:m.f:args:once";
    auto outcomes = herd(c, "sf", key, loader, 64);

    assert_int_equal(loader.calls.load(), 1);
    int loaded = 0, waited = 0, hits = 0;
    for (const Outcome &o : outcomes) {
        if (o.rc != CACHEKIT_OK) fail_msg("a caller failed: %d %s", o.rc, o.message.c_str());
        assert_true(o.bytes == loader.value);
        switch (o.source) {
        case CACHEKIT_SOURCE_LOADED: ++loaded; break;
        case CACHEKIT_SOURCE_WAITED: ++waited; break;
        case CACHEKIT_SOURCE_L1:
        case CACHEKIT_SOURCE_L2: ++hits; break;
        default: fail_msg("unexpected source %s", ct::source_name(o.source));
        }
    }
    assert_int_equal(loaded, 1);
    assert_int_equal(waited + hits, 63);
    cachekit_cache_stats s = ct::stats_of(c, "sf");
    assert_int_equal(s.loads, 1);
    assert_int_equal(s.load_errors, 0);
    assert_int_equal(s.waits, uint64_t(waited));
    assert_int_equal(s.stores, 1);

    // It is cached now: a plain get is a hit with the same bytes.
    Buf buf;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    CT_OK(cachekit_cache_get(c, buf.get(), &info, "sf", key.data(), key.size()));
    assert_true(buf.str() == loader.value);
    assert_int_equal(info.source, CACHEKIT_SOURCE_L1);
    cache.reset();

    // A second cache over the same L2 (none for memory://, which is private to
    // its handle) finds it in L2.
    if (std::strncmp(url, "redis://", 8) == 0) {
        ct::CacheHandle c2 = open_cache(url);
        cachekit_lookup info2 = CACHEKIT_LOOKUP_INIT;
        CT_OK(cachekit_cache_get(c2.get(), buf.get(), &info2, "sf", key.data(), key.size()));
        assert_true(buf.str() == loader.value);
        assert_int_equal(info2.source, CACHEKIT_SOURCE_L2);
    }
}

void check_error_reaches_every_waiter(const char *url) {
    ct::CacheHandle cache = open_cache(url);
    cachekit_cache *c = cache.get();
    Loader bad;
    bad.sleep_ms = 100;
    bad.error = "loader exploded: E42";
    const std::string key = "ns:sf:func:m.f:args:error";
    auto outcomes = herd(c, "sf", key, bad, 16);
    assert_true(bad.calls.load() >= 1);
    for (const Outcome &o : outcomes) {
        assert_int_equal(o.rc, CACHEKIT_EUSER);
        if (o.message != bad.error) fail_msg("waiter message \"%s\"", o.message.c_str());
    }
    cachekit_cache_stats s = ct::stats_of(c, "sf");
    assert_int_equal(s.load_errors, uint64_t(bad.calls.load()));
    assert_int_equal(s.loads, 0);
    assert_int_equal(s.stores, 0);

    // Nothing was cached: a get misses and the next get_or_load loads again.
    Buf buf;
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_get(c, buf.get(), nullptr, "sf", key.data(), key.size()));
    Loader good;
    good.value = ct::mp_str("second try");
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    CT_OK(cachekit_cache_get_or_load(c, buf.get(), &info, "sf", key.data(), key.size(), CACHEKIT_TTL_DEFAULT,
                                     &Loader::run, &good));
    assert_int_equal(good.calls.load(), 1);
    assert_int_equal(info.source, CACHEKIT_SOURCE_LOADED);
    assert_true(buf.str() == good.value);
}

void test_compute_once_memory(void **) { check_compute_once("memory://"); }
void test_error_to_every_waiter_memory(void **) { check_error_reaches_every_waiter("memory://"); }

void test_compute_once_redis(void **) {
    if (!g_redis) skip();
    check_compute_once(g_redis->url().c_str());
}

void test_error_to_every_waiter_redis(void **) {
    if (!g_redis) skip();
    check_error_reaches_every_waiter(g_redis->url().c_str());
}

// A loader that fails without a message, or returns 0 without a value.
void test_loader_without_value_or_message(void **) {
    ct::CacheHandle cache = open_cache("memory://");
    cachekit_cache *c = cache.get();
    Buf buf;
    const char key[] = "ns:sf:k:novalue";
    auto no_value = [](cachekit_load *, void *) { return 0; };
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EUSER, cachekit_cache_get_or_load(c, buf.get(), nullptr, "sf", key, sizeof key - 1,
                                                                     CACHEKIT_TTL_DEFAULT, no_value, nullptr));
    auto silent_failure = [](cachekit_load *, void *) { return -1; };
    CT_FAILS_WITH_MESSAGE(CACHEKIT_EUSER, cachekit_cache_get_or_load(c, buf.get(), nullptr, "sf", key, sizeof key - 1,
                                                                     CACHEKIT_TTL_DEFAULT, silent_failure, nullptr));
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_get(c, buf.get(), nullptr, "sf", key, sizeof key - 1));
}

struct Reentrant {
    cachekit_cache *cache;
    std::string key;
    std::string other_key;
    int inner_rc = 1;
    int other_rc = 1;
    int inner_source = -1;
    std::string inner_message;
    std::string value = ct::mp_str("outer value");
    static int run(cachekit_load *load, void *payload) {
        auto *self = static_cast<Reentrant *>(payload);
        Buf inner;
        Loader never;
        never.value = ct::mp_str("must not run");
        self->inner_rc = cachekit_cache_get_or_load(self->cache, inner.get(), nullptr, "sf", self->key.data(),
                                                    self->key.size(), CACHEKIT_TTL_DEFAULT, &Loader::run, &never);
        if (self->inner_rc != CACHEKIT_OK) self->inner_message = cachekit_error_last_message();
        if (never.calls.load() != 0) self->inner_rc = 12345;
        // Loading another key from inside a loader is fine.
        Loader other;
        other.value = ct::mp_str("nested");
        cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
        self->other_rc = cachekit_cache_get_or_load(self->cache, inner.get(), &info, "sf", self->other_key.data(),
                                                    self->other_key.size(), CACHEKIT_TTL_DEFAULT, &Loader::run, &other);
        self->inner_source = info.source;
        return cachekit_load_set_value(load, self->value.data(), self->value.size());
    }
};

void test_loader_asking_for_its_own_key_deadlocks(void **) {
    ct::CacheHandle cache = open_cache("memory://");
    cachekit_cache *c = cache.get();
    Reentrant r;
    r.cache = c;
    r.key = "ns:sf:k:self";
    r.other_key = "ns:sf:k:other";
    Buf buf;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    CT_OK(cachekit_cache_get_or_load(c, buf.get(), &info, "sf", r.key.data(), r.key.size(), CACHEKIT_TTL_DEFAULT,
                                     &Reentrant::run, &r));
    assert_int_equal(r.inner_rc, CACHEKIT_EDEADLOCK);
    assert_true(!r.inner_message.empty());
    assert_int_equal(r.other_rc, CACHEKIT_OK);
    assert_int_equal(r.inner_source, CACHEKIT_SOURCE_LOADED);
    assert_int_equal(info.source, CACHEKIT_SOURCE_LOADED);
    assert_true(buf.str() == r.value);
    // Both values were stored; the flight is over, so the key can be read and loaded normally.
    CT_OK(cachekit_cache_get(c, buf.get(), nullptr, "sf", r.key.data(), r.key.size()));
    assert_true(buf.str() == r.value);
    CT_OK(cachekit_cache_get(c, buf.get(), nullptr, "sf", r.other_key.data(), r.other_key.size()));
    assert_true(buf.str() == ct::mp_str("nested"));
    CT_OK(cachekit_cache_invalidate(c, "sf", r.key.data(), r.key.size()));
    Loader again;
    again.value = ct::mp_str("again");
    CT_OK(cachekit_cache_get_or_load(c, buf.get(), &info, "sf", r.key.data(), r.key.size(), CACHEKIT_TTL_DEFAULT,
                                     &Loader::run, &again));
    assert_int_equal(again.calls.load(), 1);
}

struct Blocking {
    ct::Gate started, release;
    std::string value = ct::mp_str("slow leader");
    static int run(cachekit_load *load, void *payload) {
        auto *self = static_cast<Blocking *>(payload);
        self->started.open();
        self->release.wait();
        return cachekit_load_set_value(load, self->value.data(), self->value.size());
    }
};

void test_waiter_times_out(void **) {
    ct::CacheHandle cache = open_cache("memory://", 100);
    cachekit_cache *c = cache.get();
    const std::string key = "ns:sf:k:timeout";
    Blocking slow;
    Outcome leader;
    std::thread t([&] {
        Buf buf;
        cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
        leader.rc = cachekit_cache_get_or_load(c, buf.get(), &info, "sf", key.data(), key.size(), CACHEKIT_TTL_DEFAULT,
                                               &Blocking::run, &slow);
        leader.bytes = buf.str();
        leader.source = info.source;
    });
    ct::JoinOnExit join_leader(t, [&] { slow.release.open(); });
    slow.started.wait();  // the leader's loader runs: the flight exists
    Loader mine;
    mine.value = ct::mp_str("waiter's own");
    Buf buf;
    CT_FAILS_WITH_MESSAGE(CACHEKIT_ETIMEOUT, cachekit_cache_get_or_load(c, buf.get(), nullptr, "sf", key.data(), key.size(),
                                                                        CACHEKIT_TTL_DEFAULT, &Loader::run, &mine));
    assert_int_equal(mine.calls.load(), 0);
    slow.release.open();
    t.join();
    assert_int_equal(leader.rc, CACHEKIT_OK);
    assert_int_equal(leader.source, CACHEKIT_SOURCE_LOADED);
    assert_true(leader.bytes == slow.value);
    CT_OK(cachekit_cache_get(c, buf.get(), nullptr, "sf", key.data(), key.size()));
    assert_true(buf.str() == slow.value);
}

}  // namespace

int main() {
    if (!RedisServer::find_binary().empty()) g_redis = std::make_unique<RedisServer>();
    else std::fprintf(stderr, "redis-server not installed: the Redis variants are skipped\n");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compute_once_memory),
        cmocka_unit_test(test_error_to_every_waiter_memory),
        cmocka_unit_test(test_compute_once_redis),
        cmocka_unit_test(test_error_to_every_waiter_redis),
        cmocka_unit_test(test_loader_without_value_or_message),
        cmocka_unit_test(test_loader_asking_for_its_own_key_deadlocks),
        cmocka_unit_test(test_waiter_times_out),
    };
    int rc = cmocka_run_group_tests_name("cache_single_flight", tests, nullptr, nullptr);
    g_redis.reset();
    return rc;
}
