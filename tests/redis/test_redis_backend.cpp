// The Redis backend against a private redis-server: round trips, TTLs,
// batches, clear(prefix), a lock contended by two processes, unix sockets.
#include <hiredis/hiredis.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "redis_test_support.hpp"
// Last: it needs cmocka.h.
#include "raw_redis.hpp"

namespace {

using cachekit::Buffer;
using cachekit::l2::Backend;
using cachekit::l2::KeyValue;
using cachekit::l2::Ttl;
using namespace std::chrono_literals;

std::unique_ptr<cachekit::testing::RedisServer> server;
std::unique_ptr<Backend> backend;

std::string random_bytes(size_t n, unsigned seed) {
    std::mt19937 rng(seed);
    std::string out(n, '\0');
    for (auto &c : out) c = static_cast<char>(rng() & 0xff);
    return out;
}

// A raw client to the test server, for checks behind the backend's back.
struct Raw : cachekit::testing::RawRedis {
    Raw() : RawRedis(server->port()) {}
};

int setup(void **) {
    server = std::make_unique<cachekit::testing::RedisServer>(cachekit::testing::RedisServerOptions{"", true});
    backend = rt::open_url(server->url());
    return 0;
}

int teardown(void **) {
    backend.reset();
    server.reset();
    return 0;
}

void check_round_trip(std::string_view key, const std::string &value) {
    backend->set(key, value, std::nullopt, rt::soon());
    Buffer out;
    assert_true(backend->get(key, out.get(), rt::soon()));
    assert_int_equal(out.size(), value.size());
    assert_memory_equal(out.data(), value.data(), value.size());
}

void test_round_trips(void **) {
    check_round_trip("plain", "hello");
    check_round_trip("empty-value", "");
    check_round_trip(std::string_view("bin\0key\xff", 8), std::string("v\0a\0l\xfe", 6));
    check_round_trip("14k", random_bytes(14 * 1024, 1));
    check_round_trip("1m", random_bytes(1 << 20, 2));
    check_round_trip("", "the empty key is a key too");
    // Overwrite a large value with a small one in the same caller buffer.
    Buffer out;
    assert_true(backend->get("1m", out.get(), rt::soon()));
    assert_true(backend->get("plain", out.get(), rt::soon()));
    assert_string_equal(out.data(), "hello");
    assert_false(backend->get("missing", out.get(), rt::soon()));
}

void test_exists_del(void **) {
    backend->set("ed", "x", std::nullopt, rt::soon());
    assert_true(backend->exists("ed", rt::soon()));
    assert_true(backend->del("ed", rt::soon()));
    assert_false(backend->exists("ed", rt::soon()));
    assert_false(backend->del("ed", rt::soon()));
}

void test_ttl(void **) {
    backend->set("t-none", "x", std::nullopt, rt::soon());
    backend->set("t-60", "x", Ttl(60000ms), rt::soon());
    auto none = backend->ttl("t-none", rt::soon());
    assert_true(none.has_value());
    assert_false(none->has_value());
    auto sixty = backend->ttl("t-60", rt::soon());
    assert_true(sixty.has_value() && sixty->has_value());
    assert_true((*sixty)->count() > 0 && (*sixty)->count() <= 60000);
    assert_false(backend->ttl("t-missing", rt::soon()).has_value());
    // Overwriting without a TTL clears it.
    backend->set("t-60", "y", std::nullopt, rt::soon());
    assert_false(backend->ttl("t-60", rt::soon())->has_value());
    // Non-positive TTLs are bad input.
    assert_int_equal(rt::error_of([] { backend->set("t-bad", "x", Ttl(0ms), rt::soon()); }), CACHEKIT_EINVAL);
}

void test_ttl_expiry(void **) {
    backend->set("short", "x", Ttl(100ms), rt::soon());
    assert_true(rt::eventually([] { return !backend->exists("short", rt::soon()); }, 5000ms));
    Buffer out;
    assert_false(backend->get("short", out.get(), rt::soon()));
    // set_many with a TTL expires too.
    std::vector<KeyValue> entries = {{"short-a", "1"}, {"short-b", "2"}};
    backend->set_many(entries, Ttl(100ms), rt::soon());
    assert_true(rt::eventually([] {
        return !backend->exists("short-a", rt::soon()) && !backend->exists("short-b", rt::soon());
    }, 5000ms));
}

void check_batch(size_t total, size_t step) {
    std::vector<std::string> keys, values;
    for (size_t i = 0; i < total; ++i) {
        keys.push_back("batch" + std::to_string(total) + ":" + std::to_string(i));
        values.push_back(i % 7 == 0 ? std::string() : random_bytes(i % 300, static_cast<unsigned>(i)));
    }
    std::vector<KeyValue> entries;
    for (size_t i = 0; i < total; i += step) entries.push_back({keys[i], values[i]});
    backend->set_many(entries, Ttl(60000ms), rt::soon());

    std::vector<std::string_view> views(keys.begin(), keys.end());
    // Buffers are passed as a contiguous cachekit_buf array.
    std::vector<cachekit_buf> bufs(total, cachekit_buf CACHEKIT_BUF_INIT);
    std::vector<bool> found;
    backend->get_many(views, bufs.data(), found, rt::soon());
    assert_int_equal(found.size(), total);
    for (size_t i = 0; i < total; ++i) {
        bool want = i % step == 0;
        if (found[i] != want) fail_msg("key %zu: found=%d, want %d", i, int(found[i]), int(want));
        if (want) {
            assert_int_equal(bufs[i].size, values[i].size());
            if (!values[i].empty()) assert_memory_equal(bufs[i].ptr, values[i].data(), values[i].size());
        }
        cachekit::buf_release(&bufs[i]);
    }
}

void test_batches(void **) {
    check_batch(100, 3);    // one MGET, two thirds missing
    check_batch(2500, 2);   // three pipelined MGETs
    std::vector<std::string_view> none;
    std::vector<bool> found{true};
    backend->get_many(none, nullptr, found, rt::soon());
    assert_true(found.empty());
    backend->set_many({}, std::nullopt, rt::soon());
}

void test_clear_prefix(void **) {
    std::vector<std::string> keys;
    for (int i = 0; i < 10000; ++i) keys.push_back("ns1:" + std::to_string(i));
    std::vector<KeyValue> entries;
    for (auto &k : keys) entries.push_back({k, "v"});
    const char *outside[] = {"ns1", "ns10:x", "other:1", "Ns1:x", "xns1:y"};
    for (const char *k : outside) entries.push_back({k, "keep"});
    backend->set_many(entries, std::nullopt, rt::soon());

    assert_int_equal(backend->clear("ns1:", rt::soon()), 10000);
    assert_false(backend->exists("ns1:0", rt::soon()));
    assert_false(backend->exists("ns1:9999", rt::soon()));
    for (const char *k : outside) assert_true(backend->exists(k, rt::soon()));
    assert_int_equal(backend->clear("ns1:", rt::soon()), 0);
}

void test_clear_glob_literal(void **) {
    const char *inside[] = {"a*b:1", "a*b:2"};
    const char *outside[] = {"axb:1", "a*bc", "aab:1"};
    const char *weird_in[] = {"[x]?\\:1", "[x]?\\:2"};
    const char *weird_out[] = {"x?\\:1", "[x]a\\:1", "[x]?:1"};
    for (const char *k : inside) backend->set(k, "v", std::nullopt, rt::soon());
    for (const char *k : outside) backend->set(k, "v", std::nullopt, rt::soon());
    for (const char *k : weird_in) backend->set(k, "v", std::nullopt, rt::soon());
    for (const char *k : weird_out) backend->set(k, "v", std::nullopt, rt::soon());
    assert_int_equal(backend->clear("a*b:", rt::soon()), 2);
    assert_int_equal(backend->clear("[x]?\\:", rt::soon()), 2);
    for (const char *k : inside) assert_false(backend->exists(k, rt::soon()));
    for (const char *k : weird_in) assert_false(backend->exists(k, rt::soon()));
    for (const char *k : outside) assert_true(backend->exists(k, rt::soon()));
    for (const char *k : weird_out) assert_true(backend->exists(k, rt::soon()));
    // A binary prefix with a NUL byte.
    std::string p("bin\0pre:", 8);
    backend->set(p + "1", "v", std::nullopt, rt::soon());
    backend->set(std::string("bin\0other", 9), "v", std::nullopt, rt::soon());
    assert_int_equal(backend->clear(p, rt::soon()), 1);
}

void test_clear_everything(void **) {
    backend->set("all:1", "v", std::nullopt, rt::soon());
    Raw raw;
    long long before = raw.integer({"DBSIZE"});
    assert_true(before >= 1);
    assert_int_equal(backend->clear("", rt::soon()), before);
    assert_int_equal(raw.integer({"DBSIZE"}), 0);
}

// Parent and child talk over two pipes, one byte at a time.
void put(int fd, char c) { assert_int_equal(write(fd, &c, 1), 1); }
// In the child no cmocka assertion may run (it would longjmp into the child's
// copy of the test runner).
void child_put(int fd, char c) {
    if (write(fd, &c, 1) != 1) _exit(3);
}
char take(int fd) {
    char c = 0;
    if (read(fd, &c, 1) != 1) return 0;
    return c;
}

void test_lock_two_processes(void **) {
    const std::string name = "lock:two-procs";
    int to_child[2], to_parent[2];
    assert_int_equal(pipe(to_child), 0);
    assert_int_equal(pipe(to_parent), 0);
    std::string url = server->url();
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        // The child: its own backend (never the parent's sockets), then _exit.
        close(to_child[1]);
        close(to_parent[0]);
        int status = 1;
        try {
            auto mine = rt::open_url(url);
            auto token = mine->lock(name, 30000ms, rt::soon());
            child_put(to_parent[1], token ? 'L' : 'n');
            if (token && take(to_child[0]) == 'U') {
                child_put(to_parent[1], mine->unlock(name, *token, rt::soon()) ? 'u' : 'x');
                // Phase 2: take it for 300 ms and leave without unlocking.
                auto again = mine->lock(name, 300ms, rt::soon());
                child_put(to_parent[1], again ? 'L' : 'n');
                status = 0;
            }
        } catch (...) {
        }
        _exit(status);
    }
    close(to_child[0]);
    close(to_parent[1]);
    assert_int_equal(take(to_parent[0]), 'L');
    // Held by the child: the parent cannot take it, nor release it with a wrong token.
    assert_false(backend->lock(name, 1000ms, rt::soon()).has_value());
    assert_false(backend->unlock(name, "0123456789abcdef0123456789abcdef", rt::soon()));
    assert_false(backend->unlock(name, "", rt::soon()));
    assert_true(backend->exists(name, rt::soon()));
    put(to_child[1], 'U');
    assert_int_equal(take(to_parent[0]), 'u');
    // Free now: the child takes it again with a short hold and exits holding it.
    assert_int_equal(take(to_parent[0]), 'L');
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    close(to_child[1]);
    close(to_parent[0]);
    // The hold expires; then the parent gets it.
    std::optional<std::string> token;
    assert_true(rt::eventually([&] {
        token = backend->lock(name, 5000ms, rt::soon());
        return token.has_value();
    }, 5000ms));
    assert_int_equal(token->size(), 32);
    assert_int_equal(token->find_first_not_of("0123456789abcdef"), std::string::npos);
    auto other = backend->lock(name, 5000ms, rt::soon());
    assert_false(other.has_value());
    assert_true(backend->unlock(name, *token, rt::soon()));
    assert_false(backend->unlock(name, *token, rt::soon()));  // already released
    assert_false(backend->exists(name, rt::soon()));
    assert_int_equal(rt::error_of([&] { backend->lock(name, 0ms, rt::soon()); }), CACHEKIT_EINVAL);
}

