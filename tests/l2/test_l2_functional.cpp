// The functional suite of the Backend interface, written once and run over
// the memory and the file backends.
#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <thread>

#include "l2/file/file_backend.hpp"
#include "l2/file/file_backend_options.hpp"
#include "l2/memory_backend.hpp"

#include "l2_test_support.hpp"

using namespace cachekit;
using namespace cachekit::l2;
using namespace std::chrono_literals;
using l2test::soon;

namespace {

struct Fixture {
    std::string kind;
    std::unique_ptr<l2test::TempDir> dir;
    std::unique_ptr<Backend> backend;
};

int setup_memory(void **state) {
    auto *f = new Fixture{"memory", nullptr, open_memory()};
    *state = f;
    return 0;
}

int setup_file(void **state) {
    auto *f = new Fixture{"file", std::make_unique<l2test::TempDir>(), nullptr};
    FileConfig c;
    c.directory = f->dir->path() + "/cache";
    f->backend = open_file(c);
    *state = f;
    return 0;
}

int teardown(void **state) {
    delete static_cast<Fixture *>(*state);
    return 0;
}

Backend &be(void **state) { return *static_cast<Fixture *>(*state)->backend; }

std::string get_str(Backend &b, std::string_view key, bool *found) {
    Buffer out;
    *found = b.get(key, out.get(), soon());
    return std::string(out.view());
}

void test_kind(void **state) {
    auto *f = static_cast<Fixture *>(*state);
    assert_string_equal(f->backend->kind(), f->kind.c_str());
}

void test_set_get_roundtrip(void **state) {
    Backend &b = be(state);
    bool found = true;
    get_str(b, "absent", &found);
    assert_false(found);

    std::string binary("a\0b\xff\x00z", 6);
    b.set("k1", binary, std::nullopt, soon());
    assert_true(get_str(b, "k1", &found) == binary);
    assert_true(found);

    b.set("k1", "second", std::nullopt, soon());  // overwrite
    assert_true(get_str(b, "k1", &found) == "second");

    b.set("empty", "", std::nullopt, soon());  // an empty value is a value
    assert_true(get_str(b, "empty", &found).empty());
    assert_true(found);

    std::string big(1 << 20, 'x');
    for (size_t i = 0; i < big.size(); i += 4096) big[i] = char('a' + i % 26);
    b.set("big", big, std::nullopt, soon());
    assert_true(get_str(b, "big", &found) == big);

    std::string unicode_key = "unicode-\xd0\xba\xd0\xbb\xd1\x8e\xd1\x87-\xf0\x9f\x94\x91";
    b.set(unicode_key, "u", std::nullopt, soon());
    assert_true(get_str(b, unicode_key, &found) == "u");
}

void test_miss_leaves_output_untouched(void **state) {
    Backend &b = be(state);
    Buffer out;
    buf_assign(out.get(), "keep");
    assert_false(b.get("nope", out.get(), soon()));
    assert_true(out.view() == "keep");
}

void test_delete_exists(void **state) {
    Backend &b = be(state);
    assert_false(b.exists("d", soon()));
    assert_false(b.del("d", soon()));
    b.set("d", "v", std::nullopt, soon());
    assert_true(b.exists("d", soon()));
    assert_true(b.del("d", soon()));
    assert_false(b.exists("d", soon()));
    assert_false(b.del("d", soon()));
}

void test_ttl(void **state) {
    Backend &b = be(state);
    assert_false(b.ttl("t-missing", soon()).has_value());
    b.set("t-none", "v", std::nullopt, soon());
    auto none = b.ttl("t-none", soon());
    assert_true(none.has_value());
    assert_false(none->has_value());

    b.set("t-60", "v", 60s, soon());
    auto t = b.ttl("t-60", soon());
    assert_true(t.has_value() && t->has_value());
    auto ms = (*t)->count();
    // File expiries are whole seconds rounded down: (59 s, 60 s], less the time since the write.
    if (ms <= 58000 || ms > 60000) fail_msg("ttl of a 60 s entry is %lld ms", (long long)ms);
}

void test_invalid_ttl(void **state) {
    Backend &b = be(state);
    assert_int_equal(l2test::code_of([&] { b.set("x", "v", 0ms, soon()); }), CACHEKIT_EINVAL);
    assert_int_equal(l2test::code_of([&] { b.set("x", "v", -5ms, soon()); }), CACHEKIT_EINVAL);
}

void test_batches(void **state) {
    Backend &b = be(state);
    std::vector<std::string> keys{"m1", "m2", "m3", "m4"};
    std::vector<std::string> vals{"v1", "", "v3", "v4"};
    std::vector<KeyValue> kvs;
    for (size_t i = 0; i < 3; ++i) kvs.push_back({keys[i], vals[i]});
    b.set_many(kvs, std::nullopt, soon());
    b.set_many({}, std::nullopt, soon());  // nothing to do

    std::vector<std::string_view> ks(keys.begin(), keys.end());
    std::vector<Buffer> outs(ks.size());
    std::vector<cachekit_buf> raw(ks.size(), cachekit_buf CACHEKIT_BUF_INIT);
    std::vector<bool> found;
    b.get_many(ks, raw.data(), found, soon());
    assert_int_equal(found.size(), 4);
    assert_true(found[0] && found[1] && found[2] && !found[3]);
    assert_true(buf_view(raw[0]) == "v1");
    assert_true(buf_view(raw[1]).empty());
    assert_true(buf_view(raw[2]) == "v3");
    for (auto &r : raw) buf_release(&r);

    std::vector<std::string_view> none;
    b.get_many(none, nullptr, found, soon());
    assert_int_equal(found.size(), 0);
}

void test_clear(void **state) {
    auto *f = static_cast<Fixture *>(*state);
    Backend &b = *f->backend;
    for (int i = 0; i < 5; ++i) b.set("app:" + std::to_string(i), "v", std::nullopt, soon());
    for (int i = 0; i < 3; ++i) b.set("other:" + std::to_string(i), "v", std::nullopt, soon());
    if (f->kind == "memory") {
        assert_int_equal(b.clear("app:", soon()), 5);
        assert_false(b.exists("app:1", soon()));
        assert_true(b.exists("other:1", soon()));
    } else {
        // Hashed names: a prefix cannot be matched.
        assert_int_equal(l2test::code_of([&] { b.clear("app:", soon()); }), CACHEKIT_EINVAL);
        assert_true(b.exists("app:1", soon()));
    }
    uint64_t n = b.clear("", soon());
    assert_true(n >= 3);
    assert_false(b.exists("other:1", soon()));
    assert_false(b.exists("app:1", soon()));
    assert_int_equal(b.clear("", soon()), 0);
}

void test_locks(void **state) {
    Backend &b = be(state);
    auto t1 = b.lock("job", 10s, soon());
    assert_true(t1.has_value());
    assert_true(t1->size() >= 16);
    assert_false(b.lock("job", 10s, soon()).has_value());  // held
    assert_true(b.lock("other-job", 10s, soon()).has_value());
    assert_false(b.unlock("job", "not-the-token", soon()));
    assert_false(b.lock("job", 10s, soon()).has_value());  // still held
    assert_true(b.unlock("job", *t1, soon()));
    assert_false(b.unlock("job", *t1, soon()));  // already released
    auto t2 = b.lock("job", 10s, soon());
    assert_true(t2.has_value());
    assert_true(*t2 != *t1);
    assert_true(b.unlock("job", *t2, soon()));
    // A lock and a key of the same name do not collide.
    b.set("job", "value", std::nullopt, soon());
    assert_true(b.lock("job", 10s, soon()).has_value());
    assert_true(b.exists("job", soon()));
    assert_int_equal(l2test::code_of([&] { b.lock("zero", 0ms, soon()); }), CACHEKIT_EINVAL);
}

void test_lock_expiry(void **state) {
    Backend &b = be(state);
    auto t1 = b.lock("short", 50ms, soon());
    assert_true(t1.has_value());
    std::this_thread::sleep_for(120ms);
    auto t2 = b.lock("short", 10s, soon());  // the stale lock is broken
    assert_true(t2.has_value());
    assert_false(b.unlock("short", *t1, soon()));  // the old owner lost it
    assert_true(b.unlock("short", *t2, soon()));
}

void test_health(void **state) {
    Backend &b = be(state);
    Health h = b.health(soon());
    if (!h.ok) fail_msg("health failed: %s", h.detail.c_str());
    assert_true(h.latency_ms >= 0);
}

void test_deadline_passed(void **state) {
    Backend &b = be(state);
    auto *f = static_cast<Fixture *>(*state);
    if (f->kind != "file") skip();  // memory calls never block
    Deadline past{SteadyClock::now() - 1ms};
    assert_int_equal(l2test::code_of([&] { b.set("x", "v", std::nullopt, past); }), CACHEKIT_ETIMEOUT);
}

// Threads writing and reading overlapping keys: every hit is a complete value
// some writer wrote for that key.
void test_threads(void **state) {
    Backend &b = be(state);
    std::atomic<int> bad{0};
    auto worker = [&](int id) {
        std::mt19937 rng(unsigned(id) * 7919u);
        for (int i = 0; i < 400; ++i) {
            std::string key = "tk" + std::to_string(rng() % 20);
            if (rng() % 2) {
                size_t len = 1 + rng() % 3000;
                std::string v = key + "|" + std::string(len, char('a' + id)) + "|" + std::to_string(len);
                b.set(key, v, std::nullopt, soon());
            } else {
                Buffer out;
                if (!b.get(key, out.get(), soon())) continue;
                std::string v(out.view());
                size_t p1 = v.find('|'), p2 = v.rfind('|');
                if (p1 == std::string::npos || p2 <= p1 || v.substr(0, p1) != key ||
                    std::to_string(p2 - p1 - 1) != v.substr(p2 + 1))
                    ++bad;
            }
        }
    };
    std::vector<std::thread> ts;
    for (int i = 0; i < 4; ++i) ts.emplace_back(worker, i);
    for (auto &t : ts) t.join();
    assert_int_equal(bad.load(), 0);
}

}  // namespace

