// What a cache stores for a value, and how a stored entry is verified:
// auto mode writes the reference SDK's CK v3 frame (around the ByteStorage
// envelope, raw MessagePack, or ciphertext); interop mode writes one plain
// MessagePack document (or ciphertext with the 4-component AAD).
#pragma once

#include <string>
#include <string_view>

#include "cachekit/cachekit.h"
#include "codec/keyring.hpp"
#include "codec/msgpack_bounds.hpp"

namespace cachekit::cache {

enum class Format { Auto, Interop };

struct ValueFormat {
    Format format = Format::Auto;
    // Auto mode's frame tag: "default" (the standard serializer) or "auto"
    // (CACHEKIT_FORMAT_AUTO_PYTHON); a read accepts only its own.
    std::string serializer = "default";
    bool integrity = true;                     // auto mode: envelope around the MessagePack
    const crypto::Keyring *keyring = nullptr;  // null: no encryption
    // Encryption off but a master key present (auto mode only): the keys an
    // encrypted frame a still-encrypting peer wrote is opened with, as the
    // reference SDK's encryption=False reader does (legacy-decrypt). Never
    // used to write; ignored when `keyring` is set.
    const crypto::Keyring *read_keyring = nullptr;
    std::string tenant = "default";
    // The largest MessagePack payload a read accepts (a cache sets its
    // max_value_bytes): a larger entry, or an envelope declaring a larger
    // original_size, is TooLarge, refused before it is decompressed.
    uint64_t max_payload_bytes = CACHEKIT_ENVELOPE_MAX_SIZE;
};

// Why a stored entry was refused. Only Corrupt and Tampered prove the entry
// bad; the others say this reader cannot or will not use it.
enum class Verdict { Ok, Corrupt, Tampered, WrongKey, Downgrade, SerializerMismatch, TooLarge };

const char *verdict_name(Verdict v);

// Encode one MessagePack payload for storage under `cache_key` (the key the
// AAD binds: the cache's Cache::aad_key).
void encode_stored(const ValueFormat &fmt, std::string_view cache_key, std::string_view payload, cachekit_buf *stored);

// Verify a stored entry and write its MessagePack payload to `payload`.
// Never throws for bad data (only std::bad_alloc); `why` gets a message,
// `facts` (when given) what the payload's check noticed.
Verdict decode_stored(const ValueFormat &fmt, std::string_view cache_key, std::string_view stored,
                      cachekit_buf *payload, std::string *why, msgpack::DocumentFacts *facts = nullptr);

// Whether a stored entry is its own payload (interop mode, no encryption):
// a read then lands in the caller's buffer and is checked there with
// check_in_place, with no copy of the value between the two.
inline bool stored_is_payload(const ValueFormat &fmt) { return fmt.format == Format::Interop && fmt.keyring == nullptr; }

// decode_stored for an entry that is its own payload, already in `payload`.
Verdict check_in_place(const ValueFormat &fmt, const cachekit_buf *payload, std::string *why,
                       msgpack::DocumentFacts *facts = nullptr);

}  // namespace cachekit::cache