void test_unlock_script_cache(void **) {
    Raw raw;
    // The SHA-1 the backend uses for EVALSHA is the one Redis computes.
    assert_string_equal(
        raw.text({"SCRIPT", "LOAD",
                    "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return redis.call(\"del\",KEYS[1]) else return 0 end"})
            .c_str(),
        "b70c2384248f88e6b75b9f89241a180f856ad852");
    // After SCRIPT FLUSH, EVALSHA answers NOSCRIPT and the backend falls back to EVAL.
    assert_string_equal(raw.text({"SCRIPT", "FLUSH"}).c_str(), "OK");
    auto token = backend->lock("lock:flush", 5000ms, rt::soon());
    assert_true(token.has_value());
    assert_true(backend->unlock("lock:flush", *token, rt::soon()));
    // Tokens are random.
    auto a = backend->lock("lock:a", 5000ms, rt::soon());
    auto b = backend->lock("lock:b", 5000ms, rt::soon());
    assert_true(a && b && *a != *b);
    assert_true(backend->unlock("lock:a", *a, rt::soon()));
    assert_true(backend->unlock("lock:b", *b, rt::soon()));
}

void test_error_reply_keeps_connection(void **) {
    auto single = rt::open_url(server->url(), 5000ms, 1);
    Raw raw;
    raw.integer({"DEL", "a-list"});
    raw.integer({"RPUSH", "a-list", "x"});
    Buffer out;
    single->set("k", "v", std::nullopt, rt::soon());  // opens the one connection
    auto connections = [&] {
        redisReply *r = raw.command({"INFO", "stats"});
        std::string info(r->str, r->len);
        freeReplyObject(r);
        size_t at = info.find("total_connections_received:");
        return std::stoll(info.substr(at + 27));
    };
    long long before = connections();
    std::string message;
    assert_int_equal(rt::error_of([&] { single->get("a-list", out.get(), rt::soon()); }, &message), CACHEKIT_EBACKEND);
    assert_non_null(std::strstr(message.c_str(), "WRONGTYPE"));
    assert_true(single->get("k", out.get(), rt::soon()));
    assert_int_equal(connections(), before);  // no reconnect: the error reply did not poison it
}

