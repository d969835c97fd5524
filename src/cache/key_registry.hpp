// Which registry (the reference SDK's server-side key registry, docs/redis.md
// "Key registry") lists a key the cache writes. A wrapper declares each
// function it caches: its namespace, its identity "{module}.{qualname}" and
// the head every key of that function starts with, ending in ':' (auto mode
// "[ns:{ns}:]func:{fn}:args:", interop "{ns}:{operation}:"). A key belongs to
// the function with the longest declared head it starts with; a key no head
// covers (a long-form key, a key= key) is listed nowhere.
#pragma once

#include <atomic>
#include <new>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace cachekit::cache {

class KeyRegistry {
public:
    // "ck:reg:{ns}:{first 8 bytes of BLAKE3(function), hex}": the set's name
    // before the cache's key_prefix.
    static std::string set_name(std::string_view ns, std::string_view function);

    // Declare a function; a head declared again is re-pointed. Returns the set name.
    std::string track(std::string_view ns, std::string_view function, std::string_view head);
    // The set listing `key` (unprefixed), or nullopt.
    std::optional<std::string> set_of(std::string_view key) const;
    bool empty() const noexcept { return empty_.load(std::memory_order_acquire); }

    // fork(): held across it, so a child never inherits the lock taken by a
    // thread that does not exist there; the child gets a fresh one.
    void fork_prepare() { mutex_.lock(); }
    void fork_parent() { mutex_.unlock(); }
    void fork_child() { new (&mutex_) std::shared_mutex; }

private:
    struct Hash {
        using is_transparent = void;
        size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
    };
    mutable std::shared_mutex mutex_;
    std::unordered_map<std::string, std::string, Hash, std::equal_to<>> sets_;  // head -> set name
    std::atomic<bool> empty_{true};
};

}  // namespace cachekit::cache
