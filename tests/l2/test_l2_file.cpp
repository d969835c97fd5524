// File backend specifics: permissions, directory policy, corrupt and
// truncated files, planted symlinks, limits and eviction, TTL through the
// clock hook, orphaned temp files, cross-instance locks.
#include <algorithm>
#include <atomic>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/time.h>

#include "l2/file/file_backend.hpp"
#include "l2/file/file_backend_options.hpp"
#include "l2/file/file_format.hpp"

#include "l2_test_support.hpp"

using namespace cachekit;
using namespace cachekit::l2;
using namespace std::chrono_literals;
using l2test::soon;
using l2test::TempDir;

namespace {

using SysClock = std::chrono::system_clock;

// A settable wall clock for the file backend.
struct ManualWall {
    std::shared_ptr<std::atomic<int64_t>> ms = std::make_shared<std::atomic<int64_t>>(0);
    std::function<SysClock::time_point()> fn() const {
        auto p = ms;
        return [p] { return SysClock::time_point(std::chrono::milliseconds(p->load())); };
    }
    void set_s(double s) { ms->store(int64_t(s * 1000)); }
};

std::unique_ptr<Backend> open_at(const std::string &dir, FileConfig c = {}, FileOptions o = {}) {
    c.directory = dir;
    return open_file(c, o);
}

bool has(Backend &b, std::string_view key, std::string *value = nullptr) {
    Buffer out;
    bool found = b.get(key, out.get(), soon());
    if (found && value) *value = std::string(out.view());
    return found;
}

mode_t mode_of(const std::string &path) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) return 0;
    return st.st_mode & 07777;
}

void test_permissions(void **) {
    TempDir t;
    mode_t old = ::umask(0);  // the backend must not depend on the umask
    std::string dir = t.path() + "/a/b/cache";
    auto b = open_at(dir);
    b->set("k", "v", std::nullopt, soon());
    ::umask(old);
    assert_int_equal(mode_of(t.path() + "/a"), 0700);
    assert_int_equal(mode_of(t.path() + "/a/b"), 0700);
    assert_int_equal(mode_of(dir), 0700);
    std::string file = dir + "/" + filefmt::entry_name("k");
    assert_true(l2test::file_exists(file));
    assert_int_equal(mode_of(file), 0600);
    auto token = b->lock("L", 10s, soon());
    assert_true(token.has_value());
    assert_int_equal(mode_of(dir + "/" + filefmt::lock_name("L")), 0600);
}

void test_directory_policy(void **) {
    TempDir t;
    std::string real = t.path() + "/real";
    open_at(real);
    std::string link = t.path() + "/link";
    assert_int_equal(::symlink(real.c_str(), link.c_str()), 0);
    assert_int_equal(l2test::code_of([&] { open_at(link); }), CACHEKIT_EINVAL);

    std::string open_dir = t.path() + "/wide";
    assert_int_equal(::mkdir(open_dir.c_str(), 0700), 0);
    assert_int_equal(::chmod(open_dir.c_str(), 0777), 0);
    assert_int_equal(l2test::code_of([&] { open_at(open_dir); }), CACHEKIT_EINVAL);
    assert_int_equal(::chmod(open_dir.c_str(), 0755), 0);  // readable by others: accepted
    open_at(open_dir);

    std::string file = t.path() + "/plain";
    l2test::write_file(file, "x");
    assert_int_equal(l2test::code_of([&] { open_at(file); }), CACHEKIT_EINVAL);

    FileConfig zero;
    zero.max_entries = 0;
    assert_int_equal(l2test::code_of([&] { open_at(t.path() + "/z", zero); }), CACHEKIT_EINVAL);
}

void test_corrupt_files(void **) {
    TempDir t;
    auto b = open_at(t.path());
    std::string path = t / filefmt::entry_name("key");
    std::string good = std::string("CK\x01\x00\x00\x00", 6) + std::string(8, '\0') + "payload";
    const std::vector<std::pair<const char *, std::string>> cases = {
        {"empty", ""},
        {"5 bytes", good.substr(0, 5)},
        {"13 bytes", good.substr(0, 13)},
        {"bad magic", "XK" + good.substr(2)},
        {"bad version", std::string("CK\x02", 3) + good.substr(3)},
    };
    for (const auto &[name, bytes] : cases) {
        l2test::write_file(path, bytes);
        std::printf("corrupt case: %s\n", name);
        assert_false(has(*b, "key"));
        assert_false(l2test::file_exists(path));  // garbage is removed
        l2test::write_file(path, bytes);
        assert_false(b->exists("key", soon()));
        l2test::write_file(path, bytes);
        assert_false(b->ttl("key", soon()).has_value());
        l2test::write_file(path, bytes);
        assert_false(b->del("key", soon()));
        assert_false(l2test::file_exists(path));
    }
    // The good header reads back; a header-only file is an empty value.
    l2test::write_file(path, good);
    std::string v;
    assert_true(has(*b, "key", &v));
    assert_true(v == "payload");
    l2test::write_file(path, good.substr(0, 14));
    assert_true(has(*b, "key", &v));
    assert_true(v.empty());
}

