// Fork safety for objects that own mutexes, condition variables or sockets.
//
// pid() is the calling process's id, cached: one relaxed load, no syscall
// (the pthread_atfork child handler updates it), so a hot path can notice
// "I am a forked child" with one compare.
//
// A Participant joins the process-wide list; around every fork() it gets:
//   before_fork()       in the forking thread: take your mutexes, so the child
//                       inherits consistent state instead of a lock held by a
//                       thread that does not exist there;
//   after_fork_parent() release them;
//   after_fork_child()  release them and reset what only other threads used
//                       (condition variables, counts of their calls). Keep it
//                       small: no I/O, no allocation.
// Lock order: the list's mutex, then each participant's (in join order). A
// participant must not call join/leave while holding its own mutexes.
#pragma once

#include <sys/types.h>

namespace cachekit::fork_hooks {

pid_t pid() noexcept;

class Participant {
public:
    virtual void before_fork() noexcept = 0;
    virtual void after_fork_parent() noexcept = 0;
    virtual void after_fork_child() noexcept = 0;

protected:
    ~Participant() = default;
};

void join(Participant *p);
void leave(Participant *p) noexcept;

}  // namespace cachekit::fork_hooks
