// One key's trouble stays that key's: planted files and directories, an entry
// held under flock by another process, foreign lock files, and a cache too
// full for one write. Through the resilience layer (a 5 s command timeout, a
// breaker opening after 5 failures): the faulty key's calls return within a
// bound far below the timeout, under fail-open they are misses or skipped
// writes (counted), the breaker stays closed, other keys keep working, and
// nothing planted is followed or removed.
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>

#include "l2/file/file_backend.hpp"
#include "l2/file/file_format.hpp"
#include "l2/key_fault.hpp"
#include "l2/resilience/resilient_backend.hpp"

#include "l2_test_support.hpp"

using namespace cachekit;
using namespace cachekit::l2;
using namespace std::chrono_literals;
using l2test::code_of;
using l2test::soon;
using l2test::TempDir;

namespace {

constexpr auto kBound = 1000ms;  // a faulty key's call, against a 5000 ms command timeout

std::unique_ptr<ResilientBackend> open_resilient(const std::string &dir, bool fail_open, FileConfig c = {}) {
    c.directory = dir;
    ResilienceConfig r;
    r.fail_open = fail_open;
    r.command_timeout = 5000ms;
    r.breaker.failure_threshold = 5;
    return std::make_unique<ResilientBackend>(open_file(c), r);
}

template <class Fn>
std::chrono::milliseconds timed(Fn &&fn) {
    auto t0 = SteadyClock::now();
    fn();
    return std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - t0);
}

bool get(Backend &b, std::string_view key) {
    Buffer out;
    return b.get(key, out.get(), soon());
}

// Other keys still work and the breaker never opened.
void assert_backend_healthy(ResilientBackend &b) {
    for (int i = 0; i < 3; ++i) {
        std::string k = "other" + std::to_string(i);
        b.set(k, "v", std::nullopt, soon());
        assert_true(get(b, k));
    }
    ResilienceStats s = b.stats();
    assert_int_equal(s.breaker_state, CACHEKIT_BREAKER_CLOSED);
    assert_int_equal(s.breaker_opened, 0);
    assert_int_equal(s.failures, 0);
}

void test_directory_under_entry_name(void **) {
    TempDir t;
    auto b = open_resilient(t.path(), true);
    std::string planted = t / filefmt::entry_name("bad");
    assert_int_equal(::mkdir(planted.c_str(), 0700), 0);
    for (int i = 0; i < 20; ++i) {  // 4x the breaker's threshold
        auto took = timed([&] { b->set("bad", "v", std::nullopt, soon()); });  // skipped, not an error
        assert_true(took < kBound);
        assert_false(get(*b, "bad"));
    }
    assert_int_equal(b->stats().skipped_writes, 20);
    assert_backend_healthy(*b);
    assert_int_equal(l2test::count_temps(t.path()), 0);

    // Fail-closed: the key's error is returned, still not fed to the breaker.
    auto closed = open_resilient(t.path(), false);
    for (int i = 0; i < 10; ++i) {
        try {
            closed->set("bad", "v", std::nullopt, soon());
            fail_msg("a write over a planted directory succeeded");
        } catch (const KeyFault &e) {
            assert_int_equal(e.code(), CACHEKIT_EBACKEND);
        }
    }
    assert_backend_healthy(*closed);
    struct stat st;
    assert_int_equal(::lstat(planted.c_str(), &st), 0);  // left alone
    assert_true(S_ISDIR(st.st_mode));
}

