// Settings of the file backend beyond FileConfig: the wall clock (injectable
// for tests of expiry), fsync, and how often the running entry/byte estimate
// is refreshed from a directory scan.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include "l2/file/file_backend.hpp"

namespace cachekit::l2 {

struct FileOptions {
    // "Now" for expiry decisions (headers hold Unix seconds). Empty = the
    // system clock. Tests set it to judge entries at a chosen instant.
    std::function<std::chrono::system_clock::time_point()> now;
    // fdatasync each written file before the rename. Off by default: a cache
    // entry lost in a power failure is a miss, and a torn file is never
    // visible under an entry name (only complete temp files are renamed in).
    bool fsync = false;
    // The entry/byte estimate is rebuilt from a directory scan at open, after
    // every eviction and clear, when this process has added 5 % of a limit
    // since the last scan, and when a write finds it older than this (other
    // processes' writes are only seen by a scan).
    std::chrono::milliseconds rescan_interval{30000};
};

std::unique_ptr<Backend> open_file(const FileConfig &config, const FileOptions &options);

}  // namespace cachekit::l2
