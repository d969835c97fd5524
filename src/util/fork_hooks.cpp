#include "util/fork_hooks.hpp"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "util/thread_index.hpp"

namespace cachekit::fork_hooks {
namespace {

// Whether Locks::Many participants hold their locks across fork() (see the header).
#if defined(__SANITIZE_THREAD__)
constexpr bool kHoldManyLocks = false;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kHoldManyLocks = false;
#else
constexpr bool kHoldManyLocks = true;
#endif
#else
constexpr bool kHoldManyLocks = true;
#endif

std::atomic<pid_t> g_pid{0};

struct Member {
    Participant *p;
    Locks locks;
    bool holds() const { return kHoldManyLocks || locks == Locks::Few; }
};

struct Registry {
    std::mutex mu;
    std::vector<Member> members;
};

Registry &registry() {
    static Registry *r = new Registry();  // never destroyed: fork may run during exit
    return *r;
}

void prepare() noexcept {
    Registry &r = registry();
    r.mu.lock();  // held across fork(): no participant comes or goes meanwhile
    for (const Member &m : r.members)
        if (m.holds()) m.p->before_fork();
    detail::thread_index_before_fork();  // a leaf lock: last in, first out
}

void parent() noexcept {
    detail::thread_index_after_fork_parent();
    Registry &r = registry();
    for (auto it = r.members.rbegin(); it != r.members.rend(); ++it)
        if (it->holds()) it->p->after_fork_parent();
    r.mu.unlock();
}

void child() noexcept {
    g_pid.store(getpid(), std::memory_order_relaxed);
    detail::thread_index_after_fork_child();  // before any participant may count something
    Registry &r = registry();
    for (auto it = r.members.rbegin(); it != r.members.rend(); ++it) it->p->after_fork_child();
    r.mu.unlock();  // taken by this very thread in prepare()
}

void install() {
    static const bool installed = [] {
        registry();
        g_pid.store(getpid(), std::memory_order_relaxed);
        pthread_atfork(prepare, parent, child);
        return true;
    }();
    (void)installed;
}

}  // namespace

pid_t pid() noexcept {
    pid_t p = g_pid.load(std::memory_order_relaxed);
    if (p != 0) [[likely]]
        return p;
    install();
    return g_pid.load(std::memory_order_relaxed);
}

void join(Participant *p, Locks locks) {
    install();
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.members.push_back({p, locks});
}

void leave(Participant *p) noexcept {
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = std::find_if(r.members.begin(), r.members.end(), [&](const Member &m) { return m.p == p; });
    if (it != r.members.end()) r.members.erase(it);
}

}  // namespace cachekit::fork_hooks
