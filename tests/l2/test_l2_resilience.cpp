// CircuitBreaker state machine on a manual clock; ResilientBackend over a
// fake backend that fails, times out or is slow on command: degradation
// (fail-open / fail-closed) with exact counters, backpressure, and what
// feeds the breaker.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "l2/resilience/circuit_breaker.hpp"
#include "l2/resilience/resilient_backend.hpp"

#include "l2_test_support.hpp"

using namespace cachekit;
using namespace cachekit::l2;
using namespace std::chrono_literals;
using l2test::code_of;
using l2test::soon;
using State = CircuitBreaker::State;

namespace {

struct ManualClock {
    std::shared_ptr<std::atomic<int64_t>> ms = std::make_shared<std::atomic<int64_t>>(1000000);
    std::function<SteadyClock::time_point()> fn() const {
        auto p = ms;
        return [p] { return SteadyClock::time_point(std::chrono::milliseconds(p->load())); };
    }
    void advance(std::chrono::milliseconds d) { ms->fetch_add(d.count()); }
};

BreakerConfig breaker_config(const ManualClock &clock) {
    BreakerConfig c;
    c.failure_threshold = 5;
    c.recovery = 30s;
    c.half_open_calls = 3;
    c.success_threshold = 3;
    c.clock = clock.fn();
    return c;
}

void test_breaker_opens_after_failures(void **) {
    ManualClock clock;
    CircuitBreaker b(breaker_config(clock));
    assert_true(b.state() == State::Closed);
    for (int i = 0; i < 4; ++i) b.failure(b.allow());
    assert_true(b.state() == State::Closed);
    b.success(b.allow());  // consecutive: a success resets the count
    for (int i = 0; i < 4; ++i) b.failure(b.allow());
    assert_true(b.state() == State::Closed);
    b.failure(b.allow());
    assert_true(b.state() == State::Open);
    assert_int_equal(b.times_opened(), 1);
    for (int i = 0; i < 10; ++i) assert_false(b.allow().admitted);  // rejected while open
    clock.advance(29999ms);
    assert_false(b.allow().admitted);
    assert_true(b.state() == State::Open);
}

void test_breaker_half_open_trials(void **) {
    ManualClock clock;
    CircuitBreaker b(breaker_config(clock));
    for (int i = 0; i < 5; ++i) b.failure(b.allow());
    clock.advance(30s);
    assert_true(b.state() == State::HalfOpen);
    // Exactly 3 concurrent trial calls are admitted.
    auto t1 = b.allow(), t2 = b.allow(), t3 = b.allow(), t4 = b.allow();
    assert_true(t1.admitted && t2.admitted && t3.admitted);
    assert_true(t1.trial && t2.trial && t3.trial);
    assert_false(t4.admitted);
    b.success(t1);
    b.success(t2);
    assert_true(b.state() == State::HalfOpen);
    auto t5 = b.allow();  // a slot freed up
    assert_true(t5.admitted);
    b.success(t3);  // third success closes it
    assert_true(b.state() == State::Closed);
    b.failure(t5);  // a stale trial's outcome is ignored once closed
    assert_true(b.state() == State::Closed);
    assert_int_equal(b.times_opened(), 1);
}

void test_breaker_reopens_on_half_open_failure(void **) {
    ManualClock clock;
    CircuitBreaker b(breaker_config(clock));
    for (int i = 0; i < 5; ++i) b.failure(b.allow());
    clock.advance(30s);
    auto t1 = b.allow(), t2 = b.allow();
    b.success(t1);
    b.failure(t2);
    assert_true(b.state() == State::Open);
    assert_int_equal(b.times_opened(), 2);
    assert_false(b.allow().admitted);
    clock.advance(30s);
    // A neutral outcome frees the trial slot without deciding anything.
    auto n1 = b.allow(), n2 = b.allow(), n3 = b.allow();
    assert_true(n1.admitted && n2.admitted && n3.admitted);
    assert_false(b.allow().admitted);
    b.neutral(n1);
    assert_true(b.state() == State::HalfOpen);
    assert_true(b.allow().admitted);
}

void test_breaker_stale_closed_outcomes(void **) {
    ManualClock clock;
    CircuitBreaker b(breaker_config(clock));
    auto slow = b.allow();  // admitted while closed
    for (int i = 0; i < 5; ++i) b.failure(b.allow());
    assert_true(b.state() == State::Open);
    b.success(slow);  // finishes after the breaker opened: ignored
    assert_true(b.state() == State::Open);
}

void test_breaker_threads(void **) {
    ManualClock clock;
    CircuitBreaker b(breaker_config(clock));
    std::atomic<int> admitted{0};
    std::vector<std::thread> ts;
    for (int i = 0; i < 4; ++i)
        ts.emplace_back([&] {
            for (int j = 0; j < 1000; ++j) {
                auto t = b.allow();
                if (t.admitted) {
                    ++admitted;
                    b.success(t);
                }
            }
        });
    for (auto &t : ts) t.join();
    assert_int_equal(admitted.load(), 4000);
    assert_true(b.state() == State::Closed);
}

// ---- A scriptable backend ---------------------------------------------------

struct FakeBackend : Backend {
    std::atomic<int> mode{0};  // 0 ok, 1 EBACKEND, 2 ETIMEOUT, 3 EINVAL
    std::atomic<int> calls{0};
    std::atomic<int> delay_ms{0};
    std::atomic<int> in_call{0};

