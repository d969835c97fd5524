// Issue 25: failures a user can see. A cache whose Redis is unreachable
// fails open (misses), and the log handler hears about it once:
//  - a refused port: one "backend_down" naming the URL and the refusal, one
//    "breaker_open" when the breaker opens; 1,000 more failing calls add no
//    line; cachekit_cache_health_get says breaker open, with the cause;
//  - a wrong password: one "backend_down" naming the AUTH failure, and the
//    password appears in no line and no health field;
//  - a paused server (SIGSTOP): one "backend_down" naming the timeout, then
//    one "breaker_open", then one "backend_recovered" after SIGCONT; a second pause and resume within
//    the minute add no line (a flapping backend must not flood the log);
//  - an unknown host: one "backend_down" naming the host and the resolver's
//    reason (gai_strerror of the test's own getaddrinfo), reads still work
//    as misses, and cachekit_cache_health_get says down with that cause;
//  - the L1 coherence feed (l1_coherence=tracking) killed with CLIENT KILL:
//    one "coherence_suspended" and then one "coherence_resumed", both
//    naming the server.
// Only outcomes are asserted; waits are bounded retries. Skips (exit 77)
// without redis-server.
#include <netdb.h>
#include <sys/socket.h>

#include <mutex>
#include <thread>
#include <vector>

#include "../redis/redis_server.hpp"
#include "cache_test_util.hpp"
#include "../redis/raw_redis.hpp"
#include "../redis/log_lines.hpp"

