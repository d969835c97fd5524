#include "capi/call_error.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string_view>

#include "capi/boundary.hpp"

namespace cachekit::capi {
namespace {

// The first (0.2) form of cachekit_error: the smallest struct_size accepted.
// Fields appended later are written only when struct_size covers them.
constexpr size_t kErrorFirstSize = sizeof(cachekit_error);

constexpr std::string_view kEllipsis = "...";

bool utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Copy `text` into dst[cap] NUL-terminated. Text that does not fit ends in
// "..." after the last whole UTF-8 sequence that fits with it.
void copy_text(char *dst, size_t cap, std::string_view text) {
    if (cap == 0) return;
    if (text.size() < cap) {
        if (!text.empty()) std::memcpy(dst, text.data(), text.size());
        dst[text.size()] = '\0';
        return;
    }
    size_t cut = cap - 1 - std::min(cap - 1, kEllipsis.size());
    while (cut > 0 && utf8_continuation(text[cut])) --cut;
    std::memcpy(dst, text.data(), cut);
    const size_t dots = std::min(kEllipsis.size(), cap - 1 - cut);
    std::memcpy(dst + cut, kEllipsis.data(), dots);
    dst[cut + dots] = '\0';
}

}  // namespace

bool call_error_usable(const cachekit_error *err) noexcept {
    if (err->struct_size >= kErrorFirstSize) return true;
    set_last_error(CACHEKIT_EINVAL,
                   "err->struct_size is smaller than cachekit_error (initialise it with CACHEKIT_ERROR_INIT)");
    return false;
}

void report_call(cachekit_error *err, int code, std::uint64_t before) noexcept {
    err->code = code;
    copy_text(err->name, sizeof err->name, status_name(code));
    // A success or a miss carries no message; a failure carries the one its
    // own call recorded for this code (none when it recorded none: a failure
    // a loader's inner call recorded is not this call's).
    const bool own_message = code != CACHEKIT_OK && code != CACHEKIT_ENOTFOUND &&
                             last_error_generation() != before && cachekit_error_last_code() == code;
    copy_text(err->message, sizeof err->message, own_message ? last_error_message() : std::string_view());
}

}  // namespace cachekit::capi