void test_future_format_preserved(void **) {
    TempDir t;
    auto b = open_at(t.path());
    std::string path = t / filefmt::entry_name("key");
    auto h = filefmt::encode_header(0, 0, 0x0004);
    std::string bytes = std::string(h.data(), h.size()) + "future";
    l2test::write_file(path, bytes);
    assert_false(has(*b, "key"));
    assert_false(b->exists("key", soon()));
    assert_true(l2test::read_file(path) == bytes);  // kept, untouched
    b->set("key", "now", std::nullopt, soon());     // a write replaces it
    std::string v;
    assert_true(has(*b, "key", &v) && v == "now");
}

void test_symlink_planted(void **) {
    TempDir t;
    std::string dir = t.path() + "/cache";
    auto b = open_at(dir);
    std::string outside = t.path() + "/outside.txt";
    auto h = filefmt::encode_header(0);
    std::string secret = std::string(h.data(), h.size()) + "secret";  // even a valid entry
    l2test::write_file(outside, secret);
    std::string entry = dir + "/" + filefmt::entry_name("victim");
    assert_int_equal(::symlink(outside.c_str(), entry.c_str()), 0);

    assert_false(has(*b, "victim"));
    assert_false(b->exists("victim", soon()));
    assert_false(b->ttl("victim", soon()).has_value());
    b->set("victim", "new value", std::nullopt, soon());
    assert_true(l2test::read_file(outside) == secret);  // never written through
    struct stat st;
    assert_int_equal(::lstat(entry.c_str(), &st), 0);
    assert_true(S_ISREG(st.st_mode));  // the link itself was replaced
    std::string v;
    assert_true(has(*b, "victim", &v) && v == "new value");

    // delete of a planted link removes the link, not the target.
    assert_true(b->del("victim", soon()));
    assert_int_equal(::symlink(outside.c_str(), entry.c_str()), 0);
    assert_false(b->del("victim", soon()));
    assert_false(l2test::file_exists(entry));
    assert_true(l2test::read_file(outside) == secret);

    // A symlinked lock file is neither followed nor removed: that lock fails.
    std::string lock = dir + "/" + filefmt::lock_name("L");
    assert_int_equal(::symlink(outside.c_str(), lock.c_str()), 0);
    assert_int_equal(l2test::code_of([&] { b->lock("L", 10s, soon()); }), CACHEKIT_EBACKEND);
    assert_true(l2test::read_file(outside) == secret);
    assert_int_equal(::lstat(lock.c_str(), &st), 0);
    assert_true(S_ISLNK(st.st_mode));

    // A FIFO under an entry name does not block a read.
    std::string fifo = dir + "/" + filefmt::entry_name("fifo");
    assert_int_equal(::mkfifo(fifo.c_str(), 0600), 0);
    assert_false(has(*b, "fifo"));
}

void test_oversize(void **) {
    TempDir t;
    FileConfig c;
    c.max_value_bytes = 100;
    c.max_bytes = 1000;
    auto b = open_at(t.path(), c);
    b->set("ok", std::string(100, 'x'), std::nullopt, soon());
    assert_int_equal(l2test::code_of([&] { b->set("big", std::string(101, 'x'), std::nullopt, soon()); }),
                     CACHEKIT_ETOOBIG);
    assert_false(has(*b, "big"));
    assert_int_equal(l2test::count_temps(t.path()), 0);

    FileConfig c2;
    c2.max_bytes = 100;
    TempDir t2;
    auto b2 = open_at(t2.path(), c2);
    // 14-byte header + 90 > 90 % of 100: can never fit. A full cache, not
    // the caller's error: this write's KeyFault (skipped under fail-open).
    assert_int_equal(l2test::code_of([&] { b2->set("k", std::string(90, 'x'), std::nullopt, soon()); }),
                     CACHEKIT_EBUSY);
}

