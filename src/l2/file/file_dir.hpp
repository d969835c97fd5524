// The directory of the file backend: creation with the safety policy, and the
// directory scan behind the entry/byte estimate, eviction and clear.
#pragma once

#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

#include "l2/posix_io.hpp"

namespace cachekit::l2::filedir {

// Create `path` (and missing parents) with mode 0700 and open it. Refused
// with CACHEKIT_EINVAL: a final component that is a symlink or not a
// directory, a directory owned by another user than the effective uid, or a
// directory writable by group or others. OS failures: CACHEKIT_EBACKEND.
posix::Fd open_cache_dir(const std::string &path);

struct Entry {
    std::string name;
    uint64_t size = 0;
    struct timespec mtime {};
};

struct Scan {
    std::vector<Entry> entries;  // regular files with an entry name
    std::vector<std::string> lock_files;  // "<hash>.lock" regular files
    std::vector<Entry> temps;  // temp files of writes in flight (orphans are removed, not listed)
    uint64_t bytes = 0;        // of the entries only
};

// List the directory. Temporary files of atomic writes older than
// `temp_max_age_s` (by mtime, against now_unix_s) are removed on the way
// (orphans of crashed writers); symlinks and other non-regular files are
// never followed, counted or touched.
Scan scan(int dirfd, int64_t now_unix_s, int64_t temp_max_age_s = 60);

}  // namespace cachekit::l2::filedir
