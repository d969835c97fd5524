#include "codec/ck_frame.hpp"

#include "util/buffer.hpp"
#include "util/error.hpp"

namespace cachekit::frame {

bool has_magic(const uint8_t *data, size_t len) { return len >= 2 && data[0] == 'C' && data[1] == 'K'; }

std::string encode_header(std::string_view serializer, const json::Value &metadata) {
    std::string header = "{\"s\": ";
    json::write_python_string(serializer, header);
    header += ", \"m\": ";
    json::write_python(metadata, header);
    header += ", \"v\": \"2.0\"}";
    return header;
}

void encode(std::string_view serializer, const json::Value &metadata, const void *payload, size_t payload_len,
            cachekit_buf *out) {
    if (metadata.type != json::Value::Type::Object) fail(CACHEKIT_EINVAL, "frame metadata must be a JSON object");
    std::string header = encode_header(serializer, metadata);
    if (header.size() > UINT32_MAX) fail(CACHEKIT_ETOOBIG, "frame header too large");
    uint32_t hlen = uint32_t(header.size());
    char *p = buf_resize(out, kPrefixSize + header.size() + payload_len);
    p[0] = 'C';
    p[1] = 'K';
    p[2] = 3;
    for (int i = 0; i < 4; ++i) p[3 + i] = char(hlen >> (24 - 8 * i));
    std::memcpy(p + kPrefixSize, header.data(), header.size());
    if (payload_len) std::memcpy(p + kPrefixSize + header.size(), payload, payload_len);
}

Decoded decode(const uint8_t *data, size_t len) {
    if (len < kPrefixSize) fail(CACHEKIT_EFRAME, "a CK frame is at least 7 bytes (magic, version, header length)");
    if (!has_magic(data, len)) fail(CACHEKIT_EFRAME, "not a CK frame: the magic bytes \"CK\" are missing");
    if (data[2] != 3) fail(CACHEKIT_EFRAME, "CK frame version " + std::to_string(data[2]) + " (only version 3 is defined)");
    const uint64_t hlen = declared_header_length(data);
    if (hlen > len - kPrefixSize)
        fail(CACHEKIT_EFRAME, "declared header length (" + std::to_string(hlen) + ") exceeds the bytes present in the frame");
    std::string_view header(reinterpret_cast<const char *>(data + kPrefixSize), size_t(hlen));
    json::Value root = json::parse(header, CACHEKIT_EFRAME, 16);
    if (root.type != json::Value::Type::Object) fail(CACHEKIT_EFRAME, "the CK frame header is not a JSON object");
    const json::Value *s = root.find("s");
    const json::Value *m = root.find("m");
    const json::Value *v = root.find("v");
    // A frame that records no serializer name matches no reader (the
    // reference SDK refuses it in its one header parser): absent, not a
    // string and "" are the same mistake.
    if (!s || s->type != json::Value::Type::String || s->text.empty())
        fail(CACHEKIT_EFRAME, "the CK frame header records no serializer name (\"s\" is missing, empty or not a string)");
    if (!m || m->type != json::Value::Type::Object) fail(CACHEKIT_EFRAME, "the CK frame header has no object \"m\"");
    Decoded d;
    d.serializer = s->text;
    d.metadata = *m;
    d.metadata_json = header.substr(m->begin, m->end - m->begin);
    if (v && v->type == json::Value::Type::String) d.header_version = v->text;
    d.payload_offset = kPrefixSize + size_t(hlen);
    return d;
}

}  // namespace cachekit::frame
