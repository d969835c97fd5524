// A small number for the calling thread, unique among the threads alive at
// the moment: handed out lowest-free-first on first use and given back when
// the thread exits. Counters use it to give each of their first few threads a
// cell that only that thread writes, so a hot-path bump is a plain add
// instead of a locked instruction (see metrics/striped_counter.hpp).
#pragma once

namespace cachekit {

inline constexpr unsigned kNoThreadIndex = ~0u;  // registration failed (out of memory)

namespace detail {
// initial-exec: read straight off the thread pointer, even from a
// dlopen()ed libcachekit (a 4-byte static TLS reservation).
[[gnu::tls_model("initial-exec")]] inline thread_local unsigned tls_thread_index_plus_one = 0;
unsigned register_thread_index() noexcept;
// fork() (called by fork_hooks only): the registry's lock is held across
// fork(), since a thread registering at that moment would leave it locked in
// the child; the child gives back the indexes of the threads it did not keep.
void thread_index_before_fork() noexcept;
void thread_index_after_fork_parent() noexcept;
void thread_index_after_fork_child() noexcept;
}  // namespace detail

inline unsigned this_thread_index() noexcept {
    unsigned i = detail::tls_thread_index_plus_one;
    return i != 0 ? i - 1 : detail::register_thread_index();
}

}  // namespace cachekit
