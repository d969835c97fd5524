// Two processes (fork) writing and reading the same directory at once, on
// overlapping keys, with eviction active: no torn reads (every hit is a
// complete value some writer wrote for that key), no leftover temp files,
// and the entry count within the limit.
#include <algorithm>
#include <random>

#include <sys/wait.h>

#include "l2/file_backend.hpp"
#include "l2/file_backend_options.hpp"

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

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_two_processes),
    };
    return cmocka_run_group_tests_name("file backend, two processes", tests, nullptr, nullptr);
}