// A child process that holds `path` under flock(LOCK_EX) until this process
// closes its end of a pipe: on destruction, or at exit when a failed
// assertion (a longjmp) skipped the destructor, so no child outlives the test.
struct LockHolder {
    pid_t pid = -1;
    int hold = -1;  // the write end the child waits on
    explicit LockHolder(const std::string &path) {
        int ready[2], until[2];
        assert_int_equal(::pipe(ready), 0);
        assert_int_equal(::pipe2(until, O_CLOEXEC), 0);
        std::fflush(stdout);
        pid = ::fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            ::close(until[1]);
            int fd = ::open(path.c_str(), O_RDONLY);
            char ok = fd >= 0 && ::flock(fd, LOCK_EX) == 0 ? 1 : 0;
            (void)!::write(ready[1], &ok, 1);
            char byte;
            while (::read(until[0], &byte, 1) < 0 && errno == EINTR) {
            }
            ::_exit(0);
        }
        ::close(ready[1]);
        ::close(until[0]);
        hold = until[1];
        char ok = 0;
        assert_int_equal(::read(ready[0], &ok, 1), 1);
        ::close(ready[0]);
        assert_int_equal(ok, 1);
    }
    ~LockHolder() {
        ::close(hold);
        ::waitpid(pid, nullptr, 0);
    }
};

void test_entry_flocked_by_another_process(void **) {
    TempDir t;
    auto b = open_resilient(t.path(), true);
    b->set("held", "v1", std::nullopt, soon());
    {
        LockHolder holder(t / filefmt::entry_name("held"));
        for (int i = 0; i < 10; ++i) {  // 2x the breaker's threshold
            bool found = true;
            auto took = timed([&] { found = get(*b, "held"); });
            assert_false(found);  // a miss, not a 5 s wait
            assert_true(took < kBound);
            took = timed([&] { b->set("held", "v2", std::nullopt, soon()); });
            assert_true(took < kBound);
        }
        ResilienceStats s = b->stats();
        assert_int_equal(s.degraded_reads, 10);
        assert_int_equal(s.skipped_writes, 10);
        assert_backend_healthy(*b);

        auto closed = open_resilient(t.path(), false);
        assert_int_equal(code_of([&] { get(*closed, "held"); }), CACHEKIT_EBUSY);
        assert_int_equal(closed->stats().breaker_opened, 0);
    }
    Buffer out;
    assert_true(b->get("held", out.get(), soon()));  // the holder is gone: the key works again
    assert_true(out.view() == "v1");
}

// Writes that need eviction and clear keep working with `planted` in place
// of the old directory lock file, which is never followed or removed.
void check_dir_lock_planted(const std::string &dir, const std::string &planted) {
    FileConfig c;
    c.max_entries = 10;  // eviction on most writes
    auto b = open_resilient(dir, false, c);
    for (int i = 0; i < 40; ++i) {
        auto took = timed([&] { b->set("e" + std::to_string(i), "v", std::nullopt, soon()); });
        assert_true(took < kBound);
    }
    assert_true(l2test::count_entries(dir) <= 9);
    assert_true(get(*b, "e39"));
    assert_true(b->clear("", soon()) > 0);
    assert_int_equal(l2test::count_entries(dir), 0);
    assert_backend_healthy(*b);
    assert_true(l2test::file_exists(planted));
}

void test_dir_lock_file_is_a_directory(void **) {
    TempDir t;
    std::string planted = t / ".cachekit.lock";
    assert_int_equal(::mkdir(planted.c_str(), 0700), 0);
    check_dir_lock_planted(t.path(), planted);
    struct stat st;
    assert_int_equal(::lstat(planted.c_str(), &st), 0);
    assert_true(S_ISDIR(st.st_mode));
}

