#include "codec/inspect.hpp"

#include <optional>

#include "codec/ck_frame.hpp"
#include "codec/container_v2.hpp"
#include "codec/envelope.hpp"
#include "codec/hashing.hpp"
#include "codec/msgpack_bounds.hpp"
#include "codec/msgpack_json.hpp"
#include "util/buffer.hpp"
#include "util/error.hpp"

namespace cachekit::inspect {
namespace {

// Builds the report object field by field.
class Report {
public:
    void field(std::string_view name, std::string_view json_value) {
        out_ += out_.empty() ? "{" : ", ";
        msgpack::append_json_string(out_, name);
        out_ += ": ";
        out_ += json_value;
    }
    void text(std::string_view name, std::string_view value) {
        std::string quoted;
        msgpack::append_json_string(quoted, value);
        field(name, quoted);
    }
    void number(std::string_view name, uint64_t v) { field(name, std::to_string(v)); }
    void failure(const Error &e) {
        text("checks", "fail");
        text("error", status_name(e.code()));
        text("message", e.what());
    }
    std::string finish() { return out_.empty() ? "{}" : out_ + "}"; }

private:
    std::string out_;
};

// Render a MessagePack payload as the report's "value" (or say why not).
void add_value(Report &r, const uint8_t *data, size_t len) {
    try {
        std::string json = msgpack::to_json(data, len);
        r.text("checks", "pass");
        r.field("value", json);
    } catch (const Error &e) {
        r.failure(e);
    }
}

std::string_view meta_string(const json::Value &meta, std::string_view key, std::string_view fallback) {
    const json::Value *v = meta.find(key);
    return v && v->type == json::Value::Type::String ? std::string_view(v->text) : fallback;
}

bool meta_bool(const json::Value &meta, std::string_view key) {
    const json::Value *v = meta.find(key);
    return v && v->type == json::Value::Type::Bool && v->boolean;
}

void describe_frame(Report &r, const uint8_t *data, size_t len, const Context &ctx) {
    frame::Decoded f;
    try {
        f = frame::decode(data, len);
    } catch (const Error &e) {
        r.text("kind", "ck_frame");
        r.number("size", len);
        r.failure(e);
        return;
    }
    r.text("kind", "ck_frame");
    r.number("size", len);
    r.text("serializer", f.serializer);
    r.field("metadata", f.metadata_json);
    const uint8_t *payload = data + f.payload_offset;
    size_t payload_len = len - f.payload_offset;
    r.number("payload_size", payload_len);
    const bool compressed = meta_bool(f.metadata, "compressed");
    std::string_view format = meta_string(f.metadata, "format", "msgpack");
    Buffer plain;
    if (meta_bool(f.metadata, "encrypted")) {
        if (!ctx.keyring || ctx.cache_key.empty()) {
            r.text("payload", "ciphertext");
            r.text("checks", "not_checked");
            r.text("message", "encrypted: give a master key and the cache key to open it");
            return;
        }
        std::string_view tenant = ctx.tenant.empty() ? meta_string(f.metadata, "tenant_id", crypto::kDefaultTenant) : ctx.tenant;
        std::optional<std::string_view> original_type;
        if (const json::Value *ot = f.metadata.find("original_type"); ot && ot->type == json::Value::Type::String)
            original_type = ot->text;
        std::string aad = crypto::build_aad(tenant, ctx.cache_key, format, compressed, original_type);
        std::string fp_bytes;
        crypto::Fingerprint fp;
        const crypto::Fingerprint *fpp = nullptr;
        if (from_hex(meta_string(f.metadata, "key_fingerprint", ""), fp_bytes) && fp_bytes.size() == fp.size()) {
            std::copy(fp_bytes.begin(), fp_bytes.end(), fp.begin());
            fpp = &fp;
        }
        try {
            int index = ctx.keyring->open(tenant, fpp, aad.data(), aad.size(), payload, payload_len, plain.get());
            r.number("key_index", uint64_t(index));
        } catch (const Error &e) {
            r.text("payload", "ciphertext");
            r.failure(e);
            return;
        }
        payload = reinterpret_cast<const uint8_t *>(plain.data());
        payload_len = plain.size();
    }
    if (format != "msgpack") {
        r.text("payload", format);
        r.text("checks", "not_checked");
        r.text("message", "only msgpack payloads are decoded here");
        return;
    }
    if (compressed) {
        Buffer inner;
        try {
            envelope::unwrap(payload, payload_len, inner.get(), nullptr);
        } catch (const Error &e) {
            r.text("payload", "envelope");
            r.failure(e);
            return;
        }
        r.text("payload", "envelope");
        add_value(r, reinterpret_cast<const uint8_t *>(inner.data()), inner.size());
        return;
    }
    r.text("payload", "msgpack");
    add_value(r, payload, payload_len);
}

}  // namespace

std::string describe(const uint8_t *data, size_t len, const Context &ctx) {
    Report r;
    if (frame::has_magic(data, len) && len >= 3 && data[2] == 3) {
        describe_frame(r, data, len, ctx);
        return r.finish();
    }
    if (container_v2::has_magic(data, len)) {
        r.text("kind", "interop_v2");
        r.number("size", len);
        Buffer value;
        try {
            container_v2::unwrap(data, len, value.get());
        } catch (const Error &e) {
            r.failure(e);
            return r.finish();
        }
        add_value(r, reinterpret_cast<const uint8_t *>(value.data()), value.size());
        return r.finish();
    }
    if (envelope::looks_like_envelope(data, len)) {
        Buffer payload, format;
        try {
            envelope::unwrap(data, len, payload.get(), format.get());
            r.text("kind", "envelope");
            r.number("size", len);
            r.text("format", format.view());
            r.number("original_size", payload.size());
            add_value(r, reinterpret_cast<const uint8_t *>(payload.data()), payload.size());
            return r.finish();
        } catch (const Error &e) {
            if (e.code() != CACHEKIT_EDESERIALIZE) {  // shaped like an envelope, but it fails a later check
                r.text("kind", "envelope");
                r.number("size", len);
                r.failure(e);
                return r.finish();
            }
        }
    }
    try {
        msgpack::check_document(data, len);
        r.text("kind", "msgpack");
        r.number("size", len);
        add_value(r, data, len);
        return r.finish();
    } catch (const Error &) {
    }
    if (len >= crypto::kOverhead && ctx.keyring && !ctx.cache_key.empty()) {
        // An interop entry: nonce || ciphertext || tag with the 4-component AAD.
        std::string_view tenant = ctx.tenant.empty() ? crypto::kDefaultTenant : ctx.tenant;
        std::string aad = crypto::build_aad(tenant, ctx.cache_key, "msgpack", false, std::nullopt);
        Buffer plain;
        r.text("kind", "ciphertext");
        r.number("size", len);
        try {
            int index = ctx.keyring->open(tenant, nullptr, aad.data(), aad.size(), data, len, plain.get());
            r.number("key_index", uint64_t(index));
        } catch (const Error &e) {
            r.failure(e);
            return r.finish();
        }
        add_value(r, reinterpret_cast<const uint8_t *>(plain.data()), plain.size());
        return r.finish();
    }
    r.text("kind", len >= crypto::kOverhead ? "ciphertext" : "unknown");
    r.number("size", len);
    r.text("checks", "not_checked");
    r.text("message", len >= crypto::kOverhead
                          ? "not a frame, envelope or MessagePack document: probably ciphertext (give a key and the cache key to open it)"
                          : "not a frame, envelope or MessagePack document");
    return r.finish();
}

}  // namespace cachekit::inspect