namespace {

using cachekit::testing::RedisServer;
using cachekit::testing::LogLine;
using cachekit::testing::record;
using cachekit::testing::take_lines;
using cachekit::testing::RedisServerOptions;
using ct::Buf;

const std::string kValue = ct::mp_str("computed");

int loader(cachekit_load *load, void *) { return cachekit_load_set_value(load, kValue.data(), kValue.size()); }

ct::CacheHandle cache_on(const std::string &url, uint32_t breaker_recovery_ms) {
    cachekit_cache_options o = ct::default_options();
    o.backend_url = url.c_str();
    o.l1 = CACHEKIT_OFF;  // every call reaches L2
    cachekit_backend_options bo = ct::quick_breaker_options(breaker_recovery_ms);
    o.backend_options = &bo;
    return ct::new_cache(&o);
}

// Fail-open: every call answers OK, whatever L2 does.
void call(cachekit_cache *c, const char *key = "k") {
    Buf out;
    const int rc = cachekit_cache_get_or_load(c, out.get(), nullptr, "logs", key, std::strlen(key), 60.0, &loader, nullptr);
    if (rc != CACHEKIT_OK) fail_msg("get_or_load -> %s: %s", cachekit_error_name(rc), cachekit_error_last_message());
}

cachekit_health health_of(cachekit_cache *c) {
    cachekit_health h = CACHEKIT_HEALTH_INIT;
    CT_OK(cachekit_cache_health_get(c, &h));
    return h;
}

void test_refused_port(void **) {
    take_lines();
    const std::string url = "redis://127.0.0.1:" + std::to_string(cachekit::testing::free_port());
    ct::CacheHandle c = cache_on(url, 60000);
    call(c.get());
    std::vector<LogLine> lines = take_lines();
    const LogLine *down = find(lines, "backend_down");
    if (count(lines, "backend_down") != 1 || !down) FAIL_SHOWING(lines, "want one backend_down");
    assert_int_equal(down->level, CACHEKIT_LOG_WARNING);
    if (!ct::contains(down->message, url + ": ") || !ct::contains(down->message, "refused"))
        fail_msg("backend_down does not name the URL and the cause: %s", down->message.c_str());
    for (int i = 0; i < 5; ++i) call(c.get());
    std::vector<LogLine> more = take_lines();
    lines.insert(lines.end(), more.begin(), more.end());
    if (count(lines, "breaker_open") != 1) FAIL_SHOWING(lines, "want one breaker_open");
    assert_true(ct::contains(find(lines, "breaker_open")->message, url));

    for (int i = 0; i < 1000; ++i) call(c.get(), i % 2 ? "a" : "b");
    std::vector<LogLine> flood = take_lines();
    if (!flood.empty()) FAIL_SHOWING(flood, "1,000 failing calls logged %zu more lines", flood.size());

    const cachekit_health h = health_of(c.get());
    assert_int_equal(h.state, CACHEKIT_HEALTH_BREAKER_OPEN);
    assert_string_equal(h.backend, url.c_str());
    if (!ct::contains(h.last_error, "refused")) fail_msg("last_error: %s", h.last_error);
    assert_true(h.last_error_at > 0);
    assert_true(h.since > 0);
    assert_true(h.consecutive_failures >= 3);
    assert_int_equal(h.coherence, CACHEKIT_COHERENCE_OFF);
}

void test_wrong_password(void **) {
    RedisServerOptions so;
    so.password = "right-one";
    RedisServer server(so);
    take_lines();
    const std::string url = "redis://:hunter2@127.0.0.1:" + std::to_string(server.port());
    const std::string shown = "redis://127.0.0.1:" + std::to_string(server.port());
    ct::CacheHandle c = cache_on(url, 60000);
    call(c.get());
    const std::vector<LogLine> lines = take_lines();
    const LogLine *down = find(lines, "backend_down");
    if (count(lines, "backend_down") != 1 || !down) FAIL_SHOWING(lines, "want one backend_down");
    if (!ct::contains(down->message, shown + ": ") || !ct::contains(down->message, "AUTH"))
        fail_msg("backend_down does not name the URL and the AUTH failure: %s", down->message.c_str());
    for (const LogLine &l : lines)
        if (ct::contains(l.message, "hunter2")) fail_msg("a line shows the password: %s", l.message.c_str());
    const cachekit_health h = health_of(c.get());
    assert_int_equal(h.state, CACHEKIT_HEALTH_DOWN);
    assert_string_equal(h.backend, shown.c_str());
    assert_false(ct::contains(h.last_error, "hunter2"));
}

// Calls until `event` was logged (true) or the patience ran out.
bool call_until(cachekit_cache *c, const char *event, std::vector<LogLine> &seen) {
    for (int i = 0; i < 600; ++i) {
        call(c);
        std::vector<LogLine> more = take_lines();
        seen.insert(seen.end(), more.begin(), more.end());
        if (find(more, event)) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
}

void test_paused_server(void **) {
    RedisServer server;
    take_lines();
    const std::string url = server.url();
    ct::CacheHandle c = cache_on(url, 300);
    call(c.get());
    call(c.get());
    std::vector<LogLine> seen = take_lines();
    if (!seen.empty()) FAIL_SHOWING(seen, "a healthy backend logged");
    assert_int_equal(health_of(c.get()).state, CACHEKIT_HEALTH_OK);

    server.pause();
    call(c.get());
    std::vector<LogLine> lines = take_lines();
    const LogLine *down = find(lines, "backend_down");
    if (count(lines, "backend_down") != 1 || !down) FAIL_SHOWING(lines, "want one backend_down");
    if (!ct::contains(down->message, "timed out")) fail_msg("backend_down does not name the timeout: %s", down->message.c_str());
    for (int i = 0; i < 4; ++i) call(c.get());
    server.resume();
    std::vector<LogLine> opened = take_lines();
    if (count(opened, "breaker_open") != 1 || count(opened, "backend_down") != 0)
        FAIL_SHOWING(opened, "want one breaker_open and no second backend_down");
    lines.insert(lines.end(), opened.begin(), opened.end());
    if (!call_until(c.get(), "backend_recovered", lines)) FAIL_SHOWING(lines, "no backend_recovered after SIGCONT");
    const LogLine *up = find(lines, "backend_recovered");
    assert_int_equal(up->level, CACHEKIT_LOG_INFO);
    assert_true(ct::contains(up->message, url));
    assert_int_equal(health_of(c.get()).state, CACHEKIT_HEALTH_OK);

    // Flapping: down and back again within the minute logs nothing more.
    server.pause();
    for (int i = 0; i < 5; ++i) call(c.get());
    server.resume();
    std::vector<LogLine> again;
    for (int i = 0; i < 600 && health_of(c.get()).state != CACHEKIT_HEALTH_OK; ++i) {
        call(c.get());
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    again = take_lines();
    assert_int_equal(health_of(c.get()).state, CACHEKIT_HEALTH_OK);
    if (!again.empty()) FAIL_SHOWING(again, "a second outage within the minute logged %zu lines", again.size());
}

void test_unknown_host(void **) {
    take_lines();
    const char *host = "no-such-host.invalid";
    // What the resolver says of it here (no DNS at all, or NXDOMAIN).
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *found = nullptr;
    const int gai = getaddrinfo(host, "6379", &hints, &found);
    if (found) freeaddrinfo(found);
    if (gai == 0) skip();  // this machine resolves it: nothing to check
    const std::string reason = gai_strerror(gai);
    const std::string url = std::string("redis://") + host + ":6379";
    ct::CacheHandle c = cache_on(url, 60000);
    Buf out;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    for (int i = 0; i < 3; ++i) {  // fail-open: misses, and get_or_load computes
        assert_int_equal(cachekit_cache_get(c.get(), out.get(), &info, "logs", "k", 1), CACHEKIT_ENOTFOUND);
        call(c.get());
    }
    const std::vector<LogLine> lines = take_lines();
    const LogLine *down = find(lines, "backend_down");
    if (count(lines, "backend_down") != 1 || !down) FAIL_SHOWING(lines, "want one backend_down");
    assert_int_equal(down->level, CACHEKIT_LOG_WARNING);
    if (!ct::contains(down->message, url + ": ") || !ct::contains(down->message, reason))
        FAIL_SHOWING(lines, "backend_down does not name the host and the resolver's reason (%s)", reason.c_str());
    const cachekit_health h = health_of(c.get());
    if (h.state == CACHEKIT_HEALTH_OK) fail_msg("health says ok");
    assert_string_equal(h.backend, url.c_str());
    if (!ct::contains(h.last_error, reason)) fail_msg("last_error: %s", h.last_error);
    assert_true(h.last_error_at > 0);
}

bool eventually_id(cachekit::testing::RawRedis &raw, std::string &id, const std::string &not_this) {
    return ct::eventually([&] { return !(id = raw.feed_client_id()).empty() && id != not_this; }, 10s, 5ms);
}

void test_coherence_feed_killed(void **) {
    RedisServer server;
    cachekit::testing::RawRedis raw(server.port());
    take_lines();
    const std::string url = server.url();
    cachekit_cache_options o = ct::default_options();
    const std::string with_feed = url + "?l1_coherence=tracking";
    o.backend_url = with_feed.c_str();
    ct::CacheHandle c = ct::new_cache(&o);
    call(c.get());
    std::string id;
    assert_true(eventually_id(raw, id, ""));
    std::vector<LogLine> lines = take_lines();
    if (!lines.empty()) FAIL_SHOWING(lines, "a live feed logged");
    raw.text({"CLIENT", "KILL", "ID", id});
    std::string again;
    assert_true(eventually_id(raw, again, id));  // a new feed connection
    assert_true(ct::eventually(
        [&] {
            std::vector<LogLine> more = take_lines();
            lines.insert(lines.end(), more.begin(), more.end());
            return count(lines, "coherence_resumed") > 0;
        },
        10s, 5ms));
    std::this_thread::sleep_for(50ms);  // room for a stray second line to show
    std::vector<LogLine> more = take_lines();
    lines.insert(lines.end(), more.begin(), more.end());
    if (count(lines, "coherence_suspended") != 1 || count(lines, "coherence_resumed") != 1 || lines.size() != 2)
        FAIL_SHOWING(lines, "want one coherence_suspended and one coherence_resumed");
    const LogLine &lost = lines[0], &back = lines[1];
    if (lost.event != "coherence_suspended") FAIL_SHOWING(lines, "suspended comes first");
    assert_int_equal(lost.level, CACHEKIT_LOG_WARNING);
    assert_int_equal(back.level, CACHEKIT_LOG_INFO);
    if (!ct::contains(lost.message, url + ": ") || !ct::contains(back.message, url + ": "))
        FAIL_SHOWING(lines, "the lines do not name the server %s", url.c_str());
    assert_int_equal(health_of(c.get()).coherence, CACHEKIT_COHERENCE_LIVE);
}

}  // namespace

int main() {
    RedisServer::require_or_skip("test_cache_failure_log");
    cachekit_set_log_handler(&record, nullptr);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_port),
        cmocka_unit_test(test_wrong_password),
        cmocka_unit_test(test_paused_server),
        cmocka_unit_test(test_unknown_host),
        cmocka_unit_test(test_coherence_feed_killed),
    };
    return cmocka_run_group_tests_name("cache_failure_log", tests, nullptr, nullptr);
}
