// A background thread and the eventfd its owner wakes it with (the thread's
// poll watches fd()). Shared by the threads that sleep in poll(): the
// coherence feed's loop and the Sentinel watcher.
//
// fork(): a child has no copy of the thread. Its owner calls abandon(),
// which lets go of the parent's handle without joining it and leaves the
// eventfd's copy open and unused, instead of finish().
#pragma once

#include <functional>
#include <memory>
#include <thread>

namespace cachekit {

class WokenThread {
public:
    WokenThread() = default;
    ~WokenThread();  // the owner has called finish() or abandon()
    WokenThread(const WokenThread &) = delete;
    WokenThread &operator=(const WokenThread &) = delete;

    // The eventfd, then the thread running `body`. Throws std::system_error
    // with nothing left open.
    void start(std::function<void()> body);
    int fd() const noexcept { return fd_; }
    // One wake; a wake already pending (EAGAIN) is as good.
    void wake() const noexcept;
    // On the thread, after poll saw fd() readable: back to not woken.
    void drain() const noexcept;
    // The owner has told the body to stop: wake it, join it, close the eventfd.
    void finish() noexcept;
    // In a forked child: the thread is the parent's; leave it and the fd alone.
    void abandon() noexcept;

private:
    int fd_ = -1;
    std::unique_ptr<std::thread> thread_;
};

}  // namespace cachekit
