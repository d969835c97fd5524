// Fork safety for objects that own mutexes, condition variables, sockets or
// threads: the one pthread_atfork registry of the library.
//
// pid() is the calling process's id, cached: one relaxed load, no syscall
// (the pthread_atfork child handler updates it), so a hot path can notice
// "I am a forked child" with one compare. Background threads do not exist in
// a child: their owners notice that way on a write path and start them again.
//
// A Participant joins the process-wide list; around every fork() it gets:
//   before_fork()       in the forking thread: take your mutexes, so the child
//                       inherits consistent state instead of a lock held by a
//                       thread that does not exist there;
//   after_fork_parent() release them;
//   after_fork_child()  release them, or make them fresh (glibc's rwlock
//                       checks the writer's thread id, which changes in the
//                       child), and reset what only other threads used
//                       (condition variables, counts of their calls). Keep it
//                       small: no I/O, no allocation, nothing freed.
// Lock order: the list's mutex, then each participant's (in join order). An
// object whose locks are held while another participant's are taken joins
// before that one (a Cache before its L1). A participant must not call
// join/leave while holding its own mutexes.
//
// Locks::Many marks a participant that takes many locks in before_fork (an
// L1's shards, a cache's stripes and single-flight shards). ThreadSanitizer tracks at most
// 64 locks held by one thread and aborts past that, so under it those
// participants' before_fork/after_fork_parent are not called: their
// after_fork_child must make the locks fresh without assuming it holds them.
// (TSan does not support threads started in a child of a threaded process
// either, so forking a busy process is untested under it.)
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

enum class Locks : bool { Few, Many };

void join(Participant *p, Locks locks = Locks::Few);
void leave(Participant *p) noexcept;

}  // namespace cachekit::fork_hooks
