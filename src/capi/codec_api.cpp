// extern "C" shims for the codec calls: argument checks, then the codec layer.
#include <cstring>
#include <string>
#include <string_view>

#include "capi/boundary.hpp"
#include "codec/cache_keys.hpp"
#include "codec/ck_frame.hpp"
#include "codec/container_v2.hpp"
#include "codec/crypto.hpp"
#include "codec/envelope.hpp"
#include "codec/inspect.hpp"
#include "codec/json_text.hpp"
#include "codec/keyring.hpp"
#include "codec/msgpack_bounds.hpp"
#include "codec/msgpack_canonical.hpp"
#include "codec/msgpack_json.hpp"
#include "codec/utf8.hpp"
#include "util/buffer.hpp"

using namespace cachekit;
using capi::guarded;
using capi::require;
using capi::require_bytes;

struct cachekit_keyring {
    std::unique_ptr<crypto::Keyring> ring;
};

namespace {

const uint8_t *bytes(const void *p) { return static_cast<const uint8_t *>(p); }

std::string_view text(const char *s) { return s ? std::string_view(s) : std::string_view(); }

std::string_view tenant_or_default(const char *tenant) {
    return tenant ? std::string_view(tenant) : crypto::kDefaultTenant;
}

}  // namespace

extern "C" {

CACHEKIT_API int cachekit_msgpack_check(const void *data, size_t len, uint32_t max_depth) noexcept {
    return guarded([&] {
        require_bytes(data, len, "data");
        msgpack::check_document(bytes(data), len, max_depth == 0 ? msgpack::kMaxDepth : max_depth);
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_msgpack_canonical(cachekit_buf *out, const void *data, size_t len, int profile) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        require_bytes(data, len, "data");
        require(profile == CACHEKIT_PROFILE_ARGS || profile == CACHEKIT_PROFILE_VALUE ||
                    profile == CACHEKIT_PROFILE_AUTO_ARGS,
                "unknown canonical profile");
        msgpack::canonicalize(bytes(data), len, msgpack::Profile(profile), out);
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_msgpack_to_json(cachekit_buf *out, const void *data, size_t len) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        require_bytes(data, len, "data");
        buf_assign(out, msgpack::to_json(bytes(data), len));
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_serializer_code(cachekit_buf *out, const char *identity) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        require(identity != nullptr, "a serializer identity that is not a string (NULL) has no code");
        buf_assign(out, keys::serializer_code(identity));
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_key_auto(cachekit_buf *out, const char *ns, const char *module, const char *qualname,
                                   const void *args, size_t args_len, int integrity, const char *serializer) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        require(module != nullptr && qualname != nullptr, "module and qualname are required");
        require(args != nullptr && args_len > 0, "args (the MessagePack of [args, kwargs]) is required");
        require(serializer != nullptr, "a serializer identity that is not a string (NULL) has no code");
        buf_assign(out, keys::auto_key(text(ns), module, qualname, bytes(args), args_len, integrity != 0, serializer));
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_key_custom(cachekit_buf *out, const char *ns, const char *module, const char *qualname,
                                     const void *key, size_t key_len) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        require(module != nullptr && qualname != nullptr, "module and qualname are required");
        require(key != nullptr || key_len == 0, "key is NULL with a non-zero length");
        const std::string_view k(static_cast<const char *>(key), key_len);
        require(utf8_valid(text(ns)) && utf8_valid(module) && utf8_valid(qualname) && utf8_valid(k),
                "the namespace, module, qualname and key must be UTF-8");
        buf_assign(out, keys::custom_key(text(ns), module, qualname, k));
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_key_interop(cachekit_buf *out, cachekit_buf *canonical, const char *ns,
                                      const char *operation, const void *args, size_t args_len) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        require(ns != nullptr && operation != nullptr, "namespace and operation are required");
        require(args != nullptr && args_len > 0, "args (a MessagePack array) is required");
        Buffer scratch;
        std::string key = keys::interop_key(ns, operation, bytes(args), args_len, canonical ? canonical : scratch.get());
        buf_assign(out, key);
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_envelope_wrap(cachekit_buf *out, const void *data, size_t len, const char *format) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        require_bytes(data, len, "data");
        envelope::wrap(data, len, format ? std::string_view(format) : std::string_view("msgpack"), out);
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_envelope_unwrap(cachekit_buf *out, cachekit_buf *format, const void *env,
                                          size_t len) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        require_bytes(env, len, "envelope");
        envelope::unwrap(bytes(env), len, out, format);
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_frame_encode(cachekit_buf *out, const char *serializer, const char *metadata_json,
                                       const void *payload, size_t payload_len) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        require(serializer != nullptr && serializer[0] != '\0', "a serializer name is required");
        require(metadata_json != nullptr, "metadata_json is required");
        require_bytes(payload, payload_len, "payload");
        json::Value meta = json::parse(metadata_json, CACHEKIT_EINVAL, 32);
        frame::encode(serializer, meta, payload, payload_len, out);
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_frame_decode(cachekit_buf *serializer, cachekit_buf *metadata_json, size_t *payload_offset,
                                       const void *frame_data, size_t len) noexcept {
    return guarded([&] {
        require(payload_offset != nullptr, "payload_offset is NULL");
        require_bytes(frame_data, len, "frame");
        frame::Decoded d = frame::decode(bytes(frame_data), len);
        if (serializer) buf_assign(serializer, d.serializer);
        if (metadata_json) buf_assign(metadata_json, d.metadata_json);
        *payload_offset = d.payload_offset;
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_container_v2_wrap(cachekit_buf *out, const void *value, size_t len, int method) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        require_bytes(value, len, "value");
        container_v2::wrap(bytes(value), len, method, out);
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_container_v2_unwrap(cachekit_buf *out, const void *container, size_t len) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        require_bytes(container, len, "container");
        container_v2::unwrap(bytes(container), len, out);
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_crypto_available(void) noexcept {
    try {
        return crypto::aes_gcm_available() ? 1 : 0;
    } catch (...) {
        return 0;
    }
}

CACHEKIT_API int cachekit_master_key_from_hex(unsigned char out[CACHEKIT_KEY_SIZE], const char *hex,
                                              size_t len) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        require_bytes(hex, len, "hex");
        crypto::Key key = crypto::master_key_from_hex(std::string_view(hex ? hex : "", len));
        std::memcpy(out, key.data(), key.size());
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_crypto_derive(cachekit_derived_keys *out, const void *master_key, size_t master_key_len,
                                        const char *tenant) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        require(master_key != nullptr, "master_key is NULL");
        if (master_key_len != CACHEKIT_KEY_SIZE)
            fail(CACHEKIT_EINVAL, "a raw master key is exactly 32 bytes; got " + std::to_string(master_key_len));
        crypto::Key master;
        std::memcpy(master.data(), master_key, master.size());
        std::string_view t = tenant_or_default(tenant);
        crypto::Key enc = crypto::derive(master, "encryption", t);
        crypto::Key auth = crypto::derive(master, "authentication", t);
        crypto::Key ck = crypto::derive(master, "cache_keys", t);
        crypto::Fingerprint fp = crypto::fingerprint(enc);
        std::memcpy(out->encryption, enc.data(), enc.size());
        std::memcpy(out->authentication, auth.data(), auth.size());
        std::memcpy(out->cache_keys, ck.data(), ck.size());
        std::memcpy(out->fingerprint, fp.data(), fp.size());
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_crypto_aad(cachekit_buf *out, const char *tenant, const char *cache_key, const char *format,
                                     int compressed, const char *original_type) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        require(cache_key != nullptr, "cache_key is required");
        require(format != nullptr, "format is required");
        require(tenant == nullptr || tenant[0] != '\0', "a tenant id holds 1..1024 bytes (NULL means \"default\")");
        std::optional<std::string_view> ot;
        if (original_type) ot = original_type;
        buf_assign(out, crypto::build_aad(tenant_or_default(tenant), cache_key, format, compressed != 0, ot));
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_crypto_encrypt(cachekit_buf *out, const unsigned char key[CACHEKIT_KEY_SIZE], const void *aad,
                                         size_t aad_len, const void *plaintext, size_t plaintext_len,
                                         const unsigned char *nonce) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        require(key != nullptr, "key is NULL");
        require_bytes(aad, aad_len, "aad");
        require_bytes(plaintext, plaintext_len, "plaintext");
        crypto::Key k;
        std::memcpy(k.data(), key, k.size());
        crypto::AesKey aes(k);
        crypto::Nonce n;
        if (nonce) std::memcpy(n.data(), nonce, n.size());
        else n = crypto::random_nonce();
        aes.seal(n, aad, aad_len, plaintext, plaintext_len, out);
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_crypto_decrypt(cachekit_buf *out, const unsigned char key[CACHEKIT_KEY_SIZE], const void *aad,
                                         size_t aad_len, const void *ciphertext, size_t ciphertext_len) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        require(key != nullptr, "key is NULL");
        require_bytes(aad, aad_len, "aad");
        require_bytes(ciphertext, ciphertext_len, "ciphertext");
        if (ciphertext_len < crypto::kOverhead)
            fail(CACHEKIT_ECIPHERTEXT, "ciphertext of " + std::to_string(ciphertext_len) +
                                           " bytes is shorter than nonce + tag (28 bytes)");
        crypto::Key k;
        std::memcpy(k.data(), key, k.size());
        crypto::AesKey aes(k);
        if (!aes.open(aad, aad_len, ciphertext, ciphertext_len, out))
            fail(CACHEKIT_EAUTH, "authentication failed: wrong key, wrong AAD or tampered ciphertext");
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_keyring_new(cachekit_keyring **out, const char *current_hex, const char *previous_hex) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        *out = nullptr;
        require(current_hex != nullptr, "current_hex is required");
        auto ring = std::make_unique<cachekit_keyring>();
        ring->ring = crypto::Keyring::from_hex(current_hex, text(previous_hex));
        *out = ring.release();
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_keyring_new_raw(cachekit_keyring **out, const void *current, size_t current_len,
                                          const void *previous, size_t previous_count) noexcept {
    return guarded([&] {
        require(out != nullptr, "out is NULL");
        *out = nullptr;
        require(current != nullptr, "current is NULL");
        if (current_len != CACHEKIT_KEY_SIZE)
            fail(CACHEKIT_EINVAL, "a raw master key is exactly 32 bytes; got " + std::to_string(current_len));
        require(previous != nullptr || previous_count == 0, "previous is NULL with a non-zero count");
        crypto::Key cur;
        std::memcpy(cur.data(), current, cur.size());
        std::vector<crypto::Key> prev(previous_count);
        if (previous_count > CACHEKIT_MAX_PREVIOUS_KEYS)
            fail(CACHEKIT_EINVAL, "at most 3 previous master keys are allowed");
        for (size_t i = 0; i < previous_count; ++i)
            std::memcpy(prev[i].data(), bytes(previous) + i * CACHEKIT_KEY_SIZE, CACHEKIT_KEY_SIZE);
        auto ring = std::make_unique<cachekit_keyring>();
        ring->ring = std::make_unique<crypto::Keyring>(cur, std::move(prev));
        *out = ring.release();
        return CACHEKIT_OK;
    });
}

CACHEKIT_API void cachekit_keyring_free(cachekit_keyring *keyring) noexcept { delete keyring; }

CACHEKIT_API int cachekit_keyring_fingerprint(const cachekit_keyring *keyring,
                                              unsigned char out[CACHEKIT_FINGERPRINT_SIZE], const char *tenant) noexcept {
    return guarded([&] {
        require(keyring != nullptr && out != nullptr, "keyring and out are required");
        crypto::Fingerprint fp = keyring->ring->current_fingerprint(tenant_or_default(tenant));
        std::memcpy(out, fp.data(), fp.size());
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_keyring_encrypt(const cachekit_keyring *keyring, cachekit_buf *out, const char *tenant,
                                          const void *aad, size_t aad_len, const void *plaintext,
                                          size_t plaintext_len) noexcept {
    return guarded([&] {
        require(keyring != nullptr && out != nullptr, "keyring and out are required");
        require_bytes(aad, aad_len, "aad");
        require_bytes(plaintext, plaintext_len, "plaintext");
        keyring->ring->seal(tenant_or_default(tenant), aad, aad_len, plaintext, plaintext_len, out);
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_keyring_decrypt(const cachekit_keyring *keyring, cachekit_buf *out, int *key_index,
                                          const char *tenant, const unsigned char *fingerprint, const void *aad,
                                          size_t aad_len, const void *ciphertext, size_t ciphertext_len) noexcept {
    return guarded([&] {
        require(keyring != nullptr && out != nullptr, "keyring and out are required");
        require_bytes(aad, aad_len, "aad");
        require_bytes(ciphertext, ciphertext_len, "ciphertext");
        crypto::Fingerprint fp;
        if (fingerprint) std::memcpy(fp.data(), fingerprint, fp.size());
        int index = keyring->ring->open(tenant_or_default(tenant), fingerprint ? &fp : nullptr, aad, aad_len,
                                        ciphertext, ciphertext_len, out);
        if (key_index) *key_index = index;
        return CACHEKIT_OK;
    });
}

CACHEKIT_API int cachekit_inspect(cachekit_buf *out_json, const void *data, size_t len, const cachekit_keyring *keyring,
                                  const char *tenant, const char *cache_key) noexcept {
    return guarded([&] {
        require(out_json != nullptr, "out_json is NULL");
        require_bytes(data, len, "data");
        inspect::Context ctx;
        ctx.keyring = keyring ? keyring->ring.get() : nullptr;
        ctx.tenant = text(tenant);
        ctx.cache_key = text(cache_key);
        buf_assign(out_json, inspect::describe(bytes(data), len, ctx));
        return CACHEKIT_OK;
    });
}

}  // extern "C"
