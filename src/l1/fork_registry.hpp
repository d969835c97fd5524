// fork() and the L1's (and the metrics') locks and threads. Objects that own
// locks other threads may hold, or background threads, register here. Around
// fork() every registered object takes all its locks (so no lock is copied
// into the child while another thread is half-way through what it guards),
// the parent releases them, and the child gets them fresh (re-created, as
// glibc's rwlock checks the writer's thread id, which changes in the child)
// and learns its new process id. Background threads do not exist in the
// child: their owners notice with one compare of the cached pid (pid_now())
// on a write path and start them again.
#pragma once

#include <sys/types.h>

#include "util/fork_hooks.hpp"

namespace cachekit::l1 {

class ForkSafe {
public:
    virtual void fork_prepare() noexcept = 0;  // take every lock (in one fixed order)
    virtual void fork_parent() noexcept = 0;   // release them
    virtual void fork_child() noexcept = 0;    // make them fresh, unlocked

protected:
    ~ForkSafe() = default;
};

void register_fork_safe(ForkSafe *object);
void unregister_fork_safe(ForkSafe *object) noexcept;

// This process's id, no syscall (kept current across fork() by
// fork_hooks' child handler).
inline pid_t pid_now() noexcept { return fork_hooks::pid(); }

}  // namespace cachekit::l1
