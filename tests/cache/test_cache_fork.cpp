// fork() and single-flight (the fork contract of cachekit.h): a child has
// only the forking thread.
//  - A load that another parent thread had in flight is forgotten in the
//    child: the child's get_or_load of that key runs its own loader at once
//    (not after load_timeout_ms) and returns its value.
//  - The forking thread's own load (a loader that forks) stays its own in
//    the child: asking for the key from inside it is still EDEADLOCK, and
//    finishing it does not trip over a parent thread that was waiting for it.
//  - A stale-while-revalidate refresh claim taken in the parent has lapsed
//    in the child: the child's next stale hit claims the refresh.
//  - With cross_process_lock on memory://, the backend lock that parent
//    thread's load held has lapsed in the child too: the child loads at once
//    instead of waiting lock_wait_ms for a process that does not exist.
// (The cache's own locks: test_cache_fork_locks.cpp.)
// The children report by exit status; alarm() turns a hang into a failure.
#include <sys/wait.h>
#include <unistd.h>

#include "cache_test_util.hpp"

namespace {

using ct::Buf;
using ct::ValueLoader;

constexpr uint32_t kLoadTimeoutMs = 20000;
// Well below the load timeout: a child that waited for a vanished leader
// would take kLoadTimeoutMs.
constexpr auto kChildBudget = 5s;
// Values are MessagePack documents.
const std::string kParentValue = ct::mp_str("parent's value");
const std::string kChildValue = ct::mp_str("child's value");

ct::CacheHandle l1_only_cache() {
    cachekit_cache_options o = ct::default_options();
    o.backend_url = "none";
    o.load_timeout_ms = kLoadTimeoutMs;
    return ct::new_cache(&o);
}

// A loader that says it started, then waits for `release` before giving `value`.
struct HeldLoader {
    ct::Gate entered, release;
    std::string value;
    static int run(cachekit_load *load, void *payload) {
        auto *self = static_cast<HeldLoader *>(payload);
        self->entered.open();
        self->release.wait();
        return cachekit_load_set_value(load, self->value.data(), self->value.size());
    }
};

int get_or_load(cachekit_cache *c, const std::string &key, cachekit_loader loader, void *payload, Buf &out,
                cachekit_lookup *info = nullptr) {
    return cachekit_cache_get_or_load(c, out.get(), info, "fork", key.data(), key.size(), CACHEKIT_TTL_DEFAULT, loader,
                                      payload);
}

// Waits for the child and fails the test unless it exited with 0.
void expect_child_ok(pid_t pid) {
    assert_true(pid > 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status)) fail_msg("the child was killed by signal %d (a hang?)", WTERMSIG(status));
    assert_true(WIFEXITED(status));
    if (WEXITSTATUS(status) != 0) fail_msg("the child failed its check %d", WEXITSTATUS(status));
}

// The child's part: exit codes name the first check that failed.
int child_loads_at_once(cachekit_cache *c, const std::string &key) {
    alarm(kLoadTimeoutMs / 1000 * 2);
    ValueLoader loader{kChildValue};
    Buf out;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    const auto start = std::chrono::steady_clock::now();
    if (get_or_load(c, key, &ValueLoader::run, &loader, out, &info) != CACHEKIT_OK) {
        std::fprintf(stderr, "child: get_or_load: %s\n", cachekit_error_last_message());
        return 2;
    }
    if (std::chrono::steady_clock::now() - start > kChildBudget) return 3;  // waited for the parent's thread
    if (out.str() != kChildValue || loader.calls != 1 || info.source != CACHEKIT_SOURCE_LOADED) return 4;
    Buf again;  // stored like any load
    if (cachekit_cache_get(c, again.get(), nullptr, "fork", key.data(), key.size()) != CACHEKIT_OK) return 5;
    return again.str() == kChildValue ? 0 : 6;
}

// A parent thread leads a load of `key` (its loader blocked on a latch);
// the process forks; the child must load the key at once.
void fork_while_a_parent_thread_loads(cachekit_cache *c, const std::string &key) {
    HeldLoader held;
    held.value = kParentValue;
    int leader_rc = -1;
    Buf leader_out;
    std::thread leader([&] { leader_rc = get_or_load(c, key, &HeldLoader::run, &held, leader_out); });
    {
        ct::JoinOnExit join(leader, [&] { held.release.open(); });
        assert_true(held.entered.wait_for(10s));  // the parent thread leads the key's flight
        const pid_t pid = fork();
        if (pid == 0) _exit(child_loads_at_once(c, key));
        expect_child_ok(pid);
    }
    // The parent's flight is untouched by the fork.
    CT_OK(leader_rc);
    assert_true(leader_out.str() == kParentValue);
}

void test_child_loads_a_key_another_parent_thread_was_loading(void **) {
#if defined(__SANITIZE_THREAD__)
    // The child's store restarts the L1 sweeper: TSan does not support
    // starting threads in the child of a multi-threaded process.
    skip();
#endif
    // (Runs under ASan: the parent's other threads are parked, not allocating.)
    ct::CacheHandle cache = l1_only_cache();
    fork_while_a_parent_thread_loads(cache.get(), "held");
}

