// The lock-free read path (epoch-protected lookups, see src/l1/epoch.hpp):
// readers racing a writer that rehashes, replaces and removes must never
// miss a key that is there all along, never see a value of another key, and
// every removed entry must be freed once the readers are gone. Meant to run
// clean under TSan and ASan (a read of a freed entry would be reported).
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>

#include <sys/wait.h>
#include <unistd.h>
#include <thread>
#include <vector>

#include "l1/l1_cache.hpp"
#include "util/buffer.hpp"

#include "cmocka_cpp.hpp"  // last: it defines a fail() macro

using namespace cachekit;
using namespace cachekit::l1;

namespace {

constexpr int kReaders = 3;

Options one_shard() {
    Options o;
    o.shards = 1;  // every write lands where the readers look
    o.sweep_interval_ms = 0;
    o.max_bytes = uint64_t(256) << 20;
    return o;
}

std::string key_of(int i) { return "key:" + std::to_string(i); }

// Keys put before the readers start are never removed, while the writer adds
// 50,000 more (a dozen rehashes of the only shard): each lookup must hit.
void test_no_false_miss_during_rehash(void **) {
    L1Cache c(one_shard());
    constexpr int kStable = 64, kFresh = 50000;
    for (int i = 0; i < kStable; ++i) c.put("", key_of(i), "stable:" + key_of(i), 0);
    std::atomic<bool> done{false};
    std::atomic<uint64_t> misses{0}, wrong{0}, reads{0};
    std::atomic<int> started{0};
    std::vector<std::thread> readers;
    for (int r = 0; r < kReaders; ++r)
        readers.emplace_back([&, r] {
            Buffer out;
            uint64_t n = 0;
            for (int i = r; n == 0 || !done.load(std::memory_order_acquire); i = (i + 7) % kStable, ++n) {
                if (!c.get(key_of(i), out.get())) misses.fetch_add(1);
                else if (out.view() != "stable:" + key_of(i)) wrong.fetch_add(1);
                if (n == 0) started.fetch_add(1);
            }
            reads.fetch_add(n);
        });
    // Under a serialising tool (valgrind) readers may not run unless waited for.
    while (started.load() < kReaders) std::this_thread::yield();
    for (int i = 0; i < kFresh; ++i) c.put("", "fresh:" + std::to_string(i), "x", 0);
    done.store(true, std::memory_order_release);
    for (auto &t : readers) t.join();
    assert_int_equal(misses.load(), 0);
    assert_int_equal(wrong.load(), 0);
    assert_true(reads.load() > 0);
    Stats st = c.stats();
    assert_int_equal(st.hits, reads.load());
    assert_int_equal(st.entries, kStable + kFresh);
}

// The writer replaces, invalidates and re-puts a small key set as fast as it
// can; readers check that a hit always names its own key.
void test_replace_and_remove_under_readers(void **) {
    L1Cache c(one_shard());
    constexpr int kKeys = 32, kRounds = 20000;
    std::atomic<bool> done{false};
    std::atomic<uint64_t> wrong{0}, hits{0}, gets{0};
    std::vector<std::thread> readers;
    for (int r = 0; r < kReaders; ++r)
        readers.emplace_back([&, r] {
            Buffer out;
            uint64_t h = 0, g = 0;
            for (int i = r; !done.load(std::memory_order_acquire); i = (i + 5) % kKeys, ++g) {
                std::string k = key_of(i);
                if (c.get(k, out.get())) {
                    ++h;
                    if (out.view().substr(0, k.size() + 1) != k + "=") wrong.fetch_add(1);
                }
            }
            hits.fetch_add(h);
            gets.fetch_add(g);
        });
    for (int n = 0; n < kRounds; ++n) {
        std::string k = key_of(n % kKeys);
        if (n % 10 == 9) c.invalidate(k);
        else c.put("", k, k + "=" + std::to_string(n) + std::string(size_t(n % 200), 'v'), 0);
        if (n % 5000 == 4999) c.clear();
    }
    done.store(true, std::memory_order_release);
    for (auto &t : readers) t.join();
    assert_int_equal(wrong.load(), 0);
    Stats st = c.stats();
    assert_int_equal(st.hits, hits.load());
    assert_int_equal(st.hits + st.misses, gets.load());
    // With the readers gone, one sweep frees everything retired.
    c.sweep();
    assert_int_equal(c.stats().retired_bytes, 0);
}

// Hits on the lock-free path are counted exactly across threads.
void test_hit_counts_exact(void **) {
    Options o = one_shard();
    o.shards = 0;
    L1Cache c(o);
    constexpr int kThreads = 8, kGets = 20000;
    for (int i = 0; i < 100; ++i) c.put("", key_of(i), "v", 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            Buffer out;
            for (int i = 0; i < kGets; ++i) {
                bool hit = c.get(key_of((i + t) % 100), out.get());
                (void)hit;
            }
        });
    for (auto &t : threads) t.join();
    assert_int_equal(c.stats().hits, uint64_t(kThreads) * kGets);
    assert_int_equal(c.stats().misses, 0);
}

// Removed entries wait while a reader is pinned in an older epoch and are
// freed once it leaves.
void test_retired_entries_wait_for_pinned_reader(void **) {
    L1Cache c(one_shard());
    c.put("", "k", std::string(1000, 'a'), 0);
    {
        EpochGuard reader;  // as if a lookup were in progress on this thread
        EpochDomain::global().try_advance();
        c.invalidate("k");
        c.sweep();
        assert_true(c.stats().retired_bytes >= entry_charge(1, 1000));
    }
    c.sweep();
    assert_int_equal(c.stats().retired_bytes, 0);
    assert_int_equal(c.stats().bytes, 0);
}

// A thread pinned at fork() time does not exist in the child: its slot must
// not hold the child's epoch back for ever.
void test_fork_forgets_pinned_threads(void **) {
    L1Cache c(one_shard());
    c.put("", "k", std::string(1000, 'a'), 0);
    std::mutex mu;
    std::condition_variable cv;
    bool pinned = false, release = false;
    std::thread holder([&] {
        EpochGuard reader;
        std::unique_lock lock(mu);
        pinned = true;
        cv.notify_all();
        cv.wait(lock, [&] { return release; });
    });
    {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return pinned; });
    }
    // The child answers through a pipe: a memory checker may set its exit code.
    int answer[2];
    assert_int_equal(pipe(answer), 0);
    pid_t child = fork();
    if (child == 0) {
        EpochDomain::global().try_advance();
        c.invalidate("k");
        c.sweep();
        c.sweep();
        char freed = c.stats().retired_bytes == 0 ? 'y' : 'n';
        _exit(write(answer[1], &freed, 1) == 1 ? 0 : 1);
    }
    close(answer[1]);
    char freed = 0;
    ssize_t got = read(answer[0], &freed, 1);
    close(answer[0]);
    int status = 0;
    assert_int_equal(waitpid(child, &status, 0), child);
    {
        std::lock_guard lock(mu);
        release = true;
    }
    cv.notify_all();
    holder.join();
    assert_true(WIFEXITED(status));
    assert_int_equal(got, 1);
    assert_int_equal(freed, 'y');
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_false_miss_during_rehash),
        cmocka_unit_test(test_replace_and_remove_under_readers),
        cmocka_unit_test(test_hit_counts_exact),
        cmocka_unit_test(test_retired_entries_wait_for_pinned_reader),
        cmocka_unit_test(test_fork_forgets_pinned_threads),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
