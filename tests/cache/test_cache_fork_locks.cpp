// fork() and the cache's own locks (issue 12; white-box: drives
// cachekit::cache::Cache and holds its locks through CacheTestAccess).
//  - A child forked while another parent thread holds one of the cache's
//    locks (a key stripe, the refresh or load claim table, the ordering
//    log's namespace table) does not inherit it held: fork() waits for the
//    holder (the cache is in the fork registry), and the child's calls on
//    that key and namespace complete at once. Before, the child blocked on
//    the lock forever (its alarm turns that into a failure).
//  - A busy parent (another thread putting, reading, loading under the
//    memory backend's cross-process lock, invalidating): every child works.
//  - The cache's locks are taken before its L1's: a thread holding a stripe
//    while it takes an L1 lock (as every store does) does not deadlock a
//    fork. Run in a child process so a deadlock is bounded.
// The children report by exit status.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "cache/cache.hpp"
#include "l1/l1_cache.hpp"
#include "l2/memory_backend.hpp"
#include "util/buffer.hpp"
#include "cache_test_util.hpp"
#include "../redis/bounded_child.hpp"

namespace cachekit::cache {
// The locks a Cache owns, for the tests below.
struct CacheTestAccess {
    static std::mutex &stripe(Cache &c, std::string_view key) { return c.stripe(l1::L1Cache::hash_key(key)); }
    static RefreshClaims &refresh_claims(Cache &c) { return c.claims_; }
    static RefreshClaims &load_claims(Cache &c) { return c.load_claims_; }
    static InvalidationLog &log(Cache &c) { return c.log_; }
};
}  // namespace cachekit::cache

namespace {

using cachekit::Buffer;
using cachekit::cache::Cache;
using cachekit::cache::CacheConfig;
using cachekit::cache::CacheTestAccess;
using cachekit::cache::LoadResult;
using namespace std::chrono_literals;

const std::string kNs = "forklocks";
const std::string kKey = ct::shaped_key(kNs, "held");
// How long the parent thread keeps its lock once it holds it: the fork
// starts well within it (before the fix the child inherited it held).
constexpr auto kHold = 300ms;
// The child's calls take milliseconds; a child that waits for a lock
// nobody will release is killed by its alarm.
constexpr unsigned kChildAlarmSeconds = 10;

std::unique_ptr<Cache> new_cache() {
    CacheConfig c;
    c.backend = cachekit::l2::open_memory();
    c.l1.sweep_interval_ms = 0;  // no sweeper thread to start again in the child
    c.load_timeout = 20s;
    return std::make_unique<Cache>(std::move(c));
}

// Waits for the child and fails the test unless it exited with 0.
void expect_child_ok(pid_t pid) {
    assert_true(pid > 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status)) fail_msg("the child was killed by signal %d (blocked on a lock?)", WTERMSIG(status));
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0) fail_msg("the child failed its check %d", WEXITSTATUS(status));
}

// The child's part: every kind of call on the key and its namespace. Exit
// codes name the first that failed (a lock it blocks on: killed by the alarm).
int child_uses_the_key(Cache &cache) {
    alarm(kChildAlarmSeconds);
    try {
        const std::string v1 = ct::mp_str("child's v1"), v2 = ct::mp_str("child's v2");
        Buffer out;
        if (cache.put(kNs, kKey, v1, std::nullopt) != CACHEKIT_OK) return 2;
        if (cache.get(kNs, kKey, out.get(), nullptr) != CACHEKIT_OK || out.view() != v1) return 3;
        cachekit::cache::Lookup info;
        if (cache.get(kNs, kKey, out.get(), &info) != CACHEKIT_OK || out.view() != v1) return 4;
        if (cache.invalidate(kNs, kKey) != CACHEKIT_OK) return 5;
        auto loader = [&](LoadResult &r) {
            r.has_value = true;
            r.value = v2;
            return 0;
        };
        if (cache.get_or_load(kNs, kKey, std::nullopt, loader, out.get(), nullptr) != CACHEKIT_OK ||
            out.view() != v2)
            return 6;
        if (cache.invalidate_namespace(kNs) != CACHEKIT_OK) return 7;
        if (cache.get(kNs, kKey, out.get(), nullptr) != CACHEKIT_ENOTFOUND) return 8;
        if (cache.clear() != CACHEKIT_OK) return 9;
        return 0;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "child: %s\n", e.what());
        return 10;
    }
}

// A parent thread takes a lock (`take`), holds it for kHold and gives it
// back (`give`); the main thread forks while it is held. The child runs
// child_uses_the_key. The holder is parked (not allocating) by the time the
// fork can proceed, so this runs under ASan too.
void fork_while_a_thread_holds(Cache &cache, const std::function<void()> &take, const std::function<void()> &give) {
    ct::Gate held, done;
    std::thread holder([&] {
        take();
        held.open();
        std::this_thread::sleep_for(kHold);
        give();
        done.wait();
    });
    ct::JoinOnExit join(holder, [&] { done.open(); });
    assert_true(held.wait_for(10s));
    const pid_t pid = fork();
    if (pid == 0) _exit(child_uses_the_key(cache));
    done.open();
    expect_child_ok(pid);
}