// The parent thread's load also holds the memory backend's lock of the key;
// before the fix the child found it held and waited lock_wait_ms (well over
// the child's budget) before loading.
void test_child_loads_a_key_whose_memory_lock_a_parent_thread_held(void **) {
#if defined(__SANITIZE_THREAD__)
    skip();  // as above
#endif
    cachekit_cache_options o = ct::default_options();
    o.backend_url = "memory://";
    o.load_timeout_ms = kLoadTimeoutMs;
    o.cross_process_lock = CACHEKIT_ON;
    o.lock_wait_ms = kLoadTimeoutMs;
    ct::CacheHandle cache = ct::new_cache(&o);
    fork_while_a_parent_thread_loads(cache.get(), ct::shaped_key("fork", "locked"));
}

// A loader that forks, after starting a parent thread that waits for its
// flight: the child goes on as the key's leader.
struct ForkingLoader {
    cachekit_cache *cache = nullptr;
    std::string key;
    std::thread waiter;  // the parent's: waits for this flight
    int waiter_rc = -1;
    Buf waiter_out;
    bool in_child = false;
    pid_t child = -1;
    int own_key_rc = 0;  // in the child: its get_or_load of its own key, from inside the loader
    int inner_calls = 0;

    static int run(cachekit_load *load, void *payload) {
        auto *self = static_cast<ForkingLoader *>(payload);
        ct::Gate started;
        self->waiter = std::thread([self, &started] {
            ValueLoader never{ct::mp_str("waiter's value")};
            started.open();
            self->waiter_rc = get_or_load(self->cache, self->key, &ValueLoader::run, &never, self->waiter_out);
        });
        started.wait();
        std::this_thread::sleep_for(100ms);  // let it block in the flight (the checks hold either way)
        const pid_t pid = fork();
        if (pid == 0) {
            alarm(kLoadTimeoutMs / 1000 * 2);
            self->in_child = true;
            ValueLoader inner{ct::mp_str("inner")};
            Buf out;
            self->own_key_rc = get_or_load(self->cache, self->key, &ValueLoader::run, &inner, out);
            self->inner_calls = inner.calls;
            return cachekit_load_set_value(load, kChildValue.data(), kChildValue.size());
        }
        self->child = pid;
        return cachekit_load_set_value(load, kParentValue.data(), kParentValue.size());
    }
};

void test_forking_loader_stays_the_leader_in_the_child(void **) {
#if defined(__SANITIZE_THREAD__)
    skip();  // as above: the child's store restarts the L1 sweeper
#endif
    ct::CacheHandle cache = l1_only_cache();
    ForkingLoader loader;
    loader.cache = cache.get();
    loader.key = "forked";
    Buf out;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    const int rc = get_or_load(cache.get(), loader.key, &ForkingLoader::run, &loader, out, &info);
    if (loader.in_child) {
        // Back from the outer call as the key's leader (the waiter thread
        // does not exist here): exit codes name the failed check.
        int code = 0;
        if (loader.own_key_rc != CACHEKIT_EDEADLOCK || loader.inner_calls != 0) code = 2;
        else if (rc != CACHEKIT_OK || out.str() != kChildValue || info.source != CACHEKIT_SOURCE_LOADED) code = 3;
        if (code != 0) std::fprintf(stderr, "child: rc %d (%s), inner rc %d: %s\n", rc, out.str().c_str(), loader.own_key_rc, cachekit_error_last_message());
        _exit(code);
    }
    if (loader.waiter.joinable()) loader.waiter.join();
    expect_child_ok(loader.child);
    CT_OK(rc);
    assert_true(out.str() == kParentValue);
    CT_OK(loader.waiter_rc);
    assert_true(loader.waiter_out.str() == kParentValue);
}

void test_child_can_claim_a_refresh_the_parent_claimed(void **) {
#if defined(__SANITIZE_THREAD__)
    skip();  // as above: the child's L1 call restarts the sweeper
#endif
    cachekit_cache_options o = ct::default_options();
    o.backend_url = "none";
    o.swr = CACHEKIT_ON;
    o.swr_threshold_ratio = 0.001;
    o.default_ttl_seconds = 600;  // stale after 0.6 s (+-10 %), minutes from expiring
    ct::CacheHandle cache = ct::new_cache(&o);
    cachekit_cache *c = cache.get();
    const std::string key = "stale";
    CT_OK(cachekit_cache_put(c, "fork", key.data(), key.size(), kParentValue.data(), kParentValue.size(),
                             CACHEKIT_TTL_DEFAULT));
    ct::wait_until_older_than(c, 600 * 0.001 * 1.1 + 0.05);
    // A parent thread claims the refresh and never reports back.
    cachekit_lookup claimed = CACHEKIT_LOOKUP_INIT;
    std::thread([&] {
        Buf out;
        cachekit_cache_get(c, out.get(), &claimed, "fork", key.data(), key.size());
    }).join();
    assert_int_equal(claimed.refresh, 1);
    auto stale_hit_claims = [&] {
        Buf out;
        cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
        const int rc = cachekit_cache_get(c, out.get(), &info, "fork", key.data(), key.size());
        return rc == CACHEKIT_OK && out.str() == kParentValue && info.refresh == 1;
    };
    assert_false(stale_hit_claims());  // in the parent the claim stands
    const pid_t pid = fork();
    if (pid == 0) {
        alarm(20);
        _exit(stale_hit_claims() ? 0 : 2);
    }
    expect_child_ok(pid);
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_child_loads_a_key_another_parent_thread_was_loading),
        cmocka_unit_test(test_forking_loader_stays_the_leader_in_the_child),
        cmocka_unit_test(test_child_can_claim_a_refresh_the_parent_claimed),
        cmocka_unit_test(test_child_loads_a_key_whose_memory_lock_a_parent_thread_held),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
