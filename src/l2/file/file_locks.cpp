#include "l2/file/file_locks.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "l2/key_fault.hpp"
#include "l2/posix_io.hpp"
#include "util/error.hpp"

namespace cachekit::l2::filelock {

namespace {

struct Content {
    std::string token;
    int64_t expiry_ms = 0;
};

// Parse "<token> <expiry ms>\n"; nullopt for anything else.
std::optional<Content> parse(std::string_view text) {
    size_t sp = text.find(' ');
    if (sp == std::string_view::npos || sp == 0) return std::nullopt;
    Content c;
    c.token = std::string(text.substr(0, sp));
    std::string_view rest = text.substr(sp + 1);
    if (!rest.empty() && rest.back() == '\n') rest.remove_suffix(1);
    auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), c.expiry_ms);
    if (ec != std::errc() || ptr != rest.data() + rest.size()) return std::nullopt;
    return c;
}

// Open an existing lock file without following a symlink; none when absent.
// Anything but a regular file under the name (a symlink, a directory, a
// FIFO: not ours) is that lock's fault: a KeyFault, and it is never followed
// or removed.
posix::Fd open_lock_file(int dirfd, const std::string &name) {
    posix::Fd fd(::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd) {
        int err = errno;
        if (err == ENOENT) return {};
        if (err == ELOOP || err == ENXIO || err == EACCES)
            fail_key(CACHEKIT_EBACKEND, "the lock file " + name + " is not a regular file of ours (refused, left alone)");
        posix::throw_errno("cannot open the lock file " + name, err);
    }
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) posix::throw_errno("cannot stat the lock file " + name, errno);
    if (!S_ISREG(st.st_mode))
        fail_key(CACHEKIT_EBACKEND, "the lock file " + name + " is not a regular file (refused, left alone)");
    if (st.st_size > 4096) fail_key(CACHEKIT_EBACKEND, "the lock file " + name + " is too large to be ours (left alone)");
    return fd;
}

std::string read_small(int fd) {
    char buf[512];
    size_t n = posix::pread_full(fd, buf, sizeof buf, 0);
    return std::string(buf, n);
}

}  // namespace

bool break_if_stale(int dirfd, const std::string &lock_file, int64_t now_ms, std::chrono::milliseconds wait) {
    posix::Fd fd = open_lock_file(dirfd, lock_file);
    if (!fd) return true;
    if (!posix::flock_for(fd.get(), LOCK_EX, wait)) return false;
    auto c = parse(read_small(fd.get()));
    if (c && c->expiry_ms > now_ms) return false;  // live
    if (posix::same_file_at(fd.get(), dirfd, lock_file)) ::unlinkat(dirfd, lock_file.c_str(), 0);
    return true;
}

std::optional<std::string> acquire(int dirfd, const std::string &lock_file, std::chrono::milliseconds hold,
                                   int64_t now_ms, std::chrono::milliseconds lock_timeout, Deadline deadline) {
    if (hold.count() <= 0) fail(CACHEKIT_EINVAL, "a lock needs a positive hold time");
    std::string token = posix::random_hex(16);
    std::string text = token + " " + std::to_string(now_ms + hold.count()) + "\n";
    std::string tmp = lock_file + ".tmp." + posix::random_hex(8);
    {
        posix::Fd t(::openat(dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (!t) posix::throw_errno("cannot create a lock file", errno);
        try {
            posix::write_full(t.get(), text.data(), text.size(), "cannot write a lock file");
        } catch (...) {
            ::unlinkat(dirfd, tmp.c_str(), 0);
            throw;
        }
    }
    struct Cleanup {
        int dirfd;
        const std::string &name;
        ~Cleanup() { ::unlinkat(dirfd, name.c_str(), 0); }
    } cleanup{dirfd, tmp};

    // A few rounds: create, else break a stale holder and retry.
    for (int round = 0; round < 8; ++round) {
        if (::linkat(dirfd, tmp.c_str(), dirfd, lock_file.c_str(), 0) == 0) return token;
        if (errno != EEXIST) posix::throw_errno("cannot create the lock file " + lock_file, errno);
        auto wait = std::min(lock_timeout, deadline.remaining());
        if (!break_if_stale(dirfd, lock_file, now_ms, wait)) return std::nullopt;
        if (deadline.passed()) break;
    }
    fail_key(CACHEKIT_EBUSY, "could not take the lock " + lock_file + " (contended)");
}

bool release(int dirfd, const std::string &lock_file, std::string_view token, int64_t now_ms,
             std::chrono::milliseconds lock_timeout, Deadline deadline) {
    posix::Fd fd = open_lock_file(dirfd, lock_file);
    if (!fd) return false;
    posix::flock_or_timeout(fd.get(), LOCK_EX, lock_timeout, deadline, lock_file.c_str());
    auto c = parse(read_small(fd.get()));
    if (!c || c->token != token) return false;
    if (!posix::same_file_at(fd.get(), dirfd, lock_file)) return false;
    ::unlinkat(dirfd, lock_file.c_str(), 0);  // an expired lock of ours is removed too
    return c->expiry_ms > now_ms;
}

}  // namespace cachekit::l2::filelock
