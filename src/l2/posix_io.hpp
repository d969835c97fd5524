// Small POSIX helpers of the file backend: an owning file descriptor, full
// reads and writes, flock bounded by a deadline, random names and errno ->
// cachekit::Error.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include <sys/stat.h>

#include "l2/backend.hpp"

namespace cachekit::l2::posix {

// An owning file descriptor (-1 = none).
class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : fd_(fd) {}
    Fd(const Fd &) = delete;
    Fd &operator=(const Fd &) = delete;
    Fd(Fd &&other) noexcept : fd_(other.release()) {}
    Fd &operator=(Fd &&other) noexcept {
        if (this != &other) reset(other.release());
        return *this;
    }
    ~Fd() { reset(); }

    int get() const noexcept { return fd_; }
    explicit operator bool() const noexcept { return fd_ >= 0; }
    int release() noexcept {
        int fd = fd_;
        fd_ = -1;
        return fd;
    }
    void reset(int fd = -1) noexcept;

private:
    int fd_ = -1;
};

// Throw CACHEKIT_EBACKEND "<what>: strerror(err)".
[[noreturn]] void throw_errno(const std::string &what, int err);

// Read up to `len` bytes at `offset` (retrying EINTR and short reads); returns
// the count read (less than len only at end of file).
size_t pread_full(int fd, void *buf, size_t len, off_t offset);

// Write every byte (retrying EINTR and short writes); throws on failure.
void write_full(int fd, const void *data, size_t len, const std::string &what);

// Take flock(op) (LOCK_SH or LOCK_EX) on fd, polling LOCK_NB with short
// sleeps; false when `wait` passes first (0 = try once). Throws on errors
// other than EWOULDBLOCK.
bool flock_for(int fd, int op, std::chrono::milliseconds wait);

// As flock_for, bounded by min(lock_timeout, deadline): a KeyFault
// (CACHEKIT_EBUSY) when the lock is not had in time - one entry held by
// someone else is that entry's trouble, not the backend's.
void flock_or_timeout(int fd, int op, std::chrono::milliseconds lock_timeout, Deadline deadline,
                      const char *what);

// `bytes` random bytes from getrandom(2), as lowercase hex.
std::string random_hex(size_t bytes);

// lstat-like stat of dir/name without following a symlink; false on ENOENT.
bool stat_at(int dirfd, const std::string &name, struct stat &st);

// True when fd and dir/name are the same inode (name not followed).
bool same_file_at(int fd, int dirfd, const std::string &name);

}  // namespace cachekit::l2::posix
