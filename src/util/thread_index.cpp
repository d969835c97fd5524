#include "util/thread_index.hpp"

#include <mutex>
#include <new>
#include <vector>

namespace cachekit::detail {
namespace {

// The mutex also orders a cell's last write by an exiting thread before the
// first write by the thread that inherits its index.
std::mutex registry_mu;
std::vector<bool> &taken() {
    static auto *t = new std::vector<bool>();  // never destroyed: threads may exit after main
    return *t;
}

struct IndexOwner {
    unsigned index = kNoThreadIndex;
    ~IndexOwner() {
        if (index == kNoThreadIndex) return;
        std::lock_guard lock(registry_mu);
        taken()[index] = false;
        tls_thread_index_plus_one = 0;
    }
};
thread_local IndexOwner owner;

}  // namespace

unsigned register_thread_index() noexcept {
    try {
        std::lock_guard lock(registry_mu);
        std::vector<bool> &t = taken();
        unsigned i = 0;
        while (i < t.size() && t[i]) ++i;
        if (i == t.size()) t.push_back(true); else t[i] = true;
        owner.index = i;
        tls_thread_index_plus_one = i + 1;
        return i;
    } catch (...) {
        return kNoThreadIndex;  // counted through the shared cells instead
    }
}

void thread_index_before_fork() noexcept { registry_mu.lock(); }

void thread_index_after_fork_parent() noexcept { registry_mu.unlock(); }

void thread_index_after_fork_child() noexcept {
    std::vector<bool> &t = taken();
    const unsigned mine = tls_thread_index_plus_one;  // 0: the forking thread has none
    for (size_t i = 0; i < t.size(); ++i) t[i] = (i + 1 == mine);
    registry_mu.unlock();  // taken by this very thread before the fork
}

}  // namespace cachekit::detail
