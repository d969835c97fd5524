// Shared helpers of the conformance programs: where the vectors are, hex,
// constructed inputs, a tagged-JSON -> MessagePack encoder and the per-vector
// report. Only the public C API is used.
//
// Include this header BEFORE <cmocka.h>: cmocka defines function-like macros
// (fail(), skip()) that break the C++ standard headers included after it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <cachekit/cachekit.h>

namespace ckconf {

using Bytes = std::vector<uint8_t>;
// Ordered: the vector files' key order is kept (python-frame metadata is
// compared with its order; interop maps are fed unsorted on purpose).
using Json = nlohmann::ordered_json;

// ---- Vector files -------------------------------------------------------

// The vector folder: CACHEKIT_VECTORS_DIR, else CACHEKIT_VECTORS_DIR_DEFAULT.
// Empty when neither is set.
std::string vectors_dir();

// Parse <vectors_dir>/<file>. When the folder or the file is absent or does
// not parse, print why and exit 77 (meson's SKIP): a missing vector is never
// a pass.
Json load_vectors(const char *file);

// ---- Bytes ----------------------------------------------------------------

Bytes from_hex(std::string_view hex);  // throws std::invalid_argument
std::string to_hex(const void *data, size_t len);
std::string to_hex(const Bytes &b);
Bytes buf_bytes(const cachekit_buf &buf);
std::string buf_text(const cachekit_buf &buf);
Bytes text_bytes(std::string_view s);

// bytes.fromhex(repeat_hex) * count + bytes.fromhex(suffix_hex)
Bytes construct_repeat(const Json &construction);
// [{"hex": h, "count": n}, ...]: each segment repeated, concatenated.
Bytes construct_segments(const Json &segments);

// The checksum field (8 bytes, as hex) of a ByteStorage envelope: element [1]
// of the 4-array, an array of 8 uints. Throws std::runtime_error when the
// bytes do not have that shape.
std::string envelope_checksum_hex(const Bytes &envelope);

// ---- MessagePack encoding -----------------------------------------------

// Why a JSON value cannot be encoded. IntRange and NaiveDatetime are the
// cases the vectors expect a language wrapper to reject before the core.
struct EncodeError : std::runtime_error {
    enum Kind { IntRange, NaiveDatetime, BadInput };
    Kind kind;
    EncodeError(Kind k, const std::string &what) : std::runtime_error(what), kind(k) {}
};

// Plain JSON -> MessagePack: ints in the shortest form (non-negative ints in
// the uint family), JSON numbers written with a '.' or exponent as float64
// (3.0 stays a float), strings as str, maps in their JSON order.
Bytes encode_plain(const Json &value);

// Auto-mode arguments: msgpack([args, kwargs]) with kwargs sorted by name.
Bytes encode_auto_args(const Json &args, const Json &kwargs);

// interop-mode.json's tagged JSON: $int (shortest int; outside
// [-2^63, 2^64-1] -> EncodeError IntRange), $float (strtod: float64), $bytes
// (bin), $uuid (lowercase str), $set (ext CACHEKIT_MSGPACK_EXT_SET holding an
// array of the elements), $datetime (aware: timestamp ext -1 in the 12-byte
// form; naive -> EncodeError NaiveDatetime); other JSON as encode_plain.
Bytes encode_tagged(const Json &value);

// What cachekit_msgpack_to_json renders for a tagged value ($bytes stays
// {"$bytes": hex}, $float and $int become numbers). Throws EncodeError
// BadInput for tags that rendering cannot mirror.
Json expected_rendering(const Json &tagged);

// ---- Reporting ------------------------------------------------------------

// Per-file tally; every vector ends up in exactly one of the three columns.
class Report {
public:
    explicit Report(std::string file) : file_(std::move(file)) {}

    void ok(const std::string &name, const std::string &note = "");
    void fail(const std::string &name, const std::string &detail);
    void elsewhere(const std::string &name, const std::string &reason);

    // Print "category <name>: N vectors" (called at the start of a category).
    void category(const std::string &name, size_t count);

    int passed() const { return passed_; }
    int failed() const { return failed_; }
    int covered_elsewhere() const { return elsewhere_; }

