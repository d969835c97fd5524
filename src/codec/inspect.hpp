// Says what a stored value is (CK frame, envelope, interop/v2, plain
// MessagePack, ciphertext), whether its checks pass, and its decoded value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "codec/keyring.hpp"

namespace cachekit::inspect {

struct Context {
    const crypto::Keyring *keyring = nullptr;  // to open ciphertext
    std::string_view tenant;                   // "" = from the frame, else "default"
    std::string_view cache_key;                // the AAD binds it; needed to open
};

// A JSON object describing `data`; never throws for bad input.
std::string describe(const uint8_t *data, size_t len, const Context &ctx);

}  // namespace cachekit::inspect
