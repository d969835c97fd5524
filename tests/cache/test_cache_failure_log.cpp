// Issue 25: failures a user can see. A cache whose Redis is unreachable
// fails open (misses), and the log handler hears about it once:
//  - a refused port: one "backend_down" naming the URL and the refusal, one
//    "breaker_open" when the breaker opens; 1,000 more failing calls add no
//    line; cachekit_cache_health_get says breaker open, with the cause;
//  - a wrong password: one "backend_down" naming the AUTH failure, and the
//    password appears in no line and no health field;
//  - a paused server (SIGSTOP): one "backend_down" naming the timeout, then
//    one "breaker_open", then one "backend_recovered" after SIGCONT; a second pause and resume within
//    the minute add no line (a flapping backend must not flood the log).
// Only outcomes are asserted; waits are bounded retries. Skips (exit 77)
// without redis-server.
#include <mutex>
#include <thread>
#include <vector>

#include "../redis/redis_server.hpp"
#include "cache_test_util.hpp"

namespace {

using cachekit::testing::RedisServer;
using cachekit::testing::RedisServerOptions;
using ct::Buf;

struct Line {
    int level;
    std::string event;
    std::string message;
};

std::mutex g_mu;
std::vector<Line> g_lines;

void record(int level, const char *event, const char *message, void *) {
    std::lock_guard lock(g_mu);
    g_lines.push_back({level, event, message});
}

std::vector<Line> take_lines() {
    std::lock_guard lock(g_mu);
    std::vector<Line> out;
    out.swap(g_lines);
    return out;
}

size_t count(const std::vector<Line> &lines, const char *event) {
    size_t n = 0;
    for (const Line &l : lines) n += l.event == event;
    return n;
}

const Line *find(const std::vector<Line> &lines, const char *event) {
    for (const Line &l : lines)
        if (l.event == event) return &l;
    return nullptr;
}

void print(const std::vector<Line> &lines) {
    for (const Line &l : lines) std::fprintf(stderr, "  [%d] %s: %s\n", l.level, l.event.c_str(), l.message.c_str());
}

#define FAIL_SHOWING(lines, ...) \
    do {                         \
        print(lines);            \
        fail_msg(__VA_ARGS__);   \
    } while (0)

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
    std::vector<Line> lines = take_lines();
    const Line *down = find(lines, "backend_down");
    if (count(lines, "backend_down") != 1 || !down) FAIL_SHOWING(lines, "want one backend_down");
    assert_int_equal(down->level, CACHEKIT_LOG_WARNING);
    if (!ct::contains(down->message, url + ": ") || !ct::contains(down->message, "refused"))
        fail_msg("backend_down does not name the URL and the cause: %s", down->message.c_str());
    for (int i = 0; i < 5; ++i) call(c.get());
    std::vector<Line> more = take_lines();
    lines.insert(lines.end(), more.begin(), more.end());
    if (count(lines, "breaker_open") != 1) FAIL_SHOWING(lines, "want one breaker_open");
    assert_true(ct::contains(find(lines, "breaker_open")->message, url));

    for (int i = 0; i < 1000; ++i) call(c.get(), i % 2 ? "a" : "b");
    std::vector<Line> flood = take_lines();
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
    const std::vector<Line> lines = take_lines();
    const Line *down = find(lines, "backend_down");
    if (count(lines, "backend_down") != 1 || !down) FAIL_SHOWING(lines, "want one backend_down");
    if (!ct::contains(down->message, shown + ": ") || !ct::contains(down->message, "AUTH"))
        fail_msg("backend_down does not name the URL and the AUTH failure: %s", down->message.c_str());
    for (const Line &l : lines)
        if (ct::contains(l.message, "hunter2")) fail_msg("a line shows the password: %s", l.message.c_str());
    const cachekit_health h = health_of(c.get());
    assert_int_equal(h.state, CACHEKIT_HEALTH_DOWN);
    assert_string_equal(h.backend, shown.c_str());
    assert_false(ct::contains(h.last_error, "hunter2"));
}

// Calls until `event` was logged (true) or the patience ran out.
bool call_until(cachekit_cache *c, const char *event, std::vector<Line> &seen) {
    for (int i = 0; i < 600; ++i) {
        call(c);
        std::vector<Line> more = take_lines();
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
    std::vector<Line> seen = take_lines();
    if (!seen.empty()) FAIL_SHOWING(seen, "a healthy backend logged");
    assert_int_equal(health_of(c.get()).state, CACHEKIT_HEALTH_OK);

    server.pause();
    call(c.get());
    std::vector<Line> lines = take_lines();
    const Line *down = find(lines, "backend_down");
    if (count(lines, "backend_down") != 1 || !down) FAIL_SHOWING(lines, "want one backend_down");
    if (!ct::contains(down->message, "timed out")) fail_msg("backend_down does not name the timeout: %s", down->message.c_str());
    for (int i = 0; i < 4; ++i) call(c.get());
    server.resume();
    std::vector<Line> opened = take_lines();
    if (count(opened, "breaker_open") != 1 || count(opened, "backend_down") != 0)
        FAIL_SHOWING(opened, "want one breaker_open and no second backend_down");
    lines.insert(lines.end(), opened.begin(), opened.end());
    if (!call_until(c.get(), "backend_recovered", lines)) FAIL_SHOWING(lines, "no backend_recovered after SIGCONT");
    const Line *up = find(lines, "backend_recovered");
    assert_int_equal(up->level, CACHEKIT_LOG_INFO);
    assert_true(ct::contains(up->message, url));
    assert_int_equal(health_of(c.get()).state, CACHEKIT_HEALTH_OK);

    // Flapping: down and back again within the minute logs nothing more.
    server.pause();
    for (int i = 0; i < 5; ++i) call(c.get());
    server.resume();
    std::vector<Line> again;
    for (int i = 0; i < 600 && health_of(c.get()).state != CACHEKIT_HEALTH_OK; ++i) {
        call(c.get());
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    again = take_lines();
    assert_int_equal(health_of(c.get()).state, CACHEKIT_HEALTH_OK);
    if (!again.empty()) FAIL_SHOWING(again, "a second outage within the minute logged %zu lines", again.size());
}

}  // namespace

int main() {
    RedisServer::require_or_skip("test_cache_failure_log");
    cachekit_set_log_handler(&record, nullptr);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_port),
        cmocka_unit_test(test_wrong_password),
        cmocka_unit_test(test_paused_server),
    };
    return cmocka_run_group_tests_name("cache_failure_log", tests, nullptr, nullptr);
}