#define BACKEND_TESTS(setup)                                                           \
    {                                                                                  \
        cmocka_unit_test_setup_teardown(test_kind, setup, teardown),                   \
        cmocka_unit_test_setup_teardown(test_set_get_roundtrip, setup, teardown),      \
        cmocka_unit_test_setup_teardown(test_miss_leaves_output_untouched, setup, teardown), \
        cmocka_unit_test_setup_teardown(test_delete_exists, setup, teardown),          \
        cmocka_unit_test_setup_teardown(test_ttl, setup, teardown),                    \
        cmocka_unit_test_setup_teardown(test_invalid_ttl, setup, teardown),            \
        cmocka_unit_test_setup_teardown(test_batches, setup, teardown),                \
        cmocka_unit_test_setup_teardown(test_clear, setup, teardown),                  \
        cmocka_unit_test_setup_teardown(test_locks, setup, teardown),                  \
        cmocka_unit_test_setup_teardown(test_lock_expiry, setup, teardown),            \
        cmocka_unit_test_setup_teardown(test_health, setup, teardown),                 \
        cmocka_unit_test_setup_teardown(test_deadline_passed, setup, teardown),        \
        cmocka_unit_test_setup_teardown(test_threads, setup, teardown),                \
    }

int main() {
    const struct CMUnitTest memory_tests[] = BACKEND_TESTS(setup_memory);
    const struct CMUnitTest file_tests[] = BACKEND_TESTS(setup_file);
    int failed = cmocka_run_group_tests_name("memory backend", memory_tests, nullptr, nullptr);
    failed += cmocka_run_group_tests_name("file backend", file_tests, nullptr, nullptr);
    return failed;
}