void test_evict_entries(void **) {
    TempDir t;
    FileConfig c;
    c.max_entries = 10;  // evict past 9, down to 7
    auto b = open_at(t.path(), c);
    for (int i = 0; i < 30; ++i) {
        b->set("e" + std::to_string(i), "v", std::nullopt, soon());
        size_t n = l2test::count_entries(t.path());
        if (n > 9) fail_msg("%zu entries after write %d (limit 10, trigger 9)", n, i);
    }
    size_t n = l2test::count_entries(t.path());
    assert_true(n >= 7 && n <= 9);
    assert_true(has(*b, "e29"));  // the newest survive
    assert_true(has(*b, "e28"));
    assert_false(has(*b, "e0"));  // the oldest went first
}

void test_evict_expired_first(void **) {
    TempDir t;
    ManualWall wall;
    wall.set_s(1000000);
    FileConfig c;
    c.max_entries = 10;
    FileOptions o;
    o.now = wall.fn();
    auto b = open_at(t.path(), c, o);
    for (int i = 0; i < 3; ++i) b->set("p" + std::to_string(i), "v", std::nullopt, soon());  // oldest
    std::this_thread::sleep_for(20ms);
    for (int i = 0; i < 5; ++i) b->set("t" + std::to_string(i), "v", 10s, soon());
    wall.set_s(1000020);  // the t* entries expired
    b->set("n0", "v", std::nullopt, soon());  // 9 entries: no eviction yet
    assert_int_equal(l2test::count_entries(t.path()), 9);
    b->set("n1", "v", std::nullopt, soon());  // 10 > 9: evict
    assert_int_equal(l2test::count_entries(t.path()), 5);
    for (int i = 0; i < 3; ++i) assert_true(has(*b, "p" + std::to_string(i)));  // survived: expired went first
}

void test_evict_bytes(void **) {
    TempDir t;
    FileConfig c;
    c.max_bytes = 1000;  // entries are 114 bytes: evict past 900, down to 700
    auto b = open_at(t.path(), c);
    for (int i = 0; i < 20; ++i) {
        b->set("b" + std::to_string(i), std::string(100, 'x'), std::nullopt, soon());
        size_t n = l2test::count_entries(t.path());
        if (n * 114 > 900) fail_msg("%zu entries (%zu bytes) after write %d", n, n * 114, i);
    }
    assert_true(has(*b, "b19"));
    assert_false(has(*b, "b0"));
}

void test_full_of_busy_entries(void **) {
    TempDir t;
    FileConfig c;
    c.max_entries = 4;  // writes stop at 3
    c.lock_timeout = 50ms;
    auto b = open_at(t.path(), c);
    for (int i = 0; i < 3; ++i) b->set("h" + std::to_string(i), "v", std::nullopt, soon());
    // Hold every entry (as a long reader would): eviction cannot remove any.
    std::vector<int> fds;
    for (int i = 0; i < 3; ++i) {
        int fd = ::open((t / filefmt::entry_name("h" + std::to_string(i))).c_str(), O_RDONLY);
        assert_true(fd >= 0);
        assert_int_equal(::flock(fd, LOCK_SH), 0);
        fds.push_back(fd);
    }
    assert_int_equal(l2test::code_of([&] { b->set("h3", "v", std::nullopt, soon()); }), CACHEKIT_EBUSY);
    assert_int_equal(l2test::code_of([&] { b->set("h4", "v", std::nullopt, soon()); }), CACHEKIT_EBUSY);
    for (int fd : fds) ::close(fd);
    b->set("h4", "v", std::nullopt, soon());  // now eviction can make room (down to 70 %)
    assert_int_equal(l2test::count_entries(t.path()), 2);
}

