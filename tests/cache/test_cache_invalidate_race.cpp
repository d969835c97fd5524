// Issue 5, item 3: an invalidation that happens while a loader runs wins.
// The loader signals that it is running and waits; another thread then
// invalidates (the key, its namespace, or everything) and lets it finish.
// The caller still gets the loaded value, but it is not stored: the next get
// misses in both tiers (the L2 is checked directly through the borrowed
// backend handle) and stats count one dropped fill.
#include "cache_test_util.hpp"

namespace {

using ct::Buf;

enum class Kind { Key, Namespace, Clear, OtherNamespace };

// A cache over a borrowed memory backend (declared first: it outlives the cache).
struct Fixture {
    ct::BackendHandle backend_owner = ct::open_backend("memory://");
    ct::CacheHandle cache_owner;
    cachekit_backend *backend = backend_owner.get();
    cachekit_cache *cache = nullptr;
    Fixture() {
        cachekit_cache_options o = ct::default_options();
        o.backend = backend;
        cache_owner = ct::new_cache(&o);
        cache = cache_owner.get();
    }
};

struct RacingLoader {
    ct::Gate running, invalidated;
    std::string value = ct::mp_str("loaded while being invalidated");
    std::atomic<int> calls{0};
    static int run(cachekit_load *load, void *payload) {
        auto *self = static_cast<RacingLoader *>(payload);
        self->calls.fetch_add(1);
        self->running.open();
        self->invalidated.wait();
        return cachekit_load_set_value(load, self->value.data(), self->value.size());
    }
};

void race(Kind kind) {
    Fixture f;
    const std::string key = ct::shaped_key("race", "1");
    // A bystander in another namespace, to see what each kind removes.
    const std::string bystander = ct::shaped_key("keep", "2"), bv = ct::mp_str("bystander");
    CT_OK(cachekit_cache_put(f.cache, "keep", bystander.data(), bystander.size(), bv.data(), bv.size(),
                             CACHEKIT_TTL_DEFAULT));

    RacingLoader loader;
    int invalidate_rc = -100;
    std::thread invalidator([&] {
        loader.running.wait();
        switch (kind) {
        case Kind::Key: invalidate_rc = cachekit_cache_invalidate(f.cache, "race", key.data(), key.size()); break;
        case Kind::Namespace: invalidate_rc = cachekit_cache_invalidate_namespace(f.cache, "race"); break;
        case Kind::Clear: invalidate_rc = cachekit_cache_clear(f.cache); break;
        case Kind::OtherNamespace: invalidate_rc = cachekit_cache_invalidate_namespace(f.cache, "unrelated"); break;
        }
        loader.invalidated.open();
    });
    ct::JoinOnExit join_invalidator(invalidator, [&] { loader.running.open(); });
    Buf buf;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    CT_OK(cachekit_cache_get_or_load(f.cache, buf.get(), &info, "race", key.data(), key.size(), CACHEKIT_TTL_DEFAULT,
                                     &RacingLoader::run, &loader));
    invalidator.join();
    assert_int_equal(invalidate_rc, CACHEKIT_OK);
    assert_int_equal(loader.calls.load(), 1);
    // The caller gets what its loader computed.
    assert_true(buf.str() == loader.value);
    assert_int_equal(info.source, CACHEKIT_SOURCE_LOADED);

    Buf raw;
    cachekit_cache_stats s = ct::stats_of(f.cache, "race");
    if (kind == Kind::OtherNamespace) {
        // Not this key's invalidation: the value is stored as usual.
        assert_int_equal(s.dropped_fills, 0);
        assert_int_equal(s.stores, 1);
        CT_OK(cachekit_backend_exists(f.backend, key.data(), key.size()));
        cachekit_lookup again = CACHEKIT_LOOKUP_INIT;
        CT_OK(cachekit_cache_get(f.cache, buf.get(), &again, "race", key.data(), key.size()));
        assert_int_equal(again.source, CACHEKIT_SOURCE_L1);
    } else {
        assert_int_equal(s.dropped_fills, 1);
        assert_int_equal(s.stores, 0);
        assert_int_equal(s.loads, 1);
        // Neither tier holds it.
        CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_backend_exists(f.backend, key.data(), key.size()));
        CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_backend_get(f.backend, raw.get(), key.data(), key.size()));
        CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_get(f.cache, buf.get(), nullptr, "race", key.data(), key.size()));
        assert_int_equal(ct::stats_of(f.cache, "race").l1_hits, 0);
        // The next get_or_load computes again, and this time stores.
        RacingLoader next;
        next.value = ct::mp_str("second load");
        next.invalidated.open();
        CT_OK(cachekit_cache_get_or_load(f.cache, buf.get(), &info, "race", key.data(), key.size(),
                                         CACHEKIT_TTL_DEFAULT, &RacingLoader::run, &next));
        assert_int_equal(next.calls.load(), 1);
        CT_OK(cachekit_backend_exists(f.backend, key.data(), key.size()));
        CT_OK(cachekit_cache_get(f.cache, buf.get(), nullptr, "race", key.data(), key.size()));
        assert_true(buf.str() == next.value);
    }
    // Only clear removes the bystander of another namespace.
    const int bystander_rc = cachekit_cache_get(f.cache, buf.get(), nullptr, "keep", bystander.data(), bystander.size());
    assert_int_equal(bystander_rc, kind == Kind::Clear ? CACHEKIT_ENOTFOUND : CACHEKIT_OK);
}

void test_invalidate_key_during_load(void **) { race(Kind::Key); }
void test_invalidate_namespace_during_load(void **) { race(Kind::Namespace); }
void test_clear_during_load(void **) { race(Kind::Clear); }
void test_other_namespace_does_not_drop(void **) { race(Kind::OtherNamespace); }

// A plain put whose value was computed before an invalidation is not
// affected (puts take their ticket when called): it stores.
void test_put_after_invalidate_stores(void **) {
    Fixture f;
    const std::string key = "ns:race:k:put", v = ct::mp_str("v");
    CT_OK(cachekit_cache_invalidate(f.cache, "race", key.data(), key.size()));
    CT_OK(cachekit_cache_put(f.cache, "race", key.data(), key.size(), v.data(), v.size(), CACHEKIT_TTL_DEFAULT));
    Buf buf;
    CT_OK(cachekit_cache_get(f.cache, buf.get(), nullptr, "race", key.data(), key.size()));
    CT_OK(cachekit_backend_exists(f.backend, key.data(), key.size()));
    // invalidate removes both tiers.
    CT_OK(cachekit_cache_invalidate(f.cache, "race", key.data(), key.size()));
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_backend_exists(f.backend, key.data(), key.size()));
    CT_EXPECT(CACHEKIT_ENOTFOUND, cachekit_cache_get(f.cache, buf.get(), nullptr, "race", key.data(), key.size()));
    assert_int_equal(ct::stats_of(f.cache, "race").invalidations, 2);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_invalidate_key_during_load),
        cmocka_unit_test(test_invalidate_namespace_during_load),
        cmocka_unit_test(test_clear_during_load),
        cmocka_unit_test(test_other_namespace_does_not_drop),
        cmocka_unit_test(test_put_after_invalidate_stores),
    };
    return cmocka_run_group_tests_name("cache_invalidate_race", tests, nullptr, nullptr);
}
