#include "l1/fork_registry.hpp"

#include <algorithm>
#include <mutex>
#include <new>
#include <vector>

#include <pthread.h>

namespace cachekit::l1 {


namespace {

// ThreadSanitizer tracks at most 64 locks held by one thread and aborts past
// that (a default L1 alone has 66), so under it the objects' locks are not
// held across fork(): the child still gets them fresh. (TSan does not
// support threads started in a child of a threaded process either.)
#if defined(__SANITIZE_THREAD__)
constexpr bool kHoldLocks = false;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kHoldLocks = false;
#else
constexpr bool kHoldLocks = true;
#endif
#else
constexpr bool kHoldLocks = true;
#endif

// Never destroyed: a fork may come during static destruction.
struct Registry {
    std::mutex mu;
    std::vector<ForkSafe *> objects;
};

Registry &registry() {
    static Registry *r = new Registry;
    return *r;
}

void prepare() noexcept {
    Registry &r = registry();
    r.mu.lock();  // held across fork(): no object comes or goes meanwhile
    if (kHoldLocks)
        for (ForkSafe *o : r.objects) o->fork_prepare();
}

void parent() noexcept {
    Registry &r = registry();
    if (kHoldLocks)
        for (ForkSafe *o : r.objects) o->fork_parent();
    r.mu.unlock();
}

void child() noexcept {
    Registry &r = registry();
    for (ForkSafe *o : r.objects) o->fork_child();
    new (&r.mu) std::mutex;  // taken by prepare() in the parent
}

}  // namespace

void register_fork_safe(ForkSafe *object) {
    static const bool installed = [] {
        fork_hooks::pid();  // installs the handler that keeps pid_now() current
        pthread_atfork(prepare, parent, child);
        return true;
    }();
    (void)installed;
    Registry &r = registry();
    std::lock_guard lock(r.mu);
    r.objects.push_back(object);
}

void unregister_fork_safe(ForkSafe *object) noexcept {
    Registry &r = registry();
    std::lock_guard lock(r.mu);
    auto it = std::find(r.objects.begin(), r.objects.end(), object);
    if (it != r.objects.end()) r.objects.erase(it);
}

}  // namespace cachekit::l1