#if defined(__SANITIZE_THREAD__)
// Under TSan the cache (a Locks::Many participant) does not hold its locks
// across fork() (util/fork_hooks.hpp), and forking a threaded process is
// unsupported there: as the other fork tests, these skip.
#define SKIP_UNDER_TSAN() skip()
#else
#define SKIP_UNDER_TSAN() (void)0
#endif

void test_child_uses_a_stripe_a_parent_thread_held(void **) {
    SKIP_UNDER_TSAN();
    auto cache = new_cache();
    std::mutex &m = CacheTestAccess::stripe(*cache, kKey);
    fork_while_a_thread_holds(*cache, [&] { m.lock(); }, [&] { m.unlock(); });
}

void test_child_uses_the_refresh_claims_a_parent_thread_held(void **) {
    SKIP_UNDER_TSAN();
    auto cache = new_cache();
    auto &claims = CacheTestAccess::refresh_claims(*cache);
    fork_while_a_thread_holds(*cache, [&] { claims.fork_prepare(); }, [&] { claims.fork_parent(); });
}

void test_child_uses_the_load_claims_a_parent_thread_held(void **) {
    SKIP_UNDER_TSAN();
    auto cache = new_cache();
    auto &claims = CacheTestAccess::load_claims(*cache);
    fork_while_a_thread_holds(*cache, [&] { claims.fork_prepare(); }, [&] { claims.fork_parent(); });
}

void test_child_uses_the_namespace_table_a_parent_thread_held(void **) {
    SKIP_UNDER_TSAN();
    auto cache = new_cache();
    auto &log = CacheTestAccess::log(*cache);
    fork_while_a_thread_holds(*cache, [&] { log.fork_prepare(); }, [&] { log.fork_parent(); });
}

// A busy parent: another thread keeps putting, reading, loading (with the
// memory backend's cross-process lock) and invalidating the key and its
// namespace while the main thread forks, round after round. Every lock of
// the cache and of the memory backend (whose map mutex no seam can hold)
// is taken often; each child's calls must complete. Timing decides which
// lock a fork meets, so this complements the tests above.
void test_children_of_a_busy_parent_work(void **) {
#if defined(__SANITIZE_THREAD__)
    skip();
#elif defined(__SANITIZE_ADDRESS__)
    skip();  // the busy thread allocates: GCC's ASan allocator is not locked around fork()
#endif
    CacheConfig config;
    config.backend = cachekit::l2::open_memory();
    config.l1.sweep_interval_ms = 0;
    config.load_timeout = 20s;
    config.cross_process_lock = true;
    config.lock_wait = 20s;
    config.swr = true;
    auto cache = std::make_unique<Cache>(std::move(config));
    std::atomic<bool> stop{false};
    std::thread busy([&] {
        const std::string v = ct::mp_str("busy");
        auto loader = [&](LoadResult &r) {
            r.has_value = true;
            r.value = v;
            return 0;
        };
        Buffer out;
        cachekit::cache::Lookup info;
        for (unsigned i = 0; !stop.load(std::memory_order_relaxed); ++i) {
            const std::string key = i % 2 ? kKey : ct::shaped_key(kNs, std::to_string(i % 16));
            try {
                cache->put(kNs, key, v, std::nullopt);
                cache->get(kNs, key, out.get(), &info);
                cache->invalidate(kNs, key);
                cache->get_or_load(kNs, key, std::nullopt, loader, out.get(), nullptr);
                if (i % 32 == 0) cache->invalidate_namespace(kNs);
            } catch (...) {  // the check is the children's
            }
        }
    });
    int status = 0;
    const int bad_round = cachekit::testing::first_failed_round(
        24, [](int) { std::this_thread::sleep_for(2ms); }, [&] { return child_uses_the_key(*cache); }, &status);
    stop = true;
    busy.join();
    if (bad_round >= 0)
        fail_msg("round %d: %s", bad_round, cachekit::testing::describe_child_status(status).c_str());
}

// In a process of its own (bounded by the caller): a thread holds the key's
// stripe and, after the fork began, takes the L1's lock of the key as a
// store does, then lets go. Exit 0 when the fork and that thread finished.
int stripe_then_l1_across_a_fork() {
    auto cache = new_cache();
    std::mutex &m = CacheTestAccess::stripe(*cache, kKey);
    ct::Gate held;
    std::thread holder([&] {
        m.lock();
        held.open();
        std::this_thread::sleep_for(kHold);  // fork() is under way by now
        cache->l1()->invalidate(kKey);       // an L1 lock, with the stripe held
        m.unlock();
    });
    held.wait();
    const pid_t pid = fork();
    if (pid == 0) _exit(0);
    holder.join();
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return 2;
    return 0;
}

void test_fork_takes_the_cache_before_its_l1(void **) {
    SKIP_UNDER_TSAN();
    const pid_t pid = fork();  // (this process has one thread here)
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(kChildAlarmSeconds);
        _exit(stripe_then_l1_across_a_fork());
    }
    expect_child_ok(pid);
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_child_uses_a_stripe_a_parent_thread_held),
        cmocka_unit_test(test_child_uses_the_refresh_claims_a_parent_thread_held),
        cmocka_unit_test(test_child_uses_the_load_claims_a_parent_thread_held),
        cmocka_unit_test(test_child_uses_the_namespace_table_a_parent_thread_held),
        cmocka_unit_test(test_children_of_a_busy_parent_work),
        cmocka_unit_test(test_fork_takes_the_cache_before_its_l1),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
