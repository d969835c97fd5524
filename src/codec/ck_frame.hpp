// The reference Python SDK's CK v3 frame (protocol.md section 4):
// "CK" 03 u32be(header length) JSON header {"s", "m", "v"} payload.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "cachekit/cachekit.h"
#include "codec/json_text.hpp"

namespace cachekit::frame {

constexpr size_t kPrefixSize = 7;

struct Decoded {
    std::string serializer;        // "s"
    json::Value metadata;          // "m" (an object)
    std::string_view metadata_json;  // the "m" text as it stands in the header
    std::string header_version;    // "v", or "" when absent
    size_t payload_offset = 0;
};

bool has_magic(const uint8_t *data, size_t len);

// The header length the prefix declares (data holds at least kPrefixSize bytes).
inline uint32_t declared_header_length(const uint8_t *data) {
    return uint32_t(data[3]) << 24 | uint32_t(data[4]) << 16 | uint32_t(data[5]) << 8 | data[6];
}

// Encode: header written as Python's json.dumps writes it.
std::string encode_header(std::string_view serializer, const json::Value &metadata);
void encode(std::string_view serializer, const json::Value &metadata, const void *payload, size_t payload_len,
            cachekit_buf *out);

// Decode; EFRAME for every malformed frame.
Decoded decode(const uint8_t *data, size_t len);

}  // namespace cachekit::frame
