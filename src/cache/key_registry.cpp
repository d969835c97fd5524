#include "cache/key_registry.hpp"

#include <mutex>

#include "codec/blake3.hpp"
#include "util/error.hpp"

namespace cachekit::cache {
namespace {
constexpr int kMaxTries = 4;
}  // namespace

std::string KeyRegistry::set_name(std::string_view ns, std::string_view function) {
    std::string name = "ck:reg:";
    name.append(ns).append(":").append(blake3::hex_prefix(function, 8));
    return name;
}

std::string KeyRegistry::track(std::string_view ns, std::string_view function, std::string_view head) {
    if (function.empty()) fail(CACHEKIT_EINVAL, "track_function: the function identity is empty");
    if (head.empty() || head.back() != ':')
        fail(CACHEKIT_EINVAL, "track_function: the key head must be non-empty and end with ':'");
    std::string name = set_name(ns, function);
    std::unique_lock lock(mutex_);
    sets_.insert_or_assign(std::string(head), name);
    empty_.store(false, std::memory_order_release);
    return name;
}

std::optional<std::string> KeyRegistry::set_of(std::string_view key) const {
    if (empty()) return std::nullopt;
    std::shared_lock lock(mutex_);
    // Longest head first, among the prefixes ending at one of the key's last
    // few ':' (a head ends 1 (interop) or 2 (auto mode) separators before the
    // key's end): bounded work however many ':' a key holds.
    size_t end = key.size();
    for (int tries = 0; tries < kMaxTries && end > 0; ++tries) {
        end = key.rfind(':', end - 1);
        if (end == std::string_view::npos) break;
        auto it = sets_.find(key.substr(0, end + 1));
        if (it != sets_.end()) return it->second;
    }
    return std::nullopt;
}

}  // namespace cachekit::cache
