// Small text helpers shared by the backend URL parsers (redis://, unix://, file://).
#pragma once

#include <cctype>
#include <optional>
#include <string>
#include <string_view>

namespace cachekit::l2 {

// `prefix` must be lowercase; the scheme of a URL is case-insensitive.
inline bool starts_with_nocase(std::string_view text, std::string_view prefix) {
    if (text.size() < prefix.size()) return false;
    for (size_t i = 0; i < prefix.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(text[i])) != prefix[i]) return false;
    return true;
}

inline int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Decode %XX escapes; nullopt for a malformed escape, or for an escaped NUL
// when `reject_nul` (a path must not hold one).
inline std::optional<std::string> percent_decode(std::string_view text, bool reject_nul) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '%') {
            out.push_back(text[i]);
            continue;
        }
        const int hi = i + 2 < text.size() ? hex_value(text[i + 1]) : -1;
        const int lo = i + 2 < text.size() ? hex_value(text[i + 2]) : -1;
        if (hi < 0 || lo < 0 || (reject_nul && hi == 0 && lo == 0)) return std::nullopt;
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
    }
    return out;
}

// Each name=value parameter of a URL query ("a=b&c=d", empty parts
// skipped), in order: param(name, value, "name=value"). A part without '='
// goes to no_value(part), which throws (each parser its own EINVAL).
template <class Param, class NoValue>
void each_query_param(std::string_view query, Param &&param, NoValue &&no_value) {
    while (!query.empty()) {
        const size_t amp = query.find('&');
        const std::string_view part = query.substr(0, amp);
        query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
        if (part.empty()) continue;
        const size_t eq = part.find('=');
        if (eq == std::string_view::npos) no_value(part);
        else param(part.substr(0, eq), part.substr(eq + 1), part);
    }
}

}  // namespace cachekit::l2