void test_health(void **) {
    auto h = backend->health(rt::soon());
    assert_true(h.ok);
    assert_true(h.latency_ms >= 0 && h.latency_ms < 5000);
    assert_non_null(std::strstr(h.detail.c_str(), "PONG"));
    assert_string_equal(backend->kind(), "redis");
}

void test_unix_socket_and_db(void **) {
    auto over_unix = rt::open_url(server->unix_url(2));
    over_unix->set("unix-key", "via the socket", std::nullopt, rt::soon());
    Buffer out;
    assert_true(over_unix->get("unix-key", out.get(), rt::soon()));
    assert_string_equal(out.data(), "via the socket");
    // It went to db 2: invisible in db 0, visible to a TCP backend on /2.
    assert_false(backend->exists("unix-key", rt::soon()));
    auto db2 = rt::open_url(server->url(2));
    assert_true(db2->get("unix-key", out.get(), rt::soon()));
    assert_true(over_unix->health(rt::soon()).ok);
    assert_true(over_unix->del("unix-key", rt::soon()));
}

void test_many_threads_share_pool(void **) {
    auto pooled = rt::open_url(server->url(), 5000ms, 3);
    std::vector<std::thread> threads;
    std::atomic<int> errors{0};
    for (int t = 0; t < 8; ++t) {
        threads.emplace_back([&, t] {
            Buffer out;
            for (int i = 0; i < 200; ++i) {
                std::string key = "thr:" + std::to_string(t) + ":" + std::to_string(i);
                try {
                    pooled->set(key, key, std::nullopt, rt::soon());
                    if (!pooled->get(key, out.get(), rt::soon()) || out.view() != key) ++errors;
                } catch (...) {
                    ++errors;
                }
            }
        });
    }
    for (auto &th : threads) th.join();
    assert_int_equal(errors.load(), 0);
    assert_int_equal(pooled->clear("thr:", rt::soon()), 1600);
}

}  // namespace

int main() {
    cachekit::testing::RedisServer::require_or_skip("test_redis_backend");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trips),
        cmocka_unit_test(test_exists_del),
        cmocka_unit_test(test_ttl),
        cmocka_unit_test(test_ttl_expiry),
        cmocka_unit_test(test_batches),
        cmocka_unit_test(test_clear_prefix),
        cmocka_unit_test(test_clear_glob_literal),
        cmocka_unit_test(test_lock_two_processes),
        cmocka_unit_test(test_unlock_script_cache),
        cmocka_unit_test(test_error_reply_keeps_connection),
        cmocka_unit_test(test_health),
        cmocka_unit_test(test_unix_socket_and_db),
        cmocka_unit_test(test_many_threads_share_pool),
        cmocka_unit_test(test_clear_everything),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
