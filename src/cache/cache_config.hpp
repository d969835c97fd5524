// Turns cachekit_cache_options plus the environment (the reference SDK's
// variable names) into a CacheConfig. Explicit options win.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "cache/cache.hpp"
#include "cachekit/cachekit.h"
#include "l2/open_backend.hpp"

namespace cachekit::cache {

// How to reach the C handle's backend (a borrowed one) from the core.
struct BorrowedBackend {
    l2::ResilientBackend *backend = nullptr;
};

// Resolve options (NULL = all defaults). `open_options` converts the
// backend options (opts.backend_options, NULL = defaults) for a backend
// opened from a URL.
CacheConfig resolve_config(const cachekit_cache_options &opts, const BorrowedBackend &borrowed,
                           const std::function<l2::OpenOptions(const cachekit_backend_options *)> &open_options);

// Read the fields of a caller's options struct that fit its struct_size.
cachekit_cache_options read_cache_options(const cachekit_cache_options *opts);
cachekit_cache_options default_cache_options();

}  // namespace cachekit::cache
