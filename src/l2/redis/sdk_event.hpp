// cachekit-py's invalidation event (its channel kSdkInvalidationChannel): a
// MessagePack map of at most 4 string entries, "r" the function's registry
// id "ck:reg:{namespace}:{hash}", "k" the invalidated cache key (absent:
// every key of the function). Untrusted bytes: bounded like the SDK's own
// decoder (event <= 4096 bytes, strings <= 1024 bytes, nothing but str).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace cachekit::l2::sdk_event {

struct Event {
    std::string registry_id;
    std::optional<std::string> key;
    std::string ns;  // the namespace part of the registry id
};

// nullopt for anything that is not such an event.
std::optional<Event> decode(std::string_view bytes);
// cachekit-py's registry hash of a function name: BLAKE3 of the name, the
// first 8 bytes in hex (the key registry's hash, codec/blake3). Names up to
// 1024 bytes (the SDK's function segment is at most 200); nullopt for longer ones.
std::optional<std::string> registry_hash(std::string_view function_name);

// The registry id "ck:reg:{ns}:{hash}" of an auto-mode cache key
// ("[ns:{ns}:]func:{fn}:args:..."); nullopt for keys of any other shape.
std::optional<std::string> registry_id_of_key(std::string_view key);

// The registry id under which this library announces a write of `key`:
// the key's own for an auto-mode key (the SDK's listeners evict it), else
// kLibraryRegistryId, which names no SDK function (its hash part is not
// hex): the SDK's listeners drop the event, libcachekit's apply its "k".
// So a cache whose feed fell back to the channel (no CLIENT TRACKING) still
// hears every key another libcachekit process writes, interop keys too.
inline constexpr std::string_view kLibraryRegistryId = "ck:reg::libcachekit";
std::string announced_registry_id(std::string_view key);

// The event for `key` (nullopt: the whole namespace) under registry id `registry_id`.
std::string encode(std::string_view registry_id, std::optional<std::string_view> key);

}  // namespace cachekit::l2::sdk_event
