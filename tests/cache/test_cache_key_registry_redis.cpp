// The reference SDK's server-side key registry kept by the cache handle
// (docs/redis.md "Key registry"), against a private redis-server:
//  - each L2 write of a declared function's key (put, loaded value, a claimed
//    load landed by put_refresh) adds the
//    bare key to {prefix}ck:reg:{ns}:{16 hex of BLAKE3("module.qualname")}
//    and sets the set's TTL to 7 days; keys of undeclared shapes are listed nowhere;
//  - invalidate_function removes every listed key, whoever wrote it (another
//    cache handle, another process, the reference SDK's raw SADD), from L2 and
//    from the invalidating cache's L1, then the registry is gone; another
//    function's keys and registry stay;
//  - a registry write that fails (the set's name holds a string: WRONGTYPE)
//    does not fail the put: the value is stored, the metrics count it;
//  - without a registry (memory backend): kept = 0, invalidate_function is a no-op;
//  - bad arguments are refused.
// Skips (exit 77) without redis-server.
#include <hiredis/hiredis.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "../redis/redis_server.hpp"
#include "cache_test_util.hpp"
// Last: it needs cmocka.h.
#include "../redis/raw_redis.hpp"

namespace {

using cachekit::testing::RedisServer;
using ct::Buf;

RedisServer *g_redis = nullptr;

const std::string kValue = ct::mp_str("registered");
const char *const kPrefix = "t:default:";
// BLAKE3 of "app.mod.f" / "app.mod.g", first 8 bytes (python: blake3.blake3(b"app.mod.f").hexdigest()[:16]).
const std::string kSetF = std::string(kPrefix) + "ck:reg:reg:bf07e5df600f2ff9";
const std::string kSetG = std::string(kPrefix) + "ck:reg:reg:bf2f370c19d49b86";

std::string auto_key(const char *fn, int n) {
    Buf out;
    const std::string args = std::string("\x92\x91", 2) + char(n & 0x7f) + std::string("\x80", 1);  // [[n], {}]
    CT_OK(cachekit_key_auto(out.get(), "reg", "app.mod", fn, args.data(), args.size(), 1, "std"));
    return out.str();
}

// The head every key of the function starts with: up to and including ":args:".
std::string head_of(const std::string &key) { return key.substr(0, key.rfind(":args:") + 6); }

// A raw connection for what the C API does not show (sets, TTLs, other
// writers), on an emptied server.
struct Raw : cachekit::testing::RawRedis {
    Raw() : RawRedis(g_redis->port()) { text({"FLUSHALL"}); }
};

ct::CacheHandle redis_cache() {
    cachekit_cache_options o = ct::default_options();
    const std::string url = g_redis->url();
    o.backend_url = url.c_str();
    o.key_prefix = kPrefix;
    return ct::new_cache(&o);
}

int track(cachekit_cache *c, const char *function, const std::string &head) {
    int kept = -1;
    CT_OK(cachekit_cache_track_function(c, "reg", function, head.data(), head.size(), &kept));
    return kept;
}

void put(cachekit_cache *c, const std::string &key) {
    CT_OK(cachekit_cache_put(c, "reg", key.data(), key.size(), kValue.data(), kValue.size(), CACHEKIT_TTL_DEFAULT));
}

bool in_l1_or_l2(cachekit_cache *c, const std::string &key) {
    Buf out;
    const int rc = cachekit_cache_get(c, out.get(), nullptr, "reg", key.data(), key.size());
    if (rc != CACHEKIT_OK && rc != CACHEKIT_ENOTFOUND) fail_msg("get -> %d", rc);
    return rc == CACHEKIT_OK;
}

void test_writes_list_the_key_with_a_seven_day_ttl(void **) {
    Raw raw;
    ct::CacheHandle cache = redis_cache();
    const std::string f1 = auto_key("f", 1), f2 = auto_key("f", 2), g1 = auto_key("g", 1);
    assert_int_equal(track(cache.get(), "app.mod.f", head_of(f1)), 1);
    put(cache.get(), f1);
    ct::ValueLoader loader{kValue};
    Buf out;
    CT_OK(cachekit_cache_get_or_load(cache.get(), out.get(), nullptr, "reg", f2.data(), f2.size(),
                                     CACHEKIT_TTL_DEFAULT, &ct::ValueLoader::run, &loader));
    assert_int_equal(loader.calls.load(), 1);
    // A load claimed by get_for_load, landed by put_refresh (the async wrappers' path).
    const std::string f3 = auto_key("f", 3);
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    Buf miss;
    assert_int_equal(cachekit_cache_get_for_load(cache.get(), miss.get(), &info, "reg", f3.data(), f3.size()),
                     CACHEKIT_ENOTFOUND);
    CT_OK(cachekit_cache_put_refresh(cache.get(), "reg", f3.data(), f3.size(), kValue.data(), kValue.size(),
                                     CACHEKIT_TTL_DEFAULT, info.refresh_claim));
    put(cache.get(), g1);  // g is not declared: listed nowhere
    assert_true(raw.members(kSetF) == (std::set<std::string>{f1, f2, f3}));
    assert_false(raw.has(kSetG));
    const long long ttl = raw.integer({"TTL", kSetF});
    assert_true(ttl > 604800 - 60 && ttl <= 604800);
    assert_true(raw.has(kPrefix + f1) && raw.has(kPrefix + f2) && raw.has(kPrefix + f3) && raw.has(kPrefix + g1));
}

// f(3) put through a cache handle of its own (in a forked child: another
// process); 0 when it was written and listed.
int put_from_another_handle(const std::string &head) {
    cachekit_cache_options o = ct::default_options();
    const std::string url = g_redis->url();
    o.backend_url = url.c_str();
    o.key_prefix = kPrefix;
    cachekit_cache *c = nullptr;
    int kept = 0;
    const std::string k = auto_key("f", 3);
    const bool ok = cachekit_cache_new(&c, &o) == CACHEKIT_OK &&
                    cachekit_cache_track_function(c, "reg", "app.mod.f", head.data(), head.size(), &kept) == CACHEKIT_OK &&
                    cachekit_cache_put(c, "reg", k.data(), k.size(), kValue.data(), kValue.size(), 60) == CACHEKIT_OK;
    cachekit_cache_free(c);
    return ok && kept == 1 ? 0 : 1;
}

void test_invalidate_function_removes_every_writers_keys(void **) {
    Raw raw;
    ct::CacheHandle a = redis_cache(), b = redis_cache();
    const std::string head = head_of(auto_key("f", 1));
    track(a.get(), "app.mod.f", head);
    track(b.get(), "app.mod.f", head);
    track(a.get(), "app.mod.g", head_of(auto_key("g", 1)));
    put(a.get(), auto_key("f", 1));
    put(b.get(), auto_key("f", 2));
    put(a.get(), auto_key("g", 1));
    // Another process, with its own cache handle.
#if defined(__SANITIZE_THREAD__)
    // TSan cannot start threads in the child of a threaded process: a third handle here stands in.
    assert_int_equal(put_from_another_handle(head), 0);
#else
    const pid_t child = fork();
    if (child == 0) _exit(put_from_another_handle(head));
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
#endif
    // The reference SDK's writer: SET and its own SADD of the bare key.
    const std::string ref = auto_key("f", 4);
    freeReplyObject(raw.command({"SET", kPrefix + ref, "x"}));
    raw.integer({"SADD", kSetF, ref});
    assert_int_equal(raw.members(kSetF).size(), 4);
    assert_true(in_l1_or_l2(a.get(), auto_key("f", 1)));  // in a's L1

    uint64_t deleted = 0;
    CT_OK(cachekit_cache_invalidate_function(a.get(), "reg", "app.mod.f", &deleted));
    assert_int_equal(deleted, 4);
    for (int n = 1; n <= 4; ++n) assert_false(raw.has(kPrefix + auto_key("f", n)));
    assert_false(raw.has(kSetF));  // the registry itself is gone
    assert_false(in_l1_or_l2(a.get(), auto_key("f", 1)));  // a's L1 let it go
    assert_true(raw.has(kPrefix + auto_key("g", 1)));
    assert_true(raw.members(kSetG) == (std::set<std::string>{auto_key("g", 1)}));
    // Again: nothing left to drain.
    CT_OK(cachekit_cache_invalidate_function(b.get(), "reg", "app.mod.f", &deleted));
    assert_int_equal(deleted, 0);
}

void test_many_keys_drain_in_batches(void **) {
    Raw raw;
    ct::CacheHandle cache = redis_cache();
    track(cache.get(), "app.mod.f", head_of(auto_key("f", 1)));
    // 2500 members: several SSCAN pages of a hashtable-encoded set.
    std::vector<std::string> keys;
    for (int n = 0; n < 2500; ++n) {
        keys.push_back(auto_key("f", 1) + ":" + std::to_string(n));  // distinct keys under the same head
        freeReplyObject(raw.command({"SET", kPrefix + keys.back(), "x"}));
        raw.integer({"SADD", kSetF, keys.back()});
    }
    uint64_t deleted = 0;
    CT_OK(cachekit_cache_invalidate_function(cache.get(), "reg", "app.mod.f", &deleted));
    assert_int_equal(deleted, 2500);
    assert_false(raw.has(kSetF));
    assert_int_equal(raw.integer({"DBSIZE"}), 0);
}

void test_a_failed_registry_write_does_not_fail_the_put(void **) {
    Raw raw;
    freeReplyObject(raw.command({"SET", kSetF, "not a set"}));  // SADD answers WRONGTYPE
    ct::CacheHandle cache = redis_cache();
    const std::string f1 = auto_key("f", 1);
    track(cache.get(), "app.mod.f", head_of(f1));
    put(cache.get(), f1);
    assert_true(raw.has(kPrefix + f1));
    Buf text;
    CT_OK(cachekit_cache_metrics_text(cache.get(), text.get()));
    assert_true(ct::contains(text.str(), "cachekit_cache_errors_total{namespace=\"reg\",kind=\"registry\"} 1"));
    // The next write works once the set's name is free again.
    raw.integer({"DEL", kSetF});
    put(cache.get(), auto_key("f", 2));
    assert_true(raw.members(kSetF) == (std::set<std::string>{auto_key("f", 2)}));
}

void test_without_a_registry_nothing_is_listed(void **) {
    cachekit_cache_options o = ct::default_options();
    o.backend_url = "memory://";
    ct::CacheHandle cache = ct::new_cache(&o);
    const std::string f1 = auto_key("f", 1);
    assert_int_equal(track(cache.get(), "app.mod.f", head_of(f1)), 0);
    put(cache.get(), f1);
    uint64_t deleted = 7;
    CT_OK(cachekit_cache_invalidate_function(cache.get(), "reg", "app.mod.f", &deleted));
    assert_int_equal(deleted, 0);
}

void test_bad_arguments_are_refused(void **) {
    ct::CacheHandle cache = redis_cache();
    const std::string head = head_of(auto_key("f", 1));
    assert_int_equal(cachekit_cache_track_function(cache.get(), "reg", "", head.data(), head.size(), nullptr),
                     CACHEKIT_EINVAL);
    assert_int_equal(cachekit_cache_track_function(cache.get(), "reg", nullptr, head.data(), head.size(), nullptr),
                     CACHEKIT_EINVAL);
    assert_int_equal(cachekit_cache_track_function(cache.get(), "reg", "app.mod.f", "no-colon", 8, nullptr),
                     CACHEKIT_EINVAL);
    assert_int_equal(cachekit_cache_track_function(nullptr, "reg", "app.mod.f", head.data(), head.size(), nullptr),
                     CACHEKIT_EINVAL);
    assert_int_equal(cachekit_cache_invalidate_function(cache.get(), "reg", "", nullptr), CACHEKIT_EINVAL);
    cachekit_error err = CACHEKIT_ERROR_INIT;
    assert_int_equal(cachekit_cache_invalidate_function_ex(cache.get(), "reg", nullptr, nullptr, &err), CACHEKIT_EINVAL);
    assert_true(err.message[0] != '\0');
}

}  // namespace

int main() {
    RedisServer::require_or_skip("test_cache_key_registry_redis");
    RedisServer server;
    g_redis = &server;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_writes_list_the_key_with_a_seven_day_ttl),
        cmocka_unit_test(test_invalidate_function_removes_every_writers_keys),
        cmocka_unit_test(test_many_keys_drain_in_batches),
        cmocka_unit_test(test_a_failed_registry_write_does_not_fail_the_put),
        cmocka_unit_test(test_without_a_registry_nothing_is_listed),
        cmocka_unit_test(test_bad_arguments_are_refused),
    };
    return cmocka_run_group_tests_name("cache_key_registry_redis", tests, nullptr, nullptr);
}
