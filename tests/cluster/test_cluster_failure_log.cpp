// Issue 25, failures a user can see, on a Redis Cluster (public C API only):
// one primary of a real 3-primary cluster is paused (SIGSTOP) while the
// other two keep answering. The log handler hears one "backend_down" naming
// that node (host:port), at most one "breaker_open" naming it, and, once the
// node is resumed, one "backend_recovered" naming it; the keys of the live
// nodes, served all along, add no line (no cluster-level down/recovered
// flapping), and neither do health pings (cachekit_backend_health) while
// the node is down. cachekit_backend_health_get says down, naming the node
// and its cause, then ok again.
//
// The cluster's node timeout is long (20 s): the paused primary is never
// failed over while the test runs, so it comes back as the same primary.
// Only outcomes are asserted; waits are bounded retries. Skips (77)
// without redis-server / redis-cli.
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cachekit/cachekit.h"
#include "cluster_harness.hpp"
#include "log_lines.hpp"

#include <csetjmp>
#include <cstdarg>
#include <cstddef>

extern "C" {
#include <cmocka.h>
}

namespace {

using cachekit::testing::RedisCluster;
using cachekit::testing::LogLine;
using cachekit::testing::record;
using cachekit::testing::take_lines;

bool contains(const std::string &haystack, const std::string &needle) { return haystack.find(needle) != std::string::npos; }

constexpr int kKeys = 60;  // spread over the three primaries

std::string key_of(int i) { return "failure-log-" + std::to_string(i); }

// One round: a read of every key (fail-open: a hit, or a miss for the
// paused node's keys) and a health ping. How many reads were hits.
int round_of_calls(cachekit_backend *b) {
    int hits = 0;
    for (int i = 0; i < kKeys; ++i) {
        const std::string key = key_of(i);
        cachekit_buf out = CACHEKIT_BUF_INIT;
        const int rc = cachekit_backend_get(b, &out, key.data(), key.size());
        if (rc != CACHEKIT_OK && rc != CACHEKIT_ENOTFOUND)
            fail_msg("get %s -> %s: %s", key.c_str(), cachekit_error_name(rc), cachekit_error_last_message());
        hits += rc == CACHEKIT_OK;
        cachekit_buf_dispose(&out);
    }
    double ms = 0;
    (void)cachekit_backend_health(b, &ms);  // fails while a primary is down: never degraded
    return hits;
}

cachekit_health health_of(cachekit_backend *b) {
    cachekit_health h = CACHEKIT_HEALTH_INIT;
    assert_int_equal(cachekit_backend_health_get(b, &h), CACHEKIT_OK);
    return h;
}

void test_one_node_down(void **) {
    RedisCluster cluster(20000);
    const std::string url = cluster.url();
    cachekit_backend_options bo = CACHEKIT_BACKEND_OPTIONS_INIT;
    bo.command_timeout_ms = 200;
    bo.connect_timeout_ms = 200;
    bo.breaker_failures = 3;
    bo.breaker_recovery_ms = 300;
    bo.breaker_half_open_calls = 1;
    bo.breaker_successes = 1;
    bo.pool_size = 2;
    cachekit_backend *b = nullptr;
    assert_int_equal(cachekit_backend_open(&b, url.c_str(), &bo), CACHEKIT_OK);
    for (int i = 0; i < kKeys; ++i) {
        const std::string key = key_of(i);
        assert_int_equal(cachekit_backend_set(b, key.data(), key.size(), "v", 1, 600.0), CACHEKIT_OK);
    }
    assert_int_equal(round_of_calls(b), kKeys);
    std::vector<LogLine> healthy = take_lines();
    if (!healthy.empty()) FAIL_SHOWING(healthy, "a healthy cluster logged");
    assert_int_equal(health_of(b).state, CACHEKIT_HEALTH_OK);

    // The primary serving slot 0 (CLUSTER SHARDS): a node's CLUSTER NODES may still call a fresh replica a master.
    const int paused = cluster.owner_of(0);
    const std::string node = "127.0.0.1:" + std::to_string(paused);
    cluster.server_on(paused).pause();
    std::vector<LogLine> lines;
    int hits = 0;
    for (int round = 0; round < 8; ++round) {
        hits = round_of_calls(b);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // past the breaker's recovery: trials
    }
    std::vector<LogLine> more = take_lines();
    lines.insert(lines.end(), more.begin(), more.end());
    if (hits == 0 || hits == kKeys) FAIL_SHOWING(lines, "%d of %d reads hit: want the live nodes' keys only", hits, kKeys);
    const cachekit_health down = health_of(b);
    if (count(lines, "backend_down") != 1 || count(lines, "backend_recovered") != 0 || count(lines, "breaker_open") > 1)
        FAIL_SHOWING(lines, "want one backend_down (at most one breaker_open) while %s is paused", node.c_str());
    for (const LogLine &l : lines)
        if (!contains(l.message, node + ": ")) FAIL_SHOWING(lines, "a line does not name the paused node %s", node.c_str());
    for (const LogLine &l : lines)
        if (l.event == "backend_down" && (l.level != CACHEKIT_LOG_WARNING || !contains(l.message, "timed out")))
            FAIL_SHOWING(lines, "backend_down is no warning naming the timeout");
    if (down.state != CACHEKIT_HEALTH_DOWN || !contains(down.last_error, node) || down.last_error_at <= 0 || down.since <= 0)
        FAIL_SHOWING(lines, "health while %s is paused: state %d, last_error \"%s\"", node.c_str(), down.state,
                     down.last_error);
    assert_string_equal(down.backend, url.c_str());

    cluster.server_on(paused).resume();
    bool back = false;
    for (int round = 0; round < 100 && !back; ++round) {
        back = round_of_calls(b) == kKeys;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    assert_true(back);
    for (int round = 0; round < 3; ++round) round_of_calls(b);
    more = take_lines();
    if (count(more, "backend_recovered") != 1 || more.size() != 1)
        FAIL_SHOWING(more, "want one backend_recovered once %s answers again", node.c_str());
    assert_int_equal(more[0].level, CACHEKIT_LOG_INFO);
    if (!contains(more[0].message, node + ": ")) FAIL_SHOWING(more, "backend_recovered does not name %s", node.c_str());
    const cachekit_health up = health_of(b);
    if (up.state != CACHEKIT_HEALTH_OK) fail_msg("health after the resume: state %d (%s)", up.state, up.last_error);
    cachekit_backend_free(b);
}

}  // namespace

int main() {
    RedisCluster::require_or_skip("test_cluster_failure_log");
    cachekit_set_log_handler(&record, nullptr);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_node_down),
    };
    return cmocka_run_group_tests_name("cluster_failure_log", tests, nullptr, nullptr);
}
