// What reading an auto-mode entry needs from its CK frame header, read once
// per distinct header: the entries one cache writes repeat one header (the
// serializer, the flags, the tenant and the key fingerprint), so each thread
// remembers the last header it parsed and an entry with the same header
// bytes skips the JSON parse (about 60 % of an encrypted L1 hit).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "codec/crypto.hpp"

namespace cachekit::cache {

struct FrameFacts {
    std::string serializer;        // "s"
    bool compressed = false;       // "m"."compressed" is true
    bool encrypted = false;        // "m"."encrypted" is true
    bool known_algorithm = true;   // no "m"."encryption_algorithm", or "AES-256-GCM"
    bool has_fingerprint = false;  // "m"."key_fingerprint" is 32 hex digits
    bool has_tenant = false;       // "m"."tenant_id" is a non-empty string
    std::string tenant;            // "m"."tenant_id"
    crypto::Fingerprint fingerprint{};
    size_t payload_offset = 0;
};

// The facts of the CK frame at `bytes` (which starts with the magic).
// Throws Error (EFRAME) for a malformed frame, as frame::decode does. The
// reference is valid until this thread's next call.
const FrameFacts &frame_facts(const uint8_t *bytes, size_t len);

}  // namespace cachekit::cache
