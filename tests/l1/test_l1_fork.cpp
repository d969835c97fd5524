// fork() (issue 12): the sweeper thread does not exist in a child; the L1
// starts it again there (lazily, on its next call), and the locks other
// parent threads held at the fork do not deadlock the child. Each child
// reports by exit status; alarm() turns a deadlock into a failure.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "l1/l1_cache.hpp"
#include "util/buffer.hpp"

#include "../redis/bounded_child.hpp"
#include "cmocka_cpp.hpp"  // last: it defines a fail() macro

using namespace cachekit;
using namespace cachekit::l1;

namespace {

constexpr uint64_t kMs = 1000000;

// The child's part: exit codes name the first thing that went wrong.
int child_checks(L1Cache &c, uint64_t expirations_before_puts) {
    alarm(20);
    // The 100 entries put just before the fork expire and are swept without
    // being read (stats() is a call, not a read of them).
    const uint64_t want = expirations_before_puts + 100;
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (c.stats().expirations < want && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (c.stats().expirations < want) return 2;
    // And the child's own.
    for (int i = 0; i < 50; ++i) c.put("", "child" + std::to_string(i), "v", 1 * kMs);
    uint64_t before = c.stats().expirations;
    until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (c.stats().expirations < before + 50 && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (c.stats().expirations < before + 50) return 3;
    // Normal use: every shard (locks included) works.
    Buffer out;
    for (int i = 0; i < 2000; ++i) {
        std::string k = "use" + std::to_string(i);
        if (c.put("n" + std::to_string(i % 7), k, k, 0) != PutResult::Stored) return 4;
        if (!c.get(k, out.get()) || out.view() != k) return 5;
    }
    c.invalidate_namespace("n1");
    if (c.get("use1", nullptr)) return 6;
    c.clear();
    if (c.stats().entries != 0) return 7;
    return 0;
}

void test_child_sweeps_and_works(void **) {
#if defined(__SANITIZE_THREAD__)
    skip();  // TSan does not support starting threads in the child of a multi-threaded process
#elif defined(__SANITIZE_ADDRESS__)
    // GCC 12's ASan allocator is not locked around fork(): a child forked while
    // the busy thread allocates can stop in it (seen once in CI as SIGALRM).
    // glibc's malloc is, so the plain build and valgrind run this test.
    skip();
#endif
    Options o;
    o.max_bytes = 4u << 20;
    o.sweep_interval_ms = 2;
    o.shards = 8;
    L1Cache c(o);
    // Another thread keeps the locks busy while we fork.
    std::atomic<bool> stop{false};
    std::thread busy([&] {
        Buffer out;
        for (unsigned i = 0; !stop.load(); ++i) {
            std::string k = "busy" + std::to_string(i % 512);
            c.put("b" + std::to_string(i % 5), k, k, 0);
            c.get(k, out.get());
            if (i % 64 == 0) c.invalidate_namespace("b" + std::to_string(i % 5));
        }
    });
    // Failures are collected and asserted after the join (an assertion
    // unwinds by longjmp, which would leave the thread running).
    uint64_t expirations_before = 0;
    auto fill = [&](int round) {
        // Read before the puts: some may expire in the parent before the
        // fork (a loaded machine), and the child's copy counts those too.
        expirations_before = c.stats().expirations;
        for (int i = 0; i < 100; ++i) c.put("", "r" + std::to_string(round) + ":" + std::to_string(i), "v", 20 * kMs);
    };
    int status = 0;
    const int bad_round = cachekit::testing::first_failed_round(
        8, fill, [&] { return child_checks(c, expirations_before); }, &status);
    stop = true;
    busy.join();
    if (bad_round >= 0)
        fail_msg("round %d: %s", bad_round, cachekit::testing::describe_child_status(status).c_str());
    // The parent's sweeper still runs.
    c.put("", "last", "v", 1 * kMs);
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (c.get("last", nullptr) && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    assert_false(c.get("last", nullptr));
}

// A child that never calls into the cache can still destroy it (the
// parent's thread is not joined there).
void test_child_destroys_untouched_cache(void **) {
    Options o;
    o.sweep_interval_ms = 2;
    auto *c = new L1Cache(o);
    c->put("", "k", "v", 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(10);
        delete c;
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    delete c;
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_child_sweeps_and_works),
        cmocka_unit_test(test_child_destroys_untouched_cache),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
