// The cache's own key space in L2: which stored keys clear() and
// invalidate_namespace() may delete. Only keys of the cache's format under
// its prefix, checked shape by shape, so a database shared with other
// applications (celery:*, session:*, users:*) or with another prefix keeps
// everything that is not ours:
//  - auto mode: "{prefix}[ns:{ns}:]func:{fn}:args:{64 hex}:{0|1}{code}"
//    (codec/cache_keys.cpp), or its long form, the first 50 code points of
//    that followed by ":" and 32 hex digits;
//  - interop mode: "{prefix}{ns}:{operation}:{64 hex}" with both segments
//    valid interop segments.
// A namespace selects the keys carrying exactly that namespace (a long-form
// key whose first 50 code points end inside the namespace is not selected:
// its namespace cannot be told apart from a longer one's).
#pragma once

#include <string_view>

#include "cache/stored_value.hpp"
#include "l2/backend.hpp"

namespace cachekit::cache {

// Whether `key` (the storage prefix already removed) is of the format's
// shape; with `ns` given, also of that namespace.
bool is_own_key(Format format, std::string_view key);
bool is_own_key_in(Format format, std::string_view key, std::string_view ns);

// The selections for Backend::clear: every key of the cache, one namespace's.
l2::KeySelection own_keys(Format format, std::string_view prefix);
l2::KeySelection own_namespace_keys(Format format, std::string_view prefix, std::string_view ns);

}  // namespace cachekit::cache
