// MessagePack rendered as JSON text for people (inspect, tools): bin as
// {"$bytes": hex}, ext as {"$ext": type, "data": hex}.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cachekit::msgpack {

// Bounded-check then render one document.
std::string to_json(const uint8_t *data, size_t len);

// JSON string literal of UTF-8 text (non-ASCII kept as UTF-8).
void append_json_string(std::string &out, std::string_view utf8);

}  // namespace cachekit::msgpack
