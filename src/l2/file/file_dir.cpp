#include "l2/file/file_dir.hpp"

#include <cerrno>
#include <memory>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "l2/file/file_format.hpp"
#include "util/error.hpp"

namespace cachekit::l2::filedir {

namespace {

// mkdir -p with 0700 for every component created here (existing ones are
// left as they are).
void make_dirs(const std::string &path) {
    for (size_t pos = 1; pos <= path.size(); ++pos) {
        if (pos != path.size() && path[pos] != '/') continue;
        std::string part = path.substr(0, pos);
        if (part.empty() || part.back() == '/') continue;
        if (::mkdir(part.c_str(), 0700) == 0 || errno == EEXIST) continue;
        posix::throw_errno("cannot create the cache directory " + part, errno);
    }
}

}  // namespace

posix::Fd open_cache_dir(const std::string &path) {
    if (path.empty()) fail(CACHEKIT_EINVAL, "the file backend needs a directory");
    make_dirs(path);
    posix::Fd dir(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir) {
        int err = errno;
        if (err == ELOOP) fail(CACHEKIT_EINVAL, "the cache directory " + path + " is a symlink (refused)");
        if (err == ENOTDIR) fail(CACHEKIT_EINVAL, "the cache directory " + path + " is not a directory");
        posix::throw_errno("cannot open the cache directory " + path, err);
    }
    struct stat st;
    if (::fstat(dir.get(), &st) != 0) posix::throw_errno("cannot stat the cache directory " + path, errno);
    if (st.st_uid != ::geteuid())
        fail(CACHEKIT_EINVAL, "the cache directory " + path + " is owned by uid " + std::to_string(st.st_uid) +
                                  ", not by this process's uid " + std::to_string(::geteuid()) + " (refused)");
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        fail(CACHEKIT_EINVAL, "the cache directory " + path + " is writable by group or others (refused)");
    return dir;
}

Scan scan(int dirfd, int64_t now_unix_s, int64_t temp_max_age_s) {
    int fd = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) posix::throw_errno("cannot list the cache directory", errno);
    std::unique_ptr<DIR, int (*)(DIR *)> d(::fdopendir(fd), &::closedir);
    if (!d) {
        int err = errno;
        ::close(fd);
        posix::throw_errno("cannot list the cache directory", err);
    }
    Scan out;
    for (;;) {
        errno = 0;
        struct dirent *de = ::readdir(d.get());
        if (de == nullptr) {
            if (errno != 0) posix::throw_errno("cannot list the cache directory", errno);
            break;
        }
        std::string_view name(de->d_name);
        bool entry = filefmt::is_entry_name(name);
        bool temp = !entry && filefmt::is_temp_name(name);
        bool lock = !entry && !temp && name.size() == filefmt::kNameLength + 5 &&
                    name.substr(filefmt::kNameLength) == ".lock" &&
                    filefmt::is_entry_name(name.substr(0, filefmt::kNameLength));
        if (!entry && !temp && !lock) continue;
        if (de->d_type != DT_REG && de->d_type != DT_UNKNOWN) continue;  // symlinks, fifos, dirs
        struct stat st;
        if (::fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // raced away
        if (!S_ISREG(st.st_mode)) continue;
        if (temp) {
            if (now_unix_s - int64_t(st.st_mtim.tv_sec) > temp_max_age_s) ::unlinkat(dirfd, de->d_name, 0);
            else out.temps.push_back(Entry{std::string(name), uint64_t(st.st_size), st.st_mtim});
            continue;
        }
        if (lock) {
            out.lock_files.emplace_back(name);
            continue;
        }
        out.entries.push_back(Entry{std::string(name), uint64_t(st.st_size), st.st_mtim});
        out.bytes += uint64_t(st.st_size);
    }
    return out;
}

}  // namespace cachekit::l2::filedir
