// The file backend: one file per key in a directory shared by the processes
// of one machine, byte-compatible with the reference Python SDK's FileBackend
// (14-byte header "CK" 01 reserved flags u16be expiry u64be, then the payload;
// file name = hex BLAKE2b-128 of the key).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "l2/backend.hpp"

namespace cachekit::l2 {

struct FileConfig {
    std::string directory;               // created 0700 when missing
    uint64_t max_bytes = 1ULL << 30;     // writes stop at 90 %, evicting (oldest first) down to 70 %
    uint64_t max_entries = 10000;
    uint64_t max_value_bytes = 100ULL << 20;
    // The longest wait for one entry's lock (a reader or writer of it); past
    // it the call fails for that key alone (a KeyFault, see key_fault.hpp).
    std::chrono::milliseconds lock_timeout{50};
};

std::unique_ptr<Backend> open_file(const FileConfig &config);

}  // namespace cachekit::l2
