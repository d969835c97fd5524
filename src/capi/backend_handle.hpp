// The C backend handle and the option conversions that the backend and the
// cache shims share.
#pragma once

#include <memory>
#include <string_view>

#include "cachekit/cachekit.h"
#include "l2/open_backend.hpp"

struct cachekit_backend {
    std::unique_ptr<cachekit::l2::ResilientBackend> backend;
};

namespace cachekit::capi {

// The defaults merged with the fields of `opts` that fit its struct_size.
cachekit_backend_options read_backend_options(const cachekit_backend_options *opts);
l2::OpenOptions to_open_options(const cachekit_backend_options &o);

// A TTL argument in seconds: 0 = no expiry; negative, NaN, infinite or
// past 100 years is EINVAL; sub-millisecond rounds up to 1 ms.
l2::Ttl ttl_arg(double ttl_seconds);

}  // namespace cachekit::capi
