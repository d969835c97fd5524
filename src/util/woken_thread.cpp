#include "util/woken_thread.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace cachekit {

WokenThread::~WokenThread() {
    if (thread_ && thread_->joinable()) thread_->detach();  // not reached by the owners: they finish() first
    if (fd_ >= 0) ::close(fd_);
}

void WokenThread::start(std::function<void()> body) {
    fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
    try {
        thread_ = std::make_unique<std::thread>(std::move(body));
    } catch (...) {
        ::close(fd_);
        fd_ = -1;
        throw;
    }
}

void WokenThread::wake() const noexcept {
    const uint64_t one = 1;
    (void)!::write(fd_, &one, sizeof one);
}

void WokenThread::drain() const noexcept {
    uint64_t count;
    (void)!::read(fd_, &count, sizeof count);
}

void WokenThread::finish() noexcept {
    if (!thread_) return;
    wake();
    thread_->join();
    thread_.reset();
    ::close(fd_);
    fd_ = -1;
}

void WokenThread::abandon() noexcept {
    (void)thread_.release();
    fd_ = -1;
}

}  // namespace cachekit
