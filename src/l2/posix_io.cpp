#include "l2/posix_io.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/random.h>
#include <unistd.h>

#include "codec/hashing.hpp"
#include "l2/key_fault.hpp"
#include "util/error.hpp"

namespace cachekit::l2::posix {

void Fd::reset(int fd) noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
}

void throw_errno(const std::string &what, int err) {
    fail(CACHEKIT_EBACKEND, what + ": " + std::strerror(err));
}

size_t pread_full(int fd, void *buf, size_t len, off_t offset) {
    auto *p = static_cast<char *>(buf);
    size_t done = 0;
    while (done < len) {
        ssize_t n = ::pread(fd, p + done, len - done, offset + off_t(done));
        if (n < 0) {
            if (errno == EINTR) continue;
            throw_errno("read failed", errno);
        }
        if (n == 0) break;
        done += size_t(n);
    }
    return done;
}

void write_full(int fd, const void *data, size_t len, const std::string &what) {
    const auto *p = static_cast<const char *>(data);
    while (len > 0) {
        ssize_t n = ::write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw_errno(what, errno);
        }
        p += n;
        len -= size_t(n);
    }
}

bool flock_for(int fd, int op, std::chrono::milliseconds wait) {
    auto until = SteadyClock::now() + wait;
    auto pause = std::chrono::microseconds(200);
    for (;;) {
        if (::flock(fd, op | LOCK_NB) == 0) return true;
        int err = errno;
        if (err == EINTR) continue;
        if (err != EWOULDBLOCK) throw_errno("flock failed", err);
        auto now = SteadyClock::now();
        if (now >= until) return false;
        auto left = std::chrono::duration_cast<std::chrono::microseconds>(until - now);
        std::this_thread::sleep_for(std::min(pause, left));
        pause = std::min(pause * 2, std::chrono::microseconds(10000));
    }
}

void flock_or_timeout(int fd, int op, std::chrono::milliseconds lock_timeout, Deadline deadline,
                      const char *what) {
    auto wait = std::min(lock_timeout, deadline.remaining());
    if (!flock_for(fd, op, wait))
        fail_key(CACHEKIT_EBUSY, std::string("the lock of ") + what + " is held by another process or thread (waited " +
                                     std::to_string(wait.count()) + " ms)");
}

std::string random_hex(size_t bytes) {
    std::string raw(bytes, '\0');
    size_t done = 0;
    while (done < bytes) {
        ssize_t n = ::getrandom(raw.data() + done, bytes - done, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw_errno("getrandom failed", errno);
        }
        done += size_t(n);
    }
    return to_hex(raw.data(), raw.size());
}

bool stat_at(int dirfd, const std::string &name, struct stat &st) {
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) return true;
    if (errno == ENOENT) return false;
    throw_errno("stat of " + name + " failed", errno);
}

bool same_file_at(int fd, int dirfd, const std::string &name) {
    struct stat a, b;
    if (::fstat(fd, &a) != 0) throw_errno("fstat failed", errno);
    if (!stat_at(dirfd, name, b)) return false;
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace cachekit::l2::posix