// incr/add/touch on expired entries (the clock hook): an expired entry is
// missing for incr and touch, and add replaces it; incr keeps the header's
// expiry, a symlink planted under the name is replaced by add.
void test_counter_ops_and_expiry(void **) {
    TempDir t;
    ManualWall wall;
    wall.set_s(2000000000);
    FileOptions o;
    o.now = wall.fn();
    auto b = open_at(t.path(), {}, o);
    b->set("n", "5", 10s, soon());
    assert_int_equal(*b->incr("n", 2, soon()), 7);
    std::string bytes = l2test::read_file(t / filefmt::entry_name("n"));
    filefmt::Header h;
    assert_true(filefmt::classify(bytes.data(), bytes.size(), 0, &h) == filefmt::Verdict::Payload);
    assert_int_equal(h.expiry, 2000000010u);  // kept
    assert_true(bytes.substr(filefmt::kHeaderSize) == "7");
    wall.set_s(2000000011);
    assert_false(b->incr("n", 1, soon()).has_value());
    assert_false(b->touch("n", cachekit::l2::Ttl{10s}, soon()));
    b->set("a", "old", 10s, soon());
    wall.set_s(2000000030);
    assert_true(b->add("a", "new", std::nullopt, soon()));
    std::string value;
    assert_true(has(*b, "a", &value) && value == "new");
    assert_false(b->add("a", "newer", std::nullopt, soon()));
    assert_true(b->touch("a", cachekit::l2::Ttl{5s}, soon()));
    auto left = b->ttl("a", soon());
    assert_true(left && *left && (*left)->count() == 5000);
    const std::string planted = t / filefmt::entry_name("s");
    assert_int_equal(::symlink("/etc/passwd", planted.c_str()), 0);
    assert_true(b->add("s", "mine", std::nullopt, soon()));
    assert_true(has(*b, "s", &value) && value == "mine");
    assert_int_equal(b->delete_many({"a", "s", "none"}, soon()), 2);
}

void test_ttl_clock_hook(void **) {
    TempDir t;
    ManualWall wall;
    wall.set_s(2000000000);
    FileOptions o;
    o.now = wall.fn();
    auto b = open_at(t.path(), {}, o);
    b->set("k", "v", 10s, soon());
    // Header expiry = now + 10 s.
    std::string bytes = l2test::read_file(t / filefmt::entry_name("k"));
    filefmt::Header h;
    assert_true(filefmt::classify(bytes.data(), bytes.size(), 0, &h) == filefmt::Verdict::Payload);
    assert_int_equal(h.expiry, 2000000010u);
    auto left = b->ttl("k", soon());
    assert_true(left && *left && (*left)->count() == 10000);
    wall.set_s(2000000009.999);
    assert_true(has(*b, "k"));
    wall.set_s(2000000010);
    assert_false(has(*b, "k"));  // expiry reached
    assert_false(b->exists("k", soon()));

    // Sub-second TTLs and fractional "now" round the expiry down, as the
    // reference's int(time() + ttl): an entry never outlives its TTL.
    wall.set_s(2000000000.5);
    b->set("r", "v", 1ms, soon());
    bytes = l2test::read_file(t / filefmt::entry_name("r"));
    filefmt::classify(bytes.data(), bytes.size(), 0, &h);
    assert_int_equal(h.expiry, 2000000000u);
    assert_false(has(*b, "r"));  // 1 ms from .5 s: gone within its second
    b->set("r", "v", 600ms, soon());
    bytes = l2test::read_file(t / filefmt::entry_name("r"));
    filefmt::classify(bytes.data(), bytes.size(), 0, &h);
    assert_int_equal(h.expiry, 2000000001u);
    wall.set_s(2000000000.999);
    assert_true(has(*b, "r"));
    wall.set_s(2000000001);
    assert_false(has(*b, "r"));  // 0.5 s after its write, short of its 0.6 s TTL, never after it

    // At most 10 years.
    b->set("ten", "v", std::chrono::seconds(filefmt::kMaxTtlSeconds), soon());
    assert_int_equal(
        l2test::code_of([&] { b->set("eleven", "v", std::chrono::seconds(filefmt::kMaxTtlSeconds + 1), soon()); }),
        CACHEKIT_EINVAL);
}

void test_orphan_temp_cleanup(void **) {
    TempDir t;
    std::string old_tmp = t / (filefmt::entry_name("x") + ".tmp.1234.5678");
    std::string new_tmp = t / (filefmt::entry_name("y") + ".tmp.abcdef");
    l2test::write_file(old_tmp, "partial");
    l2test::write_file(new_tmp, "in flight");
    struct timeval tv[2];
    ::gettimeofday(&tv[0], nullptr);
    tv[0].tv_sec -= 120;
    tv[1] = tv[0];
    assert_int_equal(::utimes(old_tmp.c_str(), tv), 0);
    auto b = open_at(t.path());
    assert_false(l2test::file_exists(old_tmp));
    assert_true(l2test::file_exists(new_tmp));
}

