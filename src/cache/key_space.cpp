#include "cache/key_space.hpp"

#include <optional>
#include <string>

#include "codec/cache_keys.hpp"
#include "codec/utf8.hpp"

namespace cachekit::cache {
namespace {

constexpr size_t kDigestHex = 64;
constexpr size_t kLongHead = 50;      // code points kept of a key that was too long
constexpr size_t kLongDigestHex = 32;

bool is_lower_hex(std::string_view s, size_t n) {
    if (s.size() != n) return false;
    for (char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return true;
}

bool is_function_segment(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.'))
            return false;
    return true;
}

// "1s", "0a", ..., "1x" + 4 hex: the integrity flag and the serializer code.
bool is_flag_and_code(std::string_view s) {
    if (s.size() < 2 || (s[0] != '0' && s[0] != '1')) return false;
    std::string_view code = s.substr(1);
    if (code.size() == 1) return code == "s" || code == "a" || code == "o" || code == "w" || code == "l";
    return code.size() == 5 && code[0] == 'x' && is_lower_hex(code.substr(1), 4);
}

// The namespace of an auto-mode key: nullopt when `key` is not of the
// shape, "" for a key without a namespace segment.
std::optional<std::string_view> auto_key_namespace(std::string_view key) {
    // The long form: a 50 code point head, ':', 32 hex digits.
    if (key.size() > kLongDigestHex + 1 && key[key.size() - kLongDigestHex - 1] == ':' &&
        is_lower_hex(key.substr(key.size() - kLongDigestHex), kLongDigestHex)) {
        std::string_view head = key.substr(0, key.size() - kLongDigestHex - 1);
        if (utf8_valid(head) && utf8_count(head) == kLongHead) {
            if (head.substr(0, 5) == "func:") return std::string_view();
            if (head.substr(0, 3) == "ns:") {
                // The namespace is known only if the head reaches past it.
                const size_t end = head.find(":func:", 3);
                if (end != std::string_view::npos) return head.substr(3, end - 3);
                return std::nullopt;
            }
        }
    }
    // ...:args:{64 hex}:{flag}{code}
    const size_t last = key.rfind(':');
    if (last == std::string_view::npos || !is_flag_and_code(key.substr(last + 1))) return std::nullopt;
    std::string_view rest = key.substr(0, last);
    if (rest.size() < kDigestHex + 6 || !is_lower_hex(rest.substr(rest.size() - kDigestHex), kDigestHex)) return std::nullopt;
    rest.remove_suffix(kDigestHex);
    if (rest.substr(rest.size() - 6) != ":args:") return std::nullopt;
    rest.remove_suffix(6);
    std::string_view ns;
    if (rest.substr(0, 3) == "ns:") {
        const size_t func = rest.rfind(":func:");
        if (func == std::string_view::npos || func < 3) return std::nullopt;
        ns = rest.substr(3, func - 3);
        if (ns.empty()) return std::nullopt;
        rest.remove_prefix(func + 1);
    }
    if (rest.substr(0, 5) != "func:" || !is_function_segment(rest.substr(5))) return std::nullopt;
    return ns;
}

// The namespace of an interop key: nullopt when not of the shape.
std::optional<std::string_view> interop_key_namespace(std::string_view key) {
    if (key.size() < kDigestHex + 1 || !is_lower_hex(key.substr(key.size() - kDigestHex), kDigestHex)) return std::nullopt;
    std::string_view rest = key.substr(0, key.size() - kDigestHex);
    if (rest.empty() || rest.back() != ':') return std::nullopt;
    rest.remove_suffix(1);
    const size_t colon = rest.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    std::string_view ns = rest.substr(0, colon), operation = rest.substr(colon + 1);
    if (keys::interop_segment_problem(ns, true) || keys::interop_segment_problem(operation, false)) return std::nullopt;
    return ns;
}

std::optional<std::string_view> namespace_of(Format format, std::string_view key) {
    return format == Format::Interop ? interop_key_namespace(key) : auto_key_namespace(key);
}

std::string digest_glob() { return ":" + std::string(kDigestHex, '?'); }

}  // namespace

bool is_own_key(Format format, std::string_view key) { return namespace_of(format, key).has_value(); }

bool is_own_key_in(Format format, std::string_view key, std::string_view ns) {
    std::optional<std::string_view> found = namespace_of(format, key);
    return found && *found == ns;
}

l2::KeySelection own_keys(Format format, std::string_view prefix) {
    const size_t skip = prefix.size();
    // Auto keys start "ns:" or "func:"; interop keys end ":{64 hex}" after two segments.
    std::string glob = format == Format::Interop ? "*:*" + digest_glob() : "[nf][su]*";
    return l2::KeySelection(std::string(prefix), std::move(glob),
                            [format, skip](std::string_view key) { return is_own_key(format, key.substr(skip)); });
}

l2::KeySelection own_namespace_keys(Format format, std::string_view prefix, std::string_view ns) {
    const size_t skip = prefix.size();
    std::string glob = format == Format::Interop ? l2::glob_escape(ns) + ":*" + digest_glob()
                                                 : "ns:" + l2::glob_escape(ns) + ":*";
    return l2::KeySelection(std::string(prefix), std::move(glob), [format, skip, ns = std::string(ns)](std::string_view key) {
        return is_own_key_in(format, key.substr(skip), ns);
    });
}

}  // namespace cachekit::cache
