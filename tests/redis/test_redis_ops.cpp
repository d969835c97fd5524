// The one-round-trip calls (incr, add, touch, delete_many) on a private
// redis-server over the public C API: the shared checks of every backend
// (tests/l2/backend_ops_check.h), and what the server saw of each call
// (INFO commandstats after CONFIG RESETSTAT): one command sent per call,
// the increment script found by its SHA after its first EVAL.
#include <cstdio>
#include <memory>
#include <string>

#include "redis_server.hpp"
// Then the header that pulls in cmocka.h (assertions that throw), the raw client.
#include "../cache/cache_test_util.hpp"
#include "raw_redis.hpp"
#include "../l2/backend_ops_check.h"

using cachekit::testing::RawRedis;
using cachekit::testing::RedisServer;

namespace {

std::unique_ptr<RedisServer> g_redis;
// SHA-1 of the increment script (src/l2/redis/redis_args.hpp kIncrScript).
constexpr const char *kIncrSha = "4da64b950755988b999777072ce30c22d382261e";

// calls=N of one command in INFO commandstats (0 when it was not called).
long long calls_of(RawRedis &raw, const std::string &command) {
    const std::string info = raw.text({"INFO", "commandstats"});
    const std::string field = "cmdstat_" + command + ":calls=";
    const size_t at = info.find(field);
    if (at == std::string::npos) return 0;
    return std::stoll(info.substr(at + field.size()));
}

uint64_t calls_made(cachekit_backend *b) {
    cachekit_backend_stats st;
    std::memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    assert_int_equal(cachekit_backend_stats_get(b, &st), CACHEKIT_OK);
    return st.calls;
}

void test_shared_checks(void **) {
    if (!g_redis) skip();
    ct::BackendHandle backend = ct::open_backend(g_redis->url().c_str());
    check_backend_ops(backend.get());
}

void test_one_command_per_call(void **) {
    if (!g_redis) skip();
    ct::BackendHandle backend = ct::open_backend(g_redis->url().c_str());
    cachekit_backend *b = backend.get();
    RawRedis raw(g_redis->port());
    int64_t v = 0;
    assert_int_equal(cachekit_backend_set(b, "rt:n", 4, "1", 1, 0), CACHEKIT_OK);
    assert_int_equal(cachekit_backend_incr(b, &v, "rt:n", 4, 1), CACHEKIT_OK);  // caches the script

    raw.text({"CONFIG", "RESETSTAT"});
    const uint64_t before = calls_made(b);
    assert_int_equal(cachekit_backend_incr(b, &v, "rt:n", 4, 5), CACHEKIT_OK);
    assert_int_equal(v, 7);
    assert_int_equal(calls_made(b) - before, 1);
    assert_int_equal(calls_of(raw, "evalsha"), 1);
    assert_int_equal(calls_of(raw, "eval"), 0);
    assert_int_equal(calls_of(raw, "set"), 0);
    assert_int_equal(calls_of(raw, "incrby"), 1);  // inside the script, as its GET is

    raw.text({"CONFIG", "RESETSTAT"});
    int added = 0;
    assert_int_equal(cachekit_backend_add(b, &added, "rt:a", 4, "v", 1, 10.0), CACHEKIT_OK);
    assert_int_equal(added, 1);
    assert_int_equal(cachekit_backend_touch(b, "rt:a", 4, 20.0), CACHEKIT_OK);
    const void *keys[3] = {"rt:n", "rt:a", "rt:none"};
    size_t lens[3] = {4, 4, 7};
    uint64_t deleted = 0;
    assert_int_equal(cachekit_backend_delete_many(b, &deleted, keys, lens, 3), CACHEKIT_OK);
    assert_int_equal(deleted, 2);
    assert_int_equal(calls_of(raw, "set"), 1);
    assert_int_equal(calls_of(raw, "pexpire"), 1);
    assert_int_equal(calls_of(raw, "unlink"), 1);
    assert_int_equal(calls_of(raw, "exists"), 0);
    assert_int_equal(calls_of(raw, "del"), 0);
}

// A server that lost its scripts (restart, SCRIPT FLUSH): EVAL once, then by SHA again.
void test_script_cache_lost(void **) {
    if (!g_redis) skip();
    ct::BackendHandle backend = ct::open_backend(g_redis->url().c_str());
    cachekit_backend *b = backend.get();
    RawRedis raw(g_redis->port());
    raw.text({"SCRIPT", "FLUSH"});
    assert_int_equal(cachekit_backend_set(b, "sf:n", 4, "10", 2, 0), CACHEKIT_OK);
    raw.text({"CONFIG", "RESETSTAT"});
    int64_t v = 0;
    assert_int_equal(cachekit_backend_incr(b, &v, "sf:n", 4, -3), CACHEKIT_OK);
    assert_int_equal(v, 7);
    assert_int_equal(calls_of(raw, "eval"), 1);
    redisReply *r = raw.command({"SCRIPT", "EXISTS", kIncrSha});  // the SHA the code sends is the script's
    assert_int_equal(r->type, REDIS_REPLY_ARRAY);
    assert_int_equal(r->element[0]->integer, 1);
    freeReplyObject(r);
    raw.text({"CONFIG", "RESETSTAT"});
    assert_int_equal(cachekit_backend_incr(b, &v, "sf:n", 4, 1), CACHEKIT_OK);
    assert_int_equal(calls_of(raw, "evalsha"), 1);
    assert_int_equal(calls_of(raw, "eval"), 0);
    // Missing key and wrong type through the script, on the real server.
    assert_int_equal(cachekit_backend_incr(b, &v, "sf:none", 7, 1), CACHEKIT_ENOTFOUND);
    assert_int_equal(raw.integer({"EXISTS", "sf:none"}), 0);
    raw.text({"RPUSH", "sf:list", "x"});
    assert_int_equal(cachekit_backend_incr(b, &v, "sf:list", 7, 1), CACHEKIT_EUNSUPPORTED);
    // None of these is a backend failure.
    cachekit_backend_stats st;
    std::memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    assert_int_equal(cachekit_backend_stats_get(b, &st), CACHEKIT_OK);
    assert_int_equal(st.failures, 0);
}

// Fail-closed on a server that is gone: each call says so; fail-open: skipped, counted.
void test_server_down(void **) {
    if (!g_redis) skip();
    RedisServer gone;
    const std::string url = gone.url();
    gone.kill();
    cachekit_backend_options o = CACHEKIT_BACKEND_OPTIONS_INIT;
    o.fail_closed = 1;
    o.breaker_disabled = 1;
    ct::BackendHandle closed = ct::open_backend(url.c_str(), &o);
    int64_t v = 0;
    int added = 0;
    uint64_t deleted = 0;
    const void *keys[1] = {"k"};
    size_t lens[1] = {1};
    assert_int_equal(cachekit_backend_incr(closed.get(), &v, "k", 1, 1), CACHEKIT_EBACKEND);
    assert_int_equal(cachekit_backend_add(closed.get(), &added, "k", 1, "v", 1, 0), CACHEKIT_EBACKEND);
    assert_int_equal(cachekit_backend_touch(closed.get(), "k", 1, 1.0), CACHEKIT_EBACKEND);
    assert_int_equal(cachekit_backend_delete_many(closed.get(), &deleted, keys, lens, 1), CACHEKIT_EBACKEND);

    ct::BackendHandle open = ct::open_backend(url.c_str());
    assert_int_equal(cachekit_backend_incr(open.get(), &v, "k", 1, 1), CACHEKIT_EBACKEND);  // never degraded
    assert_int_equal(cachekit_backend_add(open.get(), &added, "k", 1, "v", 1, 0), CACHEKIT_OK);
    assert_int_equal(added, 0);
    assert_int_equal(cachekit_backend_touch(open.get(), "k", 1, 1.0), CACHEKIT_ENOTFOUND);
    assert_int_equal(cachekit_backend_delete_many(open.get(), &deleted, keys, lens, 1), CACHEKIT_OK);
    assert_int_equal(deleted, 0);
    cachekit_backend_stats st;
    std::memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    assert_int_equal(cachekit_backend_stats_get(open.get(), &st), CACHEKIT_OK);
    assert_int_equal(st.skipped_writes, 3);
}

}  // namespace

int main() {
    if (!RedisServer::find_binary().empty()) g_redis = std::make_unique<RedisServer>();
    else std::fprintf(stderr, "redis-server not installed: skipped\n");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shared_checks),
        cmocka_unit_test(test_one_command_per_call),
        cmocka_unit_test(test_script_cache_lost),
        cmocka_unit_test(test_server_down),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