void test_two_instances_share(void **) {
    TempDir t;
    auto a = open_at(t.path());
    auto b = open_at(t.path());
    a->set("shared", "from a", std::nullopt, soon());
    std::string v;
    assert_true(has(*b, "shared", &v) && v == "from a");
    auto token = a->lock("L", 10s, soon());
    assert_true(token.has_value());
    assert_false(b->lock("L", 10s, soon()).has_value());
    assert_false(b->unlock("L", "forged", soon()));
    assert_true(a->unlock("L", *token, soon()));
    assert_true(b->lock("L", 10s, soon()).has_value());
    assert_int_equal(b->clear("", soon()), 1);
    assert_false(has(*a, "shared"));
}

void test_lock_contention_threads(void **) {
    TempDir t;
    auto b = open_at(t.path());
    std::atomic<int> holders{0}, max_holders{0}, acquired{0};
    auto worker = [&] {
        for (int i = 0; i < 200; ++i) {
            auto tok = b->lock("mutex", 5s, soon());
            if (!tok) continue;
            ++acquired;
            int h = ++holders;
            int m = max_holders.load();
            while (h > m && !max_holders.compare_exchange_weak(m, h)) {
            }
            --holders;
            if (!b->unlock("mutex", *tok, soon())) ++holders;  // would be a bug: keep it visible
        }
    };
    std::vector<std::thread> ts;
    for (int i = 0; i < 4; ++i) ts.emplace_back(worker);
    for (auto &th : ts) th.join();
    assert_int_equal(max_holders.load(), 1);
    assert_int_equal(holders.load(), 0);
    assert_true(acquired.load() > 0);
}

void test_health_probe(void **) {
    TempDir t;
    auto b = open_at(t.path());
    Health h = b->health(soon());
    assert_true(h.ok);
    assert_int_equal(l2test::count_temps(t.path()), 0);
    TempDir::remove_tree(t.path());
    h = b->health(soon());
    assert_false(h.ok);
}

// clear() and evicting writers in one process take the estimate mutex and
// the directory lock in the same order: no stall, no spurious ETIMEOUT.
void test_clear_races_eviction(void **) {
    TempDir t;
    FileConfig c;
    c.max_entries = 20;
    c.lock_timeout = 2s;
    auto b = open_at(t.path(), c);
    std::atomic<int> errors{0};
    std::atomic<bool> stop{false};
    auto writer = [&](int id) {
        for (int i = 0; i < 300; ++i) {
            try {
                b->set("w" + std::to_string(id) + "-" + std::to_string(i % 40), "v", std::nullopt, soon());
            } catch (const std::exception &e) {
                std::printf("writer: %s\n", e.what());
                ++errors;
            }
        }
    };
    std::thread clearer([&] {
        while (!stop.load()) {
            try {
                b->clear("", soon());
            } catch (const std::exception &e) {
                std::printf("clear: %s\n", e.what());
                ++errors;
            }
        }
    });
    auto t0 = SteadyClock::now();
    std::thread w1(writer, 1), w2(writer, 2);
    w1.join();
    w2.join();
    stop = true;
    clearer.join();
    assert_int_equal(errors.load(), 0);
    assert_true(SteadyClock::now() - t0 < 20s);
    assert_true(l2test::count_entries(t.path()) <= 20);
    assert_int_equal(l2test::count_temps(t.path()), 0);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_permissions),
        cmocka_unit_test(test_directory_policy),
        cmocka_unit_test(test_corrupt_files),
        cmocka_unit_test(test_future_format_preserved),
        cmocka_unit_test(test_symlink_planted),
        cmocka_unit_test(test_oversize),
        cmocka_unit_test(test_evict_entries),
        cmocka_unit_test(test_evict_expired_first),
        cmocka_unit_test(test_evict_bytes),
        cmocka_unit_test(test_full_of_busy_entries),
        cmocka_unit_test(test_ttl_clock_hook),
        cmocka_unit_test(test_counter_ops_and_expiry),
        cmocka_unit_test(test_orphan_temp_cleanup),
        cmocka_unit_test(test_two_instances_share),
        cmocka_unit_test(test_lock_contention_threads),
        cmocka_unit_test(test_health_probe),
        cmocka_unit_test(test_clear_races_eviction),
    };
    return cmocka_run_group_tests_name("file backend", tests, nullptr, nullptr);
}