    void act() {
        ++calls;
        ++in_call;
        if (int d = delay_ms.load()) std::this_thread::sleep_for(std::chrono::milliseconds(d));
        --in_call;
        switch (mode.load()) {
        case 1: throw cachekit::Error(CACHEKIT_EBACKEND, "fake: connection refused");
        case 2: throw cachekit::Error(CACHEKIT_ETIMEOUT, "fake: timed out");
        case 3: throw cachekit::Error(CACHEKIT_EINVAL, "fake: bad input");
        default: break;
        }
    }
    const char *kind() const noexcept override { return "fake"; }
    bool get(std::string_view, cachekit_buf *out, Deadline) override {
        act();
        buf_assign(out, "value");
        return true;
    }
    void set(std::string_view, std::string_view, Ttl, Deadline) override { act(); }
    bool del(std::string_view, Deadline) override {
        act();
        return true;
    }
    bool exists(std::string_view, Deadline) override {
        act();
        return true;
    }
    std::optional<Ttl> ttl(std::string_view, Deadline) override {
        act();
        return Ttl{std::nullopt};
    }
    void get_many(const std::vector<std::string_view> &keys, cachekit_buf *, std::vector<bool> &found,
                  Deadline) override {
        act();
        found.assign(keys.size(), true);
    }
    void set_many(const std::vector<KeyValue> &, Ttl, Deadline) override { act(); }
    uint64_t clear(const KeySelection &, Deadline) override {
        act();
        return 7;
    }
    std::optional<std::string> lock(std::string_view, std::chrono::milliseconds, Deadline) override {
        act();
        return std::string("tok");
    }
    bool unlock(std::string_view, std::string_view, Deadline) override {
        act();
        return true;
    }
    std::optional<int64_t> incr(std::string_view, int64_t delta, Deadline) override {
        act();
        if (mode.load() == 4) throw cachekit::Error(CACHEKIT_EUNSUPPORTED, "fake: not an integer");
        return 40 + delta;
    }
    bool add(std::string_view, std::string_view, Ttl, Deadline) override {
        act();
        return true;
    }
    bool touch(std::string_view, Ttl, Deadline) override {
        act();
        return true;
    }
    uint64_t delete_many(const std::vector<std::string_view> &keys, Deadline) override {
        act();
        return keys.size();
    }
    Health health(Deadline) override {
        Health h;
        h.ok = mode.load() == 0;
        h.latency_ms = 0.5;
        h.detail = h.ok ? "ok" : "down";
        return h;
    }
};

struct Rig {
    ManualClock clock;
    FakeBackend *fake;
    std::unique_ptr<ResilientBackend> rb;

