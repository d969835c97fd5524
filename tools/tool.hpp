// Shared pieces of the `cachekit` command-line tool. The tool is a thin layer
// over the public C API (cachekit/cachekit.h): it never includes anything
// from src/ and holds no codec logic of its own.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "cachekit/cachekit.h"

namespace cachekit_tool {

// Exit codes shared by the subcommands.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFail = 1;
inline constexpr int kExitUsage = 2;

// An owned cachekit_buf, released on scope exit.
class Buf {
public:
    Buf() = default;
    Buf(const Buf &) = delete;
    Buf &operator=(const Buf &) = delete;
    ~Buf() { cachekit_buf_dispose(&buf_); }

    cachekit_buf *get() { return &buf_; }
    const char *data() const { return buf_.ptr ? buf_.ptr : ""; }
    size_t size() const { return buf_.ptr ? buf_.size : 0; }
    std::string_view view() const { return {data(), size()}; }
    std::string str() const { return std::string(view()); }

private:
    cachekit_buf buf_ = CACHEKIT_BUF_INIT;
};

// ---- hex and JSON helpers (util.cpp) ----

// Lowercase hex of `len` bytes.
std::string to_hex(const void *data, size_t len);
inline std::string to_hex(std::string_view bytes) { return to_hex(bytes.data(), bytes.size()); }

// Decode hex (either case, even length, nothing else) into `out`. Returns
// false on any other character or an odd length (out is then unspecified).
bool from_hex(std::string_view hex, std::string &out);

// True when the JSON text nests arrays/objects deeper than `limit` levels.
// A cheap pre-scan that skips string contents (with escapes); it does not
// validate the text, it only bounds what the real parser will see.
bool json_nesting_exceeds(std::string_view text, size_t limit);

// True when `s` holds only JSON white space (space, tab, CR, LF).
bool is_blank(std::string_view s);

// ---- subcommands ----

// `cachekit codec`: the line-oriented JSON conformance harness (codec.cpp).
int run_codec(int argc, char **argv);

// The response line for one non-blank request line (never throws); the
// codec loop and the request-parsing fuzz target share it.
std::string codec_answer_line(std::string_view line);

// `cachekit inspect`: describe a stored value (inspect.cpp).
int run_inspect(int argc, char **argv);

// `cachekit get|set|del KEY --backend URL` (backend_commands.cpp).
int run_backend_command(int argc, char **argv);

// Read KEY's raw bytes and remaining TTL (seconds, -1 = none) from a backend
// for `inspect --backend`; prints the error and returns non-zero on failure.
int fetch_from_backend(const std::optional<std::string> &url, const std::string &key, std::string &data,
                       std::optional<double> &ttl_seconds);

}  // namespace cachekit_tool
