#include "util/fork_hooks.hpp"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

namespace cachekit::fork_hooks {
namespace {

std::atomic<pid_t> g_pid{0};

struct Registry {
    std::mutex mu;
    std::vector<Participant *> members;
};

Registry &registry() {
    static Registry *r = new Registry();  // never destroyed: fork may run during exit
    return *r;
}

void prepare() noexcept {
    Registry &r = registry();
    r.mu.lock();
    for (Participant *p : r.members) p->before_fork();
}

void parent() noexcept {
    Registry &r = registry();
    for (auto it = r.members.rbegin(); it != r.members.rend(); ++it) (*it)->after_fork_parent();
    r.mu.unlock();
}

void child() noexcept {
    g_pid.store(getpid(), std::memory_order_relaxed);
    Registry &r = registry();
    for (auto it = r.members.rbegin(); it != r.members.rend(); ++it) (*it)->after_fork_child();
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

void join(Participant *p) {
    install();
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.members.push_back(p);
}

void leave(Participant *p) noexcept {
    Registry &r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = std::find(r.members.begin(), r.members.end(), p);
    if (it != r.members.end()) r.members.erase(it);
}

}  // namespace cachekit::fork_hooks