    // "conformance <file>: N vectors passed, M failed, K listed as covered elsewhere"
    void summary() const;

private:
    std::string file_;
    int passed_ = 0;
    int failed_ = 0;
    int elsewhere_ = 0;
};

// Collects the mismatches of one vector; the vector passes when none.
class Checks {
public:
    void expect(bool cond, const std::string &what) {
        if (!cond) add(what);
    }
    // rc must be CACHEKIT_OK; otherwise records the call, the error name and
    // the last message. Returns rc == 0.
    bool ok(int rc, const std::string &call);
    // rc must equal `want`.
    bool code(int rc, int want, const std::string &call);
    // rc must be one of `want`.
    bool code_in(int rc, std::initializer_list<int> want, const std::string &call);
    // rc must be a failure (any code).
    bool rejects(int rc, const std::string &call);
    void equal_hex(const std::string &got, const std::string &want, const std::string &what);
    void add(const std::string &what) {
        if (!detail_.empty()) detail_ += "; ";
        detail_ += what;
    }
    bool passed() const { return detail_.empty(); }
    const std::string &detail() const { return detail_; }
    // Notes (e.g. the error names seen) printed after "ok".
    void note(const std::string &n) {
        if (!notes_.empty()) notes_ += ", ";
        notes_ += n;
    }
    const std::string &notes() const { return notes_; }

    // The vector is not judged here: the reason names who covers it. Only
    // allowed when nothing failed.
    void covered_elsewhere(const std::string &reason) { elsewhere_ = reason; }

    // Report the vector: ok, FAIL with the collected detail, or elsewhere.
    void report(Report &r, const std::string &name) const;

private:
    std::string detail_;
    std::string notes_;
    std::string elsewhere_;
};

// Run `body(vector, checks)` over every vector of file[key], reporting each by
// name (an exception is a failure of that vector). Returns the number of
// vectors of this category that failed; a missing category is one failure.
// `label` names a nested category in the output (keyring.configuration.vectors).
template <class Body>
int run_category(Report &r, const Json &file, const char *key, Body &&body, const char *label = nullptr) {
    int before = r.failed();
    const std::string category = label ? label : key;
    auto it = file.find(key);
    if (it == file.end() || !it->is_array()) {
        r.fail(category, "the vector file has no array named " + category);
        return r.failed() - before;
    }
    r.category(category, it->size());
    for (const auto &v : *it) {
        std::string name = v.is_object() && v.contains("name") ? v["name"].get<std::string>() : std::string("?");
        Checks c;
        try {
            body(v, c);
        } catch (const std::exception &e) {
            c.add(std::string("exception: ") + e.what());
        }
        c.report(r, name);
    }
    return r.failed() - before;
}

// "InvalidArgument (-2): <last message>"
std::string describe_rc(int rc);

// A cachekit_buf released at scope exit.
struct Buf {
    cachekit_buf b = CACHEKIT_BUF_INIT;
    Buf() = default;
    Buf(const Buf &) = delete;
    Buf &operator=(const Buf &) = delete;
    ~Buf() { cachekit_buf_dispose(&b); }
    cachekit_buf *p() { return &b; }
    std::string hex() const { return to_hex(b.ptr, b.size); }
    std::string text() const { return buf_text(b); }
    Bytes bytes() const { return buf_bytes(b); }
};

// A JSON string field that must be present (throws otherwise).
const std::string &str(const Json &v, const char *field);

// A JSON string field, or NULL when absent or null (for optional C strings).
const char *opt_cstr(const Json &v, const char *field);

// "a,b,c" from a JSON array of strings (how the C API takes key lists).
std::string join_keys(const Json &keys);

// Whether decode-bounds.json's vector `v` lists `reason` in reject_reasons.
bool has_reject_reason(const Json &v, const char *reason);

// A cache over a memory:// backend of its own, both freed at scope exit.
// `configure` sets what the test needs beyond the backend; L1 is off before
// it runs, so every get reads the backend. Throws std::runtime_error when the
// backend does not open; rc() is cachekit_cache_new's status.
class MemoryCache {
public:
    explicit MemoryCache(const std::function<void(cachekit_cache_options &)> &configure);
    MemoryCache(const MemoryCache &) = delete;
    MemoryCache &operator=(const MemoryCache &) = delete;
    ~MemoryCache();

    int rc() const { return rc_; }
    cachekit_backend *backend() { return backend_; }
    cachekit_cache *cache() { return cache_; }

    // Store `stored` raw under `key` (no writer of the cache involved), then
    // get it through the cache in namespace "". Returns the first failing
    // status (cachekit_cache_new's included); on a failed get, `message`
    // (when given) gets the last error message.
    int get_planted(std::string_view key, const Bytes &stored, Buf &out, std::string *message = nullptr,
                    cachekit_lookup *info = nullptr);

private:
    cachekit_backend *backend_ = nullptr;
    cachekit_cache *cache_ = nullptr;
    int rc_ = 0;
};

}  // namespace ckconf