void test_dir_lock_file_is_a_symlink(void **) {
    TempDir t, elsewhere;
    std::string target = elsewhere / "victim";
    l2test::write_file(target, "keep me");
    std::string planted = t / ".cachekit.lock";
    assert_int_equal(::symlink(target.c_str(), planted.c_str()), 0);
    check_dir_lock_planted(t.path(), planted);
    struct stat st;
    assert_int_equal(::lstat(planted.c_str(), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_true(l2test::read_file(target) == "keep me");
}

void test_named_lock_file_planted(void **) {
    TempDir t, elsewhere;
    auto b = open_resilient(t.path(), true);
    std::string as_dir = t / filefmt::lock_name("dir-lock");
    std::string as_link = t / filefmt::lock_name("link-lock");
    std::string target = elsewhere / "victim";
    l2test::write_file(target, "keep me");
    assert_int_equal(::mkdir(as_dir.c_str(), 0700), 0);
    assert_int_equal(::symlink(target.c_str(), as_link.c_str()), 0);
    for (const char *name : {"dir-lock", "link-lock"}) {
        for (int i = 0; i < 8; ++i) {
            int code = 0;
            auto took = timed([&] {
                try {
                    b->lock(name, 10s, soon());
                } catch (const KeyFault &e) {
                    code = e.code();
                }
            });
            assert_int_equal(code, CACHEKIT_EBACKEND);
            assert_true(took < kBound);
            assert_int_equal(code_of([&] { b->unlock(name, "token", soon()); }), CACHEKIT_EBACKEND);
        }
    }
    auto token = b->lock("fine", 10s, soon());  // other locks work
    assert_true(token.has_value());
    assert_true(b->unlock("fine", *token, soon()));
    assert_backend_healthy(*b);
    struct stat st;
    assert_int_equal(::lstat(as_dir.c_str(), &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(::lstat(as_link.c_str(), &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_true(l2test::read_file(target) == "keep me");
}

// A full cache is a skipped write under fail-open, never an error; only a
// value over max_value_bytes is CACHEKIT_ETOOBIG.
void test_full_cache_skips_the_write(void **) {
    TempDir t;
    FileConfig c;
    c.max_bytes = 10000;
    c.max_value_bytes = 20000;
    auto open_b = open_resilient(t.path(), true, c);
    auto closed = open_resilient(t.path(), false, c);
    // 14 + 9500 bytes can never fit in 90 % of max_bytes: skipped, nothing evicted.
    open_b->set("small", "v", std::nullopt, soon());
    open_b->set("huge", std::string(9500, 'x'), std::nullopt, soon());
    assert_int_equal(open_b->stats().skipped_writes, 1);
    assert_true(get(*open_b, "small"));
    assert_false(get(*open_b, "huge"));
    assert_int_equal(code_of([&] { closed->set("huge", std::string(9500, 'x'), std::nullopt, soon()); }),
                     CACHEKIT_EBUSY);
    // Over max_value_bytes: the caller's error, under fail-open too.
    assert_int_equal(code_of([&] { open_b->set("over", std::string(20001, 'x'), std::nullopt, soon()); }),
                     CACHEKIT_ETOOBIG);

    // Every entry held by long readers: eviction cannot make room.
    FileConfig c2;
    c2.max_entries = 5;  // writes stop at 4
    TempDir t2;
    auto b2 = open_resilient(t2.path(), true, c2);
    std::vector<int> fds;
    for (int i = 0; i < 4; ++i) {
        std::string k = "h" + std::to_string(i);
        b2->set(k, "v", std::nullopt, soon());
        int fd = ::open((t2 / filefmt::entry_name(k)).c_str(), O_RDONLY);
        assert_true(fd >= 0 && ::flock(fd, LOCK_SH) == 0);
        fds.push_back(fd);
    }
    for (int i = 0; i < 10; ++i) b2->set("more" + std::to_string(i), "v", std::nullopt, soon());
    assert_int_equal(b2->stats().skipped_writes, 10);
    assert_int_equal(b2->stats().breaker_opened, 0);
    for (int fd : fds) ::close(fd);
    b2->set("more", "v", std::nullopt, soon());  // room again
    assert_true(get(*b2, "more"));
    assert_int_equal(b2->stats().skipped_writes, 10);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_directory_under_entry_name),
        cmocka_unit_test(test_entry_flocked_by_another_process),
        cmocka_unit_test(test_dir_lock_file_is_a_directory),
        cmocka_unit_test(test_dir_lock_file_is_a_symlink),
        cmocka_unit_test(test_named_lock_file_planted),
        cmocka_unit_test(test_full_cache_skips_the_write),
    };
    return cmocka_run_group_tests_name("file backend: per-key faults", tests, nullptr, nullptr);
}
