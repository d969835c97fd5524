// Two processes (fork) writing and reading the same directory at once, on
// overlapping keys, with eviction active: no torn reads (every hit is a
// complete value some writer wrote for that key), no leftover temp files,
// and the entry count within the limit. Four processes of three threads each
// writing large values into a small byte limit: the directory's real size
// (every file, temp files included) sampled throughout never passes the
// documented bound.
#include <algorithm>
#include <atomic>
#include <random>
#include <set>
#include <thread>
#include <utility>

#include <sys/wait.h>

#include "l2/file/file_backend.hpp"
#include "l2/file/file_backend_options.hpp"
#include "l2/key_fault.hpp"

#include "l2_test_support.hpp"

using namespace cachekit;
using namespace cachekit::l2;
using l2test::soon;

namespace {

constexpr int kOps = 2000;
constexpr int kKeys = 150;
constexpr uint64_t kMaxEntries = 100;

// key | writer | seq | filler | length of everything before the last '|'
std::string make_value(const std::string &key, int writer, int seq, size_t filler) {
    std::string v = key + "|" + std::to_string(writer) + "|" + std::to_string(seq) + "|" +
                    std::string(filler, char('a' + (seq + writer) % 26));
    return v + "|" + std::to_string(v.size());
}

bool valid_value(const std::string &key, const std::string &v) {
    size_t last = v.rfind('|');
    if (last == std::string::npos) return false;
    if (std::to_string(last) != v.substr(last + 1)) return false;
    if (v.compare(0, key.size() + 1, key + "|") != 0) return false;
    size_t filler_start = v.rfind('|', last - 1) + 1;
    for (size_t i = filler_start; i < last; ++i)
        if (v[i] != v[filler_start]) return false;
    return true;
}

// The child: returns the number of problems seen.
int child(const std::string &dir, int writer) {
    FileConfig c;
    c.directory = dir;
    c.max_entries = kMaxEntries;
    auto b = open_file(c, FileOptions{});
    std::mt19937 rng(unsigned(writer) * 104729u + 1);
    int bad = 0, hits = 0;
    size_t max_seen = 0;
    for (int i = 0; i < kOps; ++i) {
        if (i % 25 == 0) {  // sample the entry count while both run
            size_t n = l2test::count_entries(dir);
            max_seen = std::max(max_seen, n);
            if (n > kMaxEntries) {
                std::printf("writer %d: %zu entries (max_entries %llu)\n", writer, n,
                            (unsigned long long)kMaxEntries);
                ++bad;
            }
        }
        std::string key = "key-" + std::to_string(rng() % kKeys);
        try {
            switch (rng() % 4) {
            case 0:
            case 1: {
                Buffer out;
                if (b->get(key, out.get(), soon())) {
                    ++hits;
                    if (!valid_value(key, std::string(out.view()))) {
                        std::printf("writer %d: torn or foreign value for %s\n", writer, key.c_str());
                        ++bad;
                    }
                }
                break;
            }
            case 2:
                b->set(key, make_value(key, writer, i, rng() % 8192), std::nullopt, soon());
                break;
            default:
                if (rng() % 4 == 0) b->del(key, soon());
                else b->set(key, make_value(key, writer, i, rng() % 64), std::nullopt, soon());
                break;
            }
        } catch (const std::exception &e) {
            std::printf("writer %d: op %d failed: %s\n", writer, i, e.what());
            ++bad;
        }
    }
    std::printf("writer %d: %d ops, %d hits, at most %zu entries seen, %d problems\n", writer, kOps, hits,
                max_seen, bad);
    std::fflush(stdout);
    return bad;
}

void test_two_processes(void **) {
    l2test::TempDir t;
    std::string dir = t.path() + "/shared";
    pid_t pids[2];
    for (int w = 0; w < 2; ++w) {
        std::fflush(stdout);
        pids[w] = ::fork();
        assert_true(pids[w] >= 0);
        if (pids[w] == 0) ::_exit(child(dir, w) == 0 ? 0 : 1);
    }
    for (pid_t p : pids) {
        int status = 0;
        assert_int_equal(::waitpid(p, &status, 0), p);
        assert_true(WIFEXITED(status));
        assert_int_equal(WEXITSTATUS(status), 0);
    }
    assert_int_equal(l2test::count_temps(dir), 0);
    size_t n = l2test::count_entries(dir);
    std::printf("entries left: %zu (max_entries %llu)\n", n, (unsigned long long)kMaxEntries);
    assert_true(n > 0);
    assert_true(n <= kMaxEntries);

    // Everything left is readable and whole.
    FileConfig c;
    c.directory = dir;
    c.max_entries = kMaxEntries;
    auto b = open_file(c, FileOptions{});
    for (int k = 0; k < kKeys; ++k) {
        std::string key = "key-" + std::to_string(k);
        Buffer out;
        if (b->get(key, out.get(), soon()) && !valid_value(key, std::string(out.view())))
            fail_msg("final read of %s is not a whole value", key.c_str());
    }
}

constexpr uint64_t kMaxBytes = 1 << 20;
constexpr int kWriters = 4;
constexpr int kThreads = 3;
constexpr int kWrites = 120;

// The directory's real size: the sizes of all its regular files, each inode
// once (a temp file renamed during the listing is not counted twice).
uint64_t dir_bytes(const std::string &dir) {
    std::set<std::pair<dev_t, ino_t>> seen;
    uint64_t total = 0;
    for (const auto &name : l2test::list_dir(dir)) {
        struct stat st;
        if (::lstat((dir + "/" + name).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
        if (seen.insert({st.st_dev, st.st_ino}).second) total += uint64_t(st.st_size);
    }
    return total;
}

// One writer process: kThreads threads writing mostly large values (4 % to
// 15 % of the limit) and some small ones; a full cache or a busy entry is a
// KeyFault (skipped), anything else is a problem.
int large_writer(const std::string &dir, int writer) {
    FileConfig c;
    c.directory = dir;
    c.max_bytes = kMaxBytes;
    auto b = open_file(c, FileOptions{});
    std::atomic<int> bad{0}, skipped{0};
    std::vector<std::thread> threads;
    for (int th = 0; th < kThreads; ++th) {
        threads.emplace_back([&, th] {
            std::mt19937 rng(unsigned(writer * 31 + th) * 7919u + 3);
            for (int i = 0; i < kWrites; ++i) {
                std::string key = "big-" + std::to_string(rng() % 40);
                size_t size = rng() % 5 == 0 ? 100 + rng() % 15000 : 40000 + rng() % 120000;
                try {
                    b->set(key, std::string(size, char('a' + i % 26)), std::nullopt, soon());
                    if (rng() % 4 == 0) {
                        Buffer out;
                        b->get(key, out.get(), soon());
                    }
                } catch (const KeyFault &) {
                    ++skipped;
                } catch (const std::exception &e) {
                    std::printf("writer %d.%d: %s\n", writer, th, e.what());
                    ++bad;
                }
            }
        });
    }
    for (auto &t : threads) t.join();
    std::printf("writer %d: %d writes skipped\n", writer, skipped.load());
    std::fflush(stdout);
    return bad.load();
}

void test_byte_limit_with_large_values(void **) {
    l2test::TempDir t;
    std::string dir = t.path() + "/shared";
    FileConfig c;
    c.directory = dir;
    c.max_bytes = kMaxBytes;
    open_file(c, FileOptions{});  // creates the directory
    pid_t pids[kWriters];
    for (int w = 0; w < kWriters; ++w) {
        std::fflush(stdout);
        pids[w] = ::fork();
        assert_true(pids[w] >= 0);
        if (pids[w] == 0) ::_exit(large_writer(dir, w) == 0 ? 0 : 1);
    }
    // docs/l2.md: at most 90 % + (P - 1) x 5 % of max_bytes with P writer processes.
    const uint64_t bound = kMaxBytes / 100 * (90 + (kWriters - 1) * 5);
    uint64_t peak = 0, samples = 0;
    int running = kWriters;
    bool ok = true;
    while (running > 0) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        uint64_t now = dir_bytes(dir);
        peak = std::max(peak, now);
        ++samples;
        for (pid_t &p : pids) {
            if (p <= 0) continue;
            int status = 0;
            if (::waitpid(p, &status, WNOHANG) == p) {
                ok = ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
                p = 0;
                --running;
            }
        }
    }
    uint64_t after = dir_bytes(dir);
    std::printf("peak %llu bytes (%.1f %% of max_bytes) over %llu samples; after %llu; bound %llu\n",
                (unsigned long long)peak, 100.0 * double(peak) / double(kMaxBytes), (unsigned long long)samples,
                (unsigned long long)after, (unsigned long long)bound);
    assert_true(ok);
    assert_true(peak <= bound);
    assert_true(after <= bound);
    assert_int_equal(l2test::count_temps(dir), 0);
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_processes),
        cmocka_unit_test(test_byte_limit_with_large_values),
    };
    return cmocka_run_group_tests_name("file backend, several processes", tests, nullptr, nullptr);
}
