#include "cache/stored_value.hpp"

#include <optional>

#include "cache/frame_facts.hpp"
#include "codec/ck_frame.hpp"
#include "codec/envelope.hpp"
#include "codec/hashing.hpp"
#include "codec/msgpack_bounds.hpp"
#include "util/buffer.hpp"
#include "util/error.hpp"

namespace cachekit::cache {
namespace {

constexpr std::string_view kFormat = "msgpack";

json::Value text_value(std::string_view s) {
    json::Value v;
    v.type = json::Value::Type::String;
    v.text = std::string(s);
    return v;
}

json::Value bool_value(bool b) {
    json::Value v;
    v.type = json::Value::Type::Bool;
    v.boolean = b;
    return v;
}

// The metadata the reference SDK writes, in its key order.
json::Value frame_metadata(bool compressed, const crypto::Fingerprint *fp, std::string_view tenant) {
    json::Value m;
    m.type = json::Value::Type::Object;
    m.members.push_back({"format", text_value(kFormat)});
    m.members.push_back({"encoding", text_value("utf-8")});
    m.members.push_back({"compressed", bool_value(compressed)});
    m.members.push_back({"original_type", text_value(kFormat)});
    if (fp) {
        m.members.push_back({"encrypted", bool_value(true)});
        m.members.push_back({"tenant_id", text_value(tenant)});
        m.members.push_back({"encryption_algorithm", text_value("AES-256-GCM")});
        m.members.push_back({"key_fingerprint", text_value(to_hex(fp->data(), fp->size()))});
    }
    return m;
}

// The bounded check every payload passes before a wrapper decodes it.
Verdict check_payload(const cachekit_buf *payload, std::string *why, msgpack::DocumentFacts *facts) {
    try {
        msgpack::check_document(reinterpret_cast<const uint8_t *>(payload->ptr), payload->size, msgpack::kMaxDepth, facts);
        return Verdict::Ok;
    } catch (const Error &e) {
        // The pre-scan's own error name, as the envelope's messages carry it.
        *why = std::string("payload is not one bounded MessagePack document: ") + status_name(e.code()) + ": " + e.what();
        return Verdict::Corrupt;
    }
}

Verdict too_large(uint64_t size, uint64_t limit, std::string *why) {
    *why = "the entry's payload of " + std::to_string(size) + " bytes is over this reader's limit of " +
           std::to_string(limit) + " bytes";
    return Verdict::TooLarge;
}

Verdict unwrap_payload(const ValueFormat &fmt, std::string_view inner, bool compressed, cachekit_buf *payload,
                       std::string *why, msgpack::DocumentFacts *facts) {
    if (compressed) {
        try {
            envelope::unwrap(reinterpret_cast<const uint8_t *>(inner.data()), inner.size(), payload, nullptr,
                             fmt.max_payload_bytes);
        } catch (const Error &e) {
            *why = std::string("envelope ") + status_name(e.code()) + ": " + e.what();
            // A declared size over a limit is not proof of corruption.
            return e.code() == CACHEKIT_ETOOBIG ? Verdict::TooLarge : Verdict::Corrupt;
        }
    } else {
        if (inner.size() > fmt.max_payload_bytes) return too_large(inner.size(), fmt.max_payload_bytes, why);
        buf_assign(payload, inner);
    }
    return check_payload(payload, why, facts);
}

Verdict decode_auto(const ValueFormat &fmt, std::string_view key, std::string_view stored, cachekit_buf *payload,
                    std::string *why, msgpack::DocumentFacts *facts) {
    const auto *bytes = reinterpret_cast<const uint8_t *>(stored.data());
    if (!frame::has_magic(bytes, stored.size())) {
        if (fmt.keyring) {
            *why = "a plaintext entry where this cache requires encryption";
            return Verdict::Downgrade;
        }
        // Auto mode is the reference Python SDK's stored form, whose reader
        // decodes no other SDK's container: a bare envelope (TypeScript) or
        // plain MessagePack (Rust) is refused at the frame's magic, never
        // sniffed (python-frame.json bare_envelope_fed_to_frame_reader,
        // plain_msgpack_fed_to_frame_reader).
        *why = "not a CK frame: the magic bytes \"CK\" are missing (auto mode reads only the reference Python "
               "SDK's frame, not another SDK's bare envelope or plain MessagePack)";
        return Verdict::Corrupt;
    }
    const FrameFacts *f = nullptr;
    try {
        f = &frame_facts(bytes, stored.size());
    } catch (const Error &e) {
        *why = e.what();
        return Verdict::Corrupt;
    }
    // The recorded name is compared as written: writers record the canonical
    // name ("default", "auto"), so a frame recording an alias ("std") or a
    // class name is another writer's (python-frame.json
    // std_recorded_as_given_frame, standard_serializer_instance_write).
    if (f->serializer != fmt.serializer) {
        *why = "entry was written by serializer \"" + f->serializer + "\", this cache reads \"" + fmt.serializer + "\"";
        return Verdict::SerializerMismatch;
    }
    // Copied out: *f is this thread's, valid until its next frame_facts call.
    const bool compressed = f->compressed;
    const std::optional<crypto::Fingerprint> fingerprint =
        f->has_fingerprint ? std::optional<crypto::Fingerprint>(f->fingerprint) : std::nullopt;
    std::string_view body = stored.substr(f->payload_offset);
    // The container is the one this reader is configured for (the envelope
    // when integrity is on), never the one the unauthenticated header's
    // "compressed" picks; a claim that disagrees is another configuration's
    // entry or a forged header, and is not read (the reference SDK's readers
    // refuse it too). python-frame.json ciphertext_plain_msgpack_claims_
    // uncompressed; encryption.json decrypted_container.
    auto other_container = [&] {
        *why = std::string("the frame claims compressed ") + (compressed ? "true" : "false") + ", this cache reads " +
               (fmt.integrity ? "the ByteStorage envelope (integrity on)" : "raw MessagePack (integrity off)");
        return Verdict::SerializerMismatch;
    };
    if (!f->encrypted) {
        if (fmt.keyring) {
            *why = "the frame claims plaintext where this cache requires encryption (no downgrade)";
            return Verdict::Downgrade;
        }
        if (compressed != fmt.integrity) return other_container();
        return unwrap_payload(fmt, body, fmt.integrity, payload, why, facts);
    }
    // An encrypting cache opens as its own tenant. A non-encrypting one with
    // a master key opens as the header's tenant, as the reference SDK's
    // legacy-decrypt read does: the tenant is bound into the AAD, so a forged
    // one fails authentication.
    const crypto::Keyring *keys = fmt.keyring ? fmt.keyring : fmt.read_keyring;
    if (!keys) {
        *why = "the entry is encrypted and this cache has no master key";
        return Verdict::WrongKey;
    }
    std::string tenant = fmt.tenant;
    if (!fmt.keyring) {
        if (!f->has_tenant) {
            *why = "the frame claims encryption but names no tenant_id to decrypt it for";
            return Verdict::Corrupt;
        }
        tenant = f->tenant;
    }
    // The header is not authenticated, but a reader only opens what it knows how to.
    if (!f->known_algorithm) {
        *why = "the frame names an encryption algorithm other than AES-256-GCM";
        return Verdict::Corrupt;
    }
    if (compressed != fmt.integrity) return other_container();
    std::string aad = crypto::build_aad(tenant, key, kFormat, compressed, kFormat);
    Buffer plain;
    try {
        keys->open(tenant, fingerprint ? &*fingerprint : nullptr, aad.data(), aad.size(), body.data(), body.size(),
                   plain.get());
    } catch (const Error &e) {
        *why = e.what();
        return e.code() == CACHEKIT_EKEYNOTFOUND ? Verdict::WrongKey : Verdict::Tampered;
    }
    return unwrap_payload(fmt, plain.view(), fmt.integrity, payload, why, facts);
}

Verdict decode_interop(const ValueFormat &fmt, std::string_view key, std::string_view stored, cachekit_buf *payload,
                       std::string *why, msgpack::DocumentFacts *facts) {
    // The document is the stored bytes (less nonce and tag when sealed).
    const uint64_t size = fmt.keyring && stored.size() >= crypto::kOverhead ? stored.size() - crypto::kOverhead : stored.size();
    if (size > fmt.max_payload_bytes) return too_large(size, fmt.max_payload_bytes, why);
    if (fmt.keyring) {
        std::string aad = crypto::build_aad(fmt.tenant, key, kFormat, false, std::nullopt);
        try {
            fmt.keyring->open(fmt.tenant, nullptr, aad.data(), aad.size(), stored.data(), stored.size(), payload);
        } catch (const Error &e) {
            *why = e.what();
            return Verdict::Tampered;
        }
        return check_payload(payload, why, facts);
    }
    buf_assign(payload, stored);
    return check_payload(payload, why, facts);
}

}  // namespace

Verdict check_in_place(const ValueFormat &fmt, const cachekit_buf *payload, std::string *why,
                       msgpack::DocumentFacts *facts) {
    if (payload->size > fmt.max_payload_bytes) return too_large(payload->size, fmt.max_payload_bytes, why);
    return check_payload(payload, why, facts);
}

const char *verdict_name(Verdict v) {
    switch (v) {
    case Verdict::Ok: return "ok";
    case Verdict::Corrupt: return "corrupt";
    case Verdict::Tampered: return "tampered";
    case Verdict::WrongKey: return "wrong_key";
    case Verdict::Downgrade: return "downgrade";
    case Verdict::SerializerMismatch: return "serializer_mismatch";
    case Verdict::TooLarge: return "too_large";
    }
    return "unknown";
}

void encode_stored(const ValueFormat &fmt, std::string_view key, std::string_view payload, cachekit_buf *stored) {
    if (fmt.format == Format::Interop) {
        if (fmt.keyring) {
            std::string aad = crypto::build_aad(fmt.tenant, key, kFormat, false, std::nullopt);
            fmt.keyring->seal(fmt.tenant, aad.data(), aad.size(), payload.data(), payload.size(), stored);
        } else {
            buf_assign(stored, payload);
        }
        return;
    }
    Buffer inner;
    std::string_view body = payload;
    if (fmt.integrity) {
        envelope::wrap(payload.data(), payload.size(), kFormat, inner.get());
        body = inner.view();
    }
    if (fmt.keyring) {
        std::string aad = crypto::build_aad(fmt.tenant, key, kFormat, fmt.integrity, kFormat);
        Buffer sealed;
        fmt.keyring->seal(fmt.tenant, aad.data(), aad.size(), body.data(), body.size(), sealed.get());
        crypto::Fingerprint fp = fmt.keyring->current_fingerprint(fmt.tenant);
        frame::encode(fmt.serializer, frame_metadata(fmt.integrity, &fp, fmt.tenant), sealed.data(), sealed.size(),
                      stored);
        return;
    }
    frame::encode(fmt.serializer, frame_metadata(fmt.integrity, nullptr, fmt.tenant), body.data(), body.size(), stored);
}

Verdict decode_stored(const ValueFormat &fmt, std::string_view key, std::string_view stored, cachekit_buf *payload,
                      std::string *why, msgpack::DocumentFacts *facts) {
    return fmt.format == Format::Interop ? decode_interop(fmt, key, stored, payload, why, facts)
                                         : decode_auto(fmt, key, stored, payload, why, facts);
}

}  // namespace cachekit::cache
