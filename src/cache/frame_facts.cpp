#include "cache/frame_facts.hpp"

#include <algorithm>
#include <string_view>

#include "codec/ck_frame.hpp"
#include "codec/hashing.hpp"

namespace cachekit::cache {
namespace {

bool meta_bool(const json::Value &m, std::string_view key) {
    const json::Value *v = m.find(key);
    return v && v->type == json::Value::Type::Bool && v->boolean;
}

FrameFacts facts_of(const frame::Decoded &f) {
    FrameFacts facts;
    facts.serializer = f.serializer;
    facts.compressed = meta_bool(f.metadata, "compressed");
    facts.encrypted = meta_bool(f.metadata, "encrypted");
    const json::Value *alg = f.metadata.find("encryption_algorithm");
    facts.known_algorithm = !alg || (alg->type == json::Value::Type::String && alg->text == "AES-256-GCM");
    const json::Value *fp = f.metadata.find("key_fingerprint");
    std::string fp_bytes;
    if (fp && fp->type == json::Value::Type::String && from_hex(fp->text, fp_bytes) &&
        fp_bytes.size() == facts.fingerprint.size()) {
        std::copy(fp_bytes.begin(), fp_bytes.end(), facts.fingerprint.begin());
        facts.has_fingerprint = true;
    }
    const json::Value *tenant = f.metadata.find("tenant_id");
    if (tenant && tenant->type == json::Value::Type::String && !tenant->text.empty()) {
        facts.tenant = tenant->text;
        facts.has_tenant = true;
    }
    facts.payload_offset = f.payload_offset;
    return facts;
}

// The prefix and JSON header of a well-formed frame, or an empty view.
std::string_view header_bytes(const uint8_t *bytes, size_t len) {
    if (len < frame::kPrefixSize) return {};
    const uint64_t hlen = frame::declared_header_length(bytes);
    if (hlen > len - frame::kPrefixSize) return {};
    return {reinterpret_cast<const char *>(bytes), frame::kPrefixSize + size_t(hlen)};
}

struct LastHeader {
    std::string bytes;  // prefix + JSON header, byte for byte
    FrameFacts facts;
};

}  // namespace

const FrameFacts &frame_facts(const uint8_t *bytes, size_t len) {
    thread_local LastHeader last;
    const std::string_view header = header_bytes(bytes, len);
    // Equal bytes (magic and version included) parse to equal facts.
    if (!header.empty() && !last.bytes.empty() && header == last.bytes) return last.facts;
    FrameFacts facts = facts_of(frame::decode(bytes, len));  // throws for a malformed frame
    last.bytes.assign(header);
    last.facts = std::move(facts);
    return last.facts;
}

}  // namespace cachekit::cache
