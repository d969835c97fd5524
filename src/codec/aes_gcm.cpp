// Choosing the AES-256-GCM provider, once per process.
#include "codec/aes_gcm.hpp"

#include <cstdlib>
#include <string>
#include <utility>

#include "cachekit/cachekit.h"

namespace cachekit::crypto::aes_gcm {

namespace {

// The provider when it can run here, else ECRYPTO_UNAVAILABLE with why not.
Choice pick(const Provider &provider, std::string reason) {
    Choice c;
    if (provider.available()) {
        c.provider = &provider;
    } else {
        c.error = CACHEKIT_ECRYPTO_UNAVAILABLE;
        c.reason = std::move(reason);
    }
    return c;
}

}  // namespace

Choice choose(std::string_view setting, const Provider &sodium, const Provider &openssl) {
    if (setting.empty() || setting == "auto") {
        if (sodium.available()) return pick(sodium, {});
        return pick(openssl,
                    "AES-256-GCM is unavailable: libsodium's needs AES-NI and PCLMUL, which this CPU lacks, "
                    "and OpenSSL's EVP AES-256-GCM could not be loaded");
    }
    if (setting == "sodium")
        return pick(sodium,
                    "CACHEKIT_AES_GCM_PROVIDER=sodium, but libsodium's AES-256-GCM needs AES-NI and PCLMUL, "
                    "which this CPU lacks (auto or openssl work on every CPU)");
    if (setting == "openssl")
        return pick(openssl, "CACHEKIT_AES_GCM_PROVIDER=openssl, but OpenSSL's EVP AES-256-GCM could not be loaded");
    Choice c;
    c.error = CACHEKIT_EINVAL;
    std::string shown(setting.substr(0, 64));
    for (char &ch : shown)
        if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) > 0x7e) ch = '?';
    c.reason = "CACHEKIT_AES_GCM_PROVIDER is \"" + shown + "\"; expected auto, sodium or openssl";
    return c;
}

Choice choose(std::string_view setting) { return choose(setting, sodium_provider(), openssl_provider()); }

const Choice &active() {
    static const Choice chosen = [] {
        const char *v = std::getenv("CACHEKIT_AES_GCM_PROVIDER");
        return choose(v ? std::string_view(v) : std::string_view());
    }();
    return chosen;
}

}  // namespace cachekit::crypto::aes_gcm