    explicit Rig(bool fail_open, uint32_t max_concurrency = 0, bool breaker = true) {
        auto f = std::make_unique<FakeBackend>();
        fake = f.get();
        ResilienceConfig c;
        c.breaker = breaker_config(clock);
        c.breaker_enabled = breaker;
        c.fail_open = fail_open;
        c.max_concurrency = max_concurrency;
        c.backpressure_wait = 50ms;
        rb = std::make_unique<ResilientBackend>(std::move(f), c);
    }
};

bool rb_get(ResilientBackend &b) {
    Buffer out;
    return b.get("k", out.get(), soon());
}

// incr/add/touch/delete_many pass through with one call each; with fail_open
// a failure skips add/touch/delete_many (counted) but never invents an
// increment; a non-integer refusal is no failure of the backend.
void test_counter_ops_pass_through(void **) {
    Rig r(true);
    const std::vector<std::string_view> keys = {"a", "b", "c"};
    assert_int_equal(*r.rb->incr("k", 2, soon()), 42);
    assert_true(r.rb->add("k", "v", std::nullopt, soon()));
    assert_true(r.rb->touch("k", Ttl{5000ms}, soon()));
    assert_int_equal(r.rb->delete_many(keys, soon()), 3);
    assert_int_equal(r.fake->calls.load(), 4);
    assert_int_equal(r.rb->stats().calls, 4);

    r.fake->mode = 4;
    assert_int_equal(code_of([&] { r.rb->incr("k", 1, soon()); }), CACHEKIT_EUNSUPPORTED);
    assert_int_equal(r.rb->stats().failures, 0);
    assert_true(r.rb->breaker_state() == State::Closed);

    r.fake->mode = 1;
    assert_int_equal(code_of([&] { r.rb->incr("k", 1, soon()); }), CACHEKIT_EBACKEND);
    assert_false(r.rb->add("k", "v", std::nullopt, soon()));
    assert_false(r.rb->touch("k", std::nullopt, soon()));
    assert_int_equal(r.rb->delete_many(keys, soon()), 0);
    ResilienceStats st = r.rb->stats();
    assert_int_equal(st.failures, 4);
    assert_int_equal(st.skipped_writes, 3);
    assert_int_equal(st.degraded_reads, 0);

    Rig closed(false);
    closed.fake->mode = 1;
    assert_int_equal(code_of([&] { closed.rb->add("k", "v", std::nullopt, soon()); }), CACHEKIT_EBACKEND);
    assert_int_equal(code_of([&] { closed.rb->touch("k", Ttl{1000ms}, soon()); }), CACHEKIT_EBACKEND);
    assert_int_equal(code_of([&] { closed.rb->delete_many(keys, soon()); }), CACHEKIT_EBACKEND);
}

void test_fail_open_degrades(void **) {
    Rig r(true);
    assert_true(rb_get(*r.rb));
    r.fake->mode = 1;
    assert_false(rb_get(*r.rb));                // read -> miss
    r.rb->set("k", "v", std::nullopt, soon());  // write -> skipped
    assert_true(r.rb->del("k", soon()));        // write -> skipped ("deleted")
    r.fake->mode = 2;
    // clear, lock and unlock are never degraded.
    assert_int_equal(code_of([&] { r.rb->clear("", soon()); }), CACHEKIT_ETIMEOUT);
    assert_true(r.rb->breaker_state() == State::Closed);  // 4 failures in a row
    assert_false(r.rb->ttl("k", soon()).has_value());     // read -> miss (a timeout)
    assert_true(r.rb->breaker_state() == State::Open);    // the 5th opened it

    ResilienceStats s = r.rb->stats();
    assert_int_equal(s.calls, 6);
    assert_int_equal(s.failures, 5);
    assert_int_equal(s.timeouts, 2);
    assert_int_equal(s.degraded_reads, 2);
    assert_int_equal(s.skipped_writes, 2);
    assert_int_equal(s.rejected_open, 0);
    assert_int_equal(s.breaker_opened, 1);
    assert_int_equal(s.latency_count, 1);
    assert_int_equal(s.breaker_state, CACHEKIT_BREAKER_OPEN);

    // Open: fail fast without calling the backend; reads miss, writes skip.
    int before = r.fake->calls.load();
    assert_false(rb_get(*r.rb));
    r.rb->set("k", "v", std::nullopt, soon());
    assert_int_equal(code_of([&] { r.rb->lock("L", 1s, soon()); }), CACHEKIT_ECIRCUIT_OPEN);
    assert_int_equal(r.fake->calls.load(), before);
    s = r.rb->stats();
    assert_int_equal(s.rejected_open, 3);
    assert_int_equal(s.degraded_reads, 3);
    assert_int_equal(s.skipped_writes, 3);
    assert_int_equal(s.calls, 6);

    // Health is never degraded, bypasses the breaker.
    Health h = r.rb->health(soon());
    assert_false(h.ok);

    // Recovery: half-open after 30 s, three successes close it.
    r.fake->mode = 0;
    r.clock.advance(30s);
    assert_true(r.rb->breaker_state() == State::HalfOpen);
    for (int i = 0; i < 3; ++i) assert_true(rb_get(*r.rb));
    assert_true(r.rb->breaker_state() == State::Closed);
}

void test_fail_closed_returns_codes(void **) {
    Rig r(false);
    r.fake->mode = 1;
    assert_int_equal(code_of([&] { rb_get(*r.rb); }), CACHEKIT_EBACKEND);
    assert_int_equal(code_of([&] { r.rb->set("k", "v", std::nullopt, soon()); }), CACHEKIT_EBACKEND);
    r.fake->mode = 2;
    assert_int_equal(code_of([&] { r.rb->exists("k", soon()); }), CACHEKIT_ETIMEOUT);
    assert_int_equal(code_of([&] { r.rb->del("k", soon()); }), CACHEKIT_ETIMEOUT);
    assert_int_equal(code_of([&] { r.rb->ttl("k", soon()); }), CACHEKIT_ETIMEOUT);
    assert_true(r.rb->breaker_state() == State::Open);
    assert_int_equal(code_of([&] { rb_get(*r.rb); }), CACHEKIT_ECIRCUIT_OPEN);
    ResilienceStats s = r.rb->stats();
    assert_int_equal(s.failures, 5);
    assert_int_equal(s.timeouts, 3);
    assert_int_equal(s.degraded_reads, 0);
    assert_int_equal(s.skipped_writes, 0);
    assert_int_equal(s.rejected_open, 1);
}

void test_non_failures_do_not_feed_breaker(void **) {
    Rig r(false);
    r.fake->mode = 3;  // EINVAL: the caller's fault, not the backend's
    for (int i = 0; i < 20; ++i) assert_int_equal(code_of([&] { rb_get(*r.rb); }), CACHEKIT_EINVAL);
    assert_true(r.rb->breaker_state() == State::Closed);
    ResilienceStats s = r.rb->stats();
    assert_int_equal(s.failures, 0);
    assert_int_equal(s.calls, 20);

    // Errors of the caller's own code (here: a loader that throws between
    // backend calls) never reach the breaker; only backend calls feed it.
    r.fake->mode = 0;
    for (int i = 0; i < 10; ++i) {
        try {
            if (!rb_get(*r.rb)) continue;
            throw std::runtime_error("user code failed");
        } catch (const std::runtime_error &) {
        }
    }
    assert_true(r.rb->breaker_state() == State::Closed);
    assert_int_equal(r.rb->stats().failures, 0);

    // Fail-open does not hide caller errors either.
    Rig open(true);
    open.fake->mode = 3;
    assert_int_equal(code_of([&] { rb_get(*open.rb); }), CACHEKIT_EINVAL);
    assert_int_equal(open.rb->stats().degraded_reads, 0);
}

void test_breaker_disabled(void **) {
    Rig r(false, 0, /*breaker=*/false);
    r.fake->mode = 1;
    for (int i = 0; i < 20; ++i) assert_int_equal(code_of([&] { rb_get(*r.rb); }), CACHEKIT_EBACKEND);
    assert_true(r.rb->breaker_state() == State::Closed);
    ResilienceStats s = r.rb->stats();
    assert_int_equal(s.failures, 20);
    assert_int_equal(s.rejected_open, 0);
    assert_int_equal(s.breaker_opened, 0);
}

void test_backpressure(void **) {
    for (bool fail_open : {false, true}) {
        Rig r(fail_open, 1);
        r.fake->delay_ms = 400;
        std::thread slow([&] { r.rb->set("slow", "v", std::nullopt, soon()); });
        while (r.fake->in_call.load() == 0) std::this_thread::sleep_for(1ms);
        auto t0 = SteadyClock::now();
        int code = code_of([&] { rb_get(*r.rb); });
        auto waited = SteadyClock::now() - t0;
        slow.join();
        if (fail_open) {
            assert_int_equal(code, 0);  // degraded to a miss
            assert_int_equal(r.rb->stats().degraded_reads, 1);
        } else {
            assert_int_equal(code, CACHEKIT_EBUSY);
        }
        assert_true(waited >= 45ms);   // it waited for a slot (50 ms)
        assert_true(waited < 390ms);   // but not for the slow call
        ResilienceStats s = r.rb->stats();
        assert_int_equal(s.rejected_busy, 1);
        assert_int_equal(s.failures, 0);
        assert_int_equal(s.calls, 1);
        assert_true(r.rb->breaker_state() == State::Closed);
        // Rejections never open the breaker, however many.
        r.fake->delay_ms = 0;
        assert_true(rb_get(*r.rb));
    }
}

void test_backpressure_half_open_slot_released(void **) {
    // A trial call rejected by backpressure gives its half-open slot back.
    Rig r(false, 1);
    r.fake->mode = 1;
    for (int i = 0; i < 5; ++i) code_of([&] { rb_get(*r.rb); });
    assert_true(r.rb->breaker_state() == State::Open);
    r.fake->mode = 0;
    r.clock.advance(30s);
    r.fake->delay_ms = 300;
    std::thread slow([&] { rb_get(*r.rb); });  // trial 1 of 3, holds the only slot
    while (r.fake->in_call.load() == 0) std::this_thread::sleep_for(1ms);
    for (int i = 0; i < 5; ++i) assert_int_equal(code_of([&] { rb_get(*r.rb); }), CACHEKIT_EBUSY);
    slow.join();
    r.fake->delay_ms = 0;
    assert_true(rb_get(*r.rb));
    assert_true(rb_get(*r.rb));
    assert_true(r.rb->breaker_state() == State::Closed);
}

void test_counters_exact_under_threads(void **) {
    // Keep the breaker from opening: a huge threshold.
    ResilienceConfig c;
    c.breaker.failure_threshold = 1000000;
    c.fail_open = true;
    auto f = std::make_unique<FakeBackend>();
    FakeBackend *fake = f.get();
    fake->mode = 1;
    ResilientBackend rb(std::move(f), c);
    std::vector<std::thread> ts;
    for (int i = 0; i < 4; ++i)
        ts.emplace_back([&] {
            for (int j = 0; j < 2500; ++j) {
                Buffer out;
                rb.get("k", out.get(), soon());
                rb.set("k", "v", std::nullopt, soon());
            }
        });
    for (auto &t : ts) t.join();
    ResilienceStats s = rb.stats();
    assert_int_equal(s.calls, 20000);
    assert_int_equal(s.failures, 20000);
    assert_int_equal(s.degraded_reads, 10000);
    assert_int_equal(s.skipped_writes, 10000);
}

void test_deadline_is_bounded(void **) {
    struct DeadlineProbe final : FakeBackend {
        Deadline seen{};
        bool get(std::string_view, cachekit_buf *, Deadline d) override {
            seen = d;
            return false;
        }
    };
    auto f = std::make_unique<DeadlineProbe>();
    DeadlineProbe *probe = f.get();
    ResilienceConfig c;
    c.command_timeout = 200ms;
    ResilientBackend rb(std::move(f), c);
    Buffer out;
    auto before = SteadyClock::now();
    rb.get("k", out.get(), Deadline::after(1h));
    assert_true(probe->seen.at <= before + 250ms);  // command_timeout wins
    rb.get("k", out.get(), Deadline::after(10ms));
    assert_true(probe->seen.at <= SteadyClock::now() + 10ms);  // a tighter caller deadline wins
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_breaker_opens_after_failures),
        cmocka_unit_test(test_breaker_half_open_trials),
        cmocka_unit_test(test_breaker_reopens_on_half_open_failure),
        cmocka_unit_test(test_breaker_stale_closed_outcomes),
        cmocka_unit_test(test_breaker_threads),
        cmocka_unit_test(test_fail_open_degrades),
        cmocka_unit_test(test_fail_closed_returns_codes),
        cmocka_unit_test(test_non_failures_do_not_feed_breaker),
        cmocka_unit_test(test_breaker_disabled),
        cmocka_unit_test(test_backpressure),
        cmocka_unit_test(test_backpressure_half_open_slot_released),
        cmocka_unit_test(test_counters_exact_under_threads),
        cmocka_unit_test(test_deadline_is_bounded),
        cmocka_unit_test(test_counter_ops_pass_through),
    };
    return cmocka_run_group_tests_name("resilience", tests, nullptr, nullptr);
}
