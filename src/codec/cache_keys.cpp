#include "codec/cache_keys.hpp"

#include "codec/blake3.hpp"
#include "codec/hashing.hpp"
#include "codec/msgpack_canonical.hpp"
#include "codec/msgpack_cursor.hpp"
#include "codec/msgpack_header.hpp"
#include "codec/utf8.hpp"
#include "util/buffer.hpp"
#include "util/error.hpp"

namespace cachekit::keys {
namespace {

constexpr size_t kMaxAutoKeyCodePoints = 250;
constexpr size_t kMaxFunctionNameCodePoints = 200;

bool is_function_char(unsigned char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

// module.qualname: every code point outside [A-Za-z0-9_.] becomes '_', runs
// of '.' collapse to one, and the result is cut to 200 characters.
std::string function_segment(std::string_view module, std::string_view qualname) {
    std::string joined;
    joined.reserve(module.size() + 1 + qualname.size());
    joined.append(module).append(".").append(qualname);
    if (!utf8_valid(joined)) fail(CACHEKIT_EINVAL, "module and qualname must be valid UTF-8");
    std::string out;
    out.reserve(joined.size());
    for (size_t i = 0; i < joined.size();) {
        size_t k = utf8_sequence_length(joined, i);
        char c = k == 1 && is_function_char(static_cast<unsigned char>(joined[i])) ? joined[i] : '_';
        if (!(c == '.' && !out.empty() && out.back() == '.')) out.push_back(c);
        i += k;
    }
    if (out.size() > kMaxFunctionNameCodePoints) out.resize(kMaxFunctionNameCodePoints);  // all ASCII now
    return out;
}

}  // namespace

std::string serializer_code(std::string_view identity) {
    if (identity.empty()) fail(CACHEKIT_EINVAL, "an empty serializer identity has no code (it is an error, never a default)");
    if (identity == "std" || identity == "default" || identity == "standard") return "s";
    if (identity == "auto" || identity == "pythonic") return "a";
    if (identity == "orjson") return "o";
    if (identity == "arrow") return "w";
    if (identity == "local") return "l";
    if (!utf8_valid(identity)) fail(CACHEKIT_EINVAL, "a serializer identity must be valid UTF-8");
    uint8_t digest[2];
    blake2b(digest, sizeof digest, identity.data(), identity.size());
    return "x" + to_hex(digest, sizeof digest);
}

std::string custom_key(std::string_view ns, std::string_view module, std::string_view qualname, std::string_view key) {
    std::string function;
    function.append(module).append(".").append(qualname);
    std::string out = blake3::hex_prefix(function, 8);
    out.append("-").append(ns.empty() ? std::string_view("default") : ns).append(":").append(key);
    return out;
}

std::string auto_key(std::string_view ns, std::string_view module, std::string_view qualname,
                     const uint8_t *args, size_t args_len, bool integrity, std::string_view serializer) {
    std::string code = serializer_code(serializer);
    if (!utf8_valid(ns)) fail(CACHEKIT_EINVAL, "the namespace must be valid UTF-8");
    Buffer canonical;
    msgpack::canonicalize(args, args_len, msgpack::Profile::AutoArgs, canonical.get());
    // The reference SDK hashes exactly [positional args, keyword args].
    msgpack::Cursor shape(reinterpret_cast<const uint8_t *>(canonical.data()), canonical.size());
    msgpack::Header root = shape.next();
    msgpack::Header positional = root.kind == msgpack::Kind::Array && root.length == 2 ? shape.next() : msgpack::Header{};
    if (root.kind != msgpack::Kind::Array || root.length != 2 || positional.kind != msgpack::Kind::Array)
        fail(CACHEKIT_EINVAL, "auto-mode args must be the MessagePack of [positional array, keyword map]");
    shape.skip_rest(positional);
    if (shape.next().kind != msgpack::Kind::Map)
        fail(CACHEKIT_EINVAL, "auto-mode args must be the MessagePack of [positional array, keyword map]");
    auto digest = blake2b256(canonical.data(), canonical.size());

    std::string key;
    if (!ns.empty()) key.append("ns:").append(ns).append(":");
    key.append("func:").append(function_segment(module, qualname));
    key.append(":args:").append(to_hex(digest.data(), digest.size()));
    key.append(":").append(integrity ? "1" : "0").append(code);
    for (char &c : key)
        if (c == ' ' || c == '\n' || c == '\r') c = '_';
    if (utf8_count(key) > kMaxAutoKeyCodePoints) {
        auto long_digest = blake2b256(key.data(), key.size());
        key = key.substr(0, utf8_prefix_bytes(key, 50)) + ":" + to_hex(long_digest.data(), long_digest.size()).substr(0, 32);
    }
    return key;
}

const char *interop_segment_problem(std::string_view segment, bool is_namespace) {
    if (segment.empty()) return "must hold at least one character";
    if (segment.size() > 64) return "is longer than 64 characters";
    auto lower_or_digit = [](unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
    if (!lower_or_digit(static_cast<unsigned char>(segment[0])))
        return "must start with a lowercase ASCII letter or digit";
    for (unsigned char c : segment)
        if (!lower_or_digit(c) && c != '.' && c != '_' && c != '-')
            return "may hold only a-z, 0-9, '.', '_' and '-' (^[a-z0-9][a-z0-9._-]{0,63}$)";
    if (segment.find("..") != std::string_view::npos) return "must not contain '..'";
    if (is_namespace && (segment == "ns" || segment == "nsapi")) return "is reserved ('ns' and 'nsapi')";
    return nullptr;
}

void check_interop_segment(std::string_view segment, const char *what, bool is_namespace) {
    if (is_namespace && (segment == "ns" || segment == "nsapi"))
        fail(CACHEKIT_ESEGMENT, "the namespaces 'ns' and 'nsapi' are reserved");
    if (const char *problem = interop_segment_problem(segment, is_namespace))
        fail(CACHEKIT_ESEGMENT, std::string(what) + " " + problem);
}

std::string interop_key(std::string_view ns, std::string_view operation, const uint8_t *args, size_t args_len,
                        cachekit_buf *canonical) {
    check_interop_segment(ns, "namespace", true);
    check_interop_segment(operation, "operation", false);
    msgpack::canonicalize(args, args_len, msgpack::Profile::Args, canonical);
    msgpack::Header root;
    msgpack::read_header(reinterpret_cast<const uint8_t *>(canonical->ptr), canonical->size, root);
    if (root.kind != msgpack::Kind::Array) fail(CACHEKIT_EINVAL, "interop arguments must be one MessagePack array");
    auto digest = blake2b256(canonical->ptr, canonical->size);
    std::string key;
    key.reserve(ns.size() + operation.size() + 66);
    key.append(ns).append(":").append(operation).append(":").append(to_hex(digest.data(), digest.size()));
    return key;
}

}  // namespace cachekit::keys
