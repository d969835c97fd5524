#include "conformance_support.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/stat.h>

namespace ckconf {

// ---- Vector files -------------------------------------------------------

std::string vectors_dir() {
    const char *dir = std::getenv("CACHEKIT_VECTORS_DIR");
    if (dir && *dir) return dir;
    dir = std::getenv("CACHEKIT_VECTORS_DIR_DEFAULT");
    if (dir && *dir) return dir;
    return "";
}

Json load_vectors(const char *file) {
    std::string dir = vectors_dir();
    if (dir.empty()) {
        std::printf("SKIP %s: no vector folder (set CACHEKIT_VECTORS_DIR)\n", file);
        std::exit(77);
    }
    struct stat st;
    if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        std::printf("SKIP %s: vector folder %s is absent (set CACHEKIT_VECTORS_DIR)\n", file, dir.c_str());
        std::exit(77);
    }
    std::string path = dir + "/" + file;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::printf("SKIP %s: vector file %s is absent\n", file, path.c_str());
        std::exit(77);
    }
    try {
        Json j = Json::parse(in);
        std::printf("vectors: %s\n", path.c_str());
        return j;
    } catch (const std::exception &e) {
        // A vector file that does not parse cannot be judged: not a pass.
        std::printf("SKIP %s: %s does not parse as JSON: %s\n", file, path.c_str(), e.what());
        std::exit(77);
    }
}

// ---- Bytes ----------------------------------------------------------------

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

Bytes from_hex(std::string_view hex) {
    if (hex.size() % 2 != 0) throw std::invalid_argument("odd-length hex in a vector");
    Bytes out(hex.size() / 2);
    for (size_t i = 0; i < out.size(); ++i) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0) throw std::invalid_argument("non-hex digit in a vector");
        out[i] = static_cast<uint8_t>(hi * 16 + lo);
    }
    return out;
}

std::string to_hex(const void *data, size_t len) {
    static const char digits[] = "0123456789abcdef";
    const auto *p = static_cast<const uint8_t *>(data);
    std::string s;
    s.reserve(len * 2);
    for (size_t i = 0; i < len; ++i) {
        s.push_back(digits[p[i] >> 4]);
        s.push_back(digits[p[i] & 15]);
    }
    return s;
}

std::string to_hex(const Bytes &b) { return to_hex(b.data(), b.size()); }

Bytes buf_bytes(const cachekit_buf &buf) {
    if (!buf.ptr) return {};
    return Bytes(reinterpret_cast<const uint8_t *>(buf.ptr), reinterpret_cast<const uint8_t *>(buf.ptr) + buf.size);
}

std::string buf_text(const cachekit_buf &buf) { return buf.ptr ? std::string(buf.ptr, buf.size) : std::string(); }

Bytes text_bytes(std::string_view s) { return Bytes(s.begin(), s.end()); }

static void append_repeated(Bytes &out, const Bytes &unit, uint64_t count) {
    out.reserve(out.size() + unit.size() * count);
    for (uint64_t i = 0; i < count; ++i) out.insert(out.end(), unit.begin(), unit.end());
}

Bytes construct_repeat(const Json &c) {
    Bytes out;
    append_repeated(out, from_hex(c.at("repeat_hex").get<std::string>()), c.at("count").get<uint64_t>());
    Bytes suffix = from_hex(c.at("suffix_hex").get<std::string>());
    out.insert(out.end(), suffix.begin(), suffix.end());
    return out;
}

Bytes construct_segments(const Json &segments) {
    Bytes out;
    for (const auto &seg : segments) {
        Bytes unit = from_hex(seg.at("hex").get<std::string>());
        if (unit.empty()) throw std::invalid_argument("empty construction segment");
        append_repeated(out, unit, seg.at("count").get<uint64_t>());
    }
    return out;
}

namespace {

// Just enough of a MessagePack reader to find an envelope's checksum.
struct MiniReader {
    const Bytes &b;
    size_t pos = 0;
    uint8_t byte() {
        if (pos >= b.size()) throw std::runtime_error("envelope ends early");
        return b[pos++];
    }
    uint64_t be(int n) {
        uint64_t v = 0;
        for (int i = 0; i < n; ++i) v = (v << 8) | byte();
        return v;
    }
    uint64_t uint() {
        uint8_t t = byte();
        if (t <= 0x7f) return t;
        if (t == 0xcc) return be(1);
        if (t == 0xcd) return be(2);
        if (t == 0xce) return be(4);
        if (t == 0xcf) return be(8);
        throw std::runtime_error("not a uint");
    }
    uint64_t array_header() {
        uint8_t t = byte();
        if ((t & 0xf0) == 0x90) return t & 0x0f;
        if (t == 0xdc) return be(2);
        if (t == 0xdd) return be(4);
        throw std::runtime_error("not an array");
    }
    void skip_compressed() {
        uint8_t t = b.at(pos);
        if (t == 0xc4 || t == 0xc5 || t == 0xc6) {
            ++pos;
            uint64_t n = be(t == 0xc4 ? 1 : t == 0xc5 ? 2 : 4);
            if (n > b.size() - pos) throw std::runtime_error("bin past the end");
            pos += n;
            return;
        }
        uint64_t n = array_header();
        for (uint64_t i = 0; i < n; ++i) uint();
    }
};

}  // namespace

std::string envelope_checksum_hex(const Bytes &envelope) {
    MiniReader r{envelope};
    if (r.array_header() != 4) throw std::runtime_error("envelope is not a 4-array");
    r.skip_compressed();
    if (r.array_header() != 8) throw std::runtime_error("checksum is not an 8-array");
    uint8_t sum[8];
    for (auto &s : sum) {
        uint64_t v = r.uint();
        if (v > 255) throw std::runtime_error("checksum element above 255");
        s = static_cast<uint8_t>(v);
    }
    return to_hex(sum, 8);
}

// ---- MessagePack encoding -----------------------------------------------

namespace {

struct Writer {
    Bytes out;

    void put(uint8_t b) { out.push_back(b); }
    void be(uint64_t v, int n) {
        for (int i = n - 1; i >= 0; --i) put(static_cast<uint8_t>(v >> (8 * i)));
    }
    void nil() { put(0xc0); }
    void boolean(bool v) { put(v ? 0xc3 : 0xc2); }
    void uint(uint64_t v) {
        if (v <= 0x7f) put(static_cast<uint8_t>(v));
        else if (v <= 0xff) { put(0xcc); be(v, 1); }
        else if (v <= 0xffff) { put(0xcd); be(v, 2); }
        else if (v <= 0xffffffffu) { put(0xce); be(v, 4); }
        else { put(0xcf); be(v, 8); }
    }
    void sint(int64_t v) {
        if (v >= 0) { uint(static_cast<uint64_t>(v)); return; }
        auto u = static_cast<uint64_t>(v);
        if (v >= -32) put(static_cast<uint8_t>(u));
        else if (v >= -128) { put(0xd0); be(u, 1); }
        else if (v >= -32768) { put(0xd1); be(u, 2); }
        else if (v >= INT32_MIN) { put(0xd2); be(u, 4); }
        else { put(0xd3); be(u, 8); }
    }
    void f64(double d) {
        uint64_t bits;
        std::memcpy(&bits, &d, 8);
        put(0xcb);
        be(bits, 8);
    }
    void str(std::string_view s) {
        size_t n = s.size();
        if (n < 32) put(static_cast<uint8_t>(0xa0 | n));
        else if (n <= 0xff) { put(0xd9); be(n, 1); }
        else if (n <= 0xffff) { put(0xda); be(n, 2); }
        else { put(0xdb); be(n, 4); }
        out.insert(out.end(), s.begin(), s.end());
    }
    void bin(const Bytes &b) {
        size_t n = b.size();
        if (n <= 0xff) { put(0xc4); be(n, 1); }
        else if (n <= 0xffff) { put(0xc5); be(n, 2); }
        else { put(0xc6); be(n, 4); }
        out.insert(out.end(), b.begin(), b.end());
    }
    void array(size_t n) {
        if (n < 16) put(static_cast<uint8_t>(0x90 | n));
        else if (n <= 0xffff) { put(0xdc); be(n, 2); }
        else { put(0xdd); be(n, 4); }
    }
    void map(size_t n) {
        if (n < 16) put(static_cast<uint8_t>(0x80 | n));
        else if (n <= 0xffff) { put(0xde); be(n, 2); }
        else { put(0xdf); be(n, 4); }
    }
    // The shortest ext header: fixext for 1/2/4/8/16 bytes, else ext8/16/32.
    void ext(int8_t type, const Bytes &data) {
        size_t n = data.size();
        switch (n) {
        case 1: put(0xd4); break;
        case 2: put(0xd5); break;
        case 4: put(0xd6); break;
        case 8: put(0xd7); break;
        case 16: put(0xd8); break;
        default:
            if (n <= 0xff) { put(0xc7); be(n, 1); }
            else if (n <= 0xffff) { put(0xc8); be(n, 2); }
            else { put(0xc9); be(n, 4); }
        }
        put(static_cast<uint8_t>(type));
        out.insert(out.end(), data.begin(), data.end());
    }
};

void write_plain(Writer &w, const Json &v, bool tagged);

// "$int": a decimal literal, range-checked against [-2^63, 2^64-1].
void write_int_literal(Writer &w, const std::string &lit) {
    size_t i = 0;
    bool neg = false;
    if (i < lit.size() && (lit[i] == '-' || lit[i] == '+')) neg = lit[i++] == '-';
    if (i == lit.size()) throw EncodeError(EncodeError::BadInput, "empty $int literal");
    uint64_t mag = 0;
    bool over = false;  // the magnitude passed 2^64-1
    for (; i < lit.size(); ++i) {
        if (lit[i] < '0' || lit[i] > '9') throw EncodeError(EncodeError::BadInput, "bad $int literal " + lit);
        auto d = static_cast<uint64_t>(lit[i] - '0');
        if (over || mag > (UINT64_MAX - d) / 10) over = true;
        else mag = mag * 10 + d;
    }
    const uint64_t two63 = uint64_t(1) << 63;
    if (neg) {
        if (over || mag > two63)
            throw EncodeError(EncodeError::IntRange, "$int " + lit + " is below -2^63: MessagePack cannot carry it");
        if (mag == 0) w.uint(0);
        else if (mag == two63) w.sint(INT64_MIN);
        else w.sint(-static_cast<int64_t>(mag));
    } else {
        if (over)
            throw EncodeError(EncodeError::IntRange, "$int " + lit + " is above 2^64-1: MessagePack cannot carry it");
        w.uint(mag);
    }
}

double parse_float_literal(const std::string &lit) {
    errno = 0;
    char *end = nullptr;
    double d = std::strtod(lit.c_str(), &end);
    if (end == lit.c_str() || *end != '\0') throw EncodeError(EncodeError::BadInput, "bad $float literal " + lit);
    return d;  // "1e999" overflows to inf (ERANGE), as the vectors intend
}

int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const auto yoe = static_cast<unsigned>(y - era * 400);
    const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

// "$datetime": YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM) -> timestamp
// ext -1, 12-byte form (u32be nanoseconds, i64be seconds) of the UTC instant.
void write_datetime(Writer &w, const std::string &s) {
    auto num = [&](size_t pos, size_t n) {
        if (pos + n > s.size()) throw EncodeError(EncodeError::BadInput, "bad $datetime " + s);
        int v = 0;
        for (size_t i = pos; i < pos + n; ++i) {
            if (s[i] < '0' || s[i] > '9') throw EncodeError(EncodeError::BadInput, "bad $datetime " + s);
            v = v * 10 + (s[i] - '0');
        }
        return v;
    };
    if (s.size() < 19 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != ' ') || s[13] != ':' || s[16] != ':')
        throw EncodeError(EncodeError::BadInput, "bad $datetime " + s);
    int year = num(0, 4), mon = num(5, 2), day = num(8, 2), hh = num(11, 2), mm = num(14, 2), ss = num(17, 2);
    size_t pos = 19;
    uint32_t nanos = 0;
    if (pos < s.size() && s[pos] == '.') {
        ++pos;
        int digits = 0;
        while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
            if (digits < 9) {
                nanos = nanos * 10 + static_cast<uint32_t>(s[pos] - '0');
                ++digits;
            }
            ++pos;
        }
        if (digits == 0) throw EncodeError(EncodeError::BadInput, "bad $datetime fraction " + s);
        for (; digits < 9; ++digits) nanos *= 10;
    }
    if (pos == s.size())
        throw EncodeError(EncodeError::NaiveDatetime, "naive $datetime " + s + " (no UTC offset)");
    int64_t offset = 0;
    if (s[pos] == 'Z' && pos + 1 == s.size()) {
        offset = 0;
    } else if ((s[pos] == '+' || s[pos] == '-') && pos + 6 == s.size() && s[pos + 3] == ':') {
        offset = (num(pos + 1, 2) * 3600 + num(pos + 4, 2) * 60) * (s[pos] == '-' ? -1 : 1);
    } else {
        throw EncodeError(EncodeError::BadInput, "bad $datetime offset " + s);
    }
    int64_t secs = days_from_civil(year, static_cast<unsigned>(mon), static_cast<unsigned>(day)) * 86400 +
                   hh * 3600 + mm * 60 + ss - offset;
    Bytes body;
    for (int i = 3; i >= 0; --i) body.push_back(static_cast<uint8_t>(nanos >> (8 * i)));
    auto usecs = static_cast<uint64_t>(secs);
    for (int i = 7; i >= 0; --i) body.push_back(static_cast<uint8_t>(usecs >> (8 * i)));
    w.ext(CACHEKIT_MSGPACK_EXT_TIMESTAMP, body);
}

bool is_tag(const Json &v) {
    return v.is_object() && v.size() == 1 && !v.begin().key().empty() && v.begin().key()[0] == '$';
}

void write_tag(Writer &w, const std::string &tag, const Json &arg) {
    if (tag == "$int") {
        write_int_literal(w, arg.get<std::string>());
    } else if (tag == "$float") {
        w.f64(parse_float_literal(arg.get<std::string>()));
    } else if (tag == "$bytes") {
        w.bin(from_hex(arg.get<std::string>()));
    } else if (tag == "$uuid") {
        std::string u = arg.get<std::string>();
        std::transform(u.begin(), u.end(), u.begin(), [](char c) { return (c >= 'A' && c <= 'Z') ? char(c + 32) : c; });
        w.str(u);
    } else if (tag == "$set") {
        Writer inner;
        inner.array(arg.size());
        for (const auto &e : arg) write_plain(inner, e, true);
        w.ext(CACHEKIT_MSGPACK_EXT_SET, inner.out);
    } else if (tag == "$datetime") {
        write_datetime(w, arg.get<std::string>());
    } else {
        throw EncodeError(EncodeError::BadInput, "unknown tag " + tag);
    }
}

void write_plain(Writer &w, const Json &v, bool tagged) {
    switch (v.type()) {
    case Json::value_t::null: w.nil(); return;
    case Json::value_t::boolean: w.boolean(v.get<bool>()); return;
    case Json::value_t::number_unsigned: w.uint(v.get<uint64_t>()); return;
    case Json::value_t::number_integer: w.sint(v.get<int64_t>()); return;
    case Json::value_t::number_float: w.f64(v.get<double>()); return;
    case Json::value_t::string: w.str(v.get_ref<const std::string &>()); return;
    case Json::value_t::array:
        w.array(v.size());
        for (const auto &e : v) write_plain(w, e, tagged);
        return;
    case Json::value_t::object:
        if (tagged && is_tag(v)) {
            write_tag(w, v.begin().key(), v.begin().value());
            return;
        }
        w.map(v.size());
        for (auto it = v.begin(); it != v.end(); ++it) {
            w.str(it.key());
            write_plain(w, it.value(), tagged);
        }
        return;
    default: throw EncodeError(EncodeError::BadInput, "unsupported JSON type");
    }
}

}  // namespace

Bytes encode_plain(const Json &value) {
    Writer w;
    write_plain(w, value, false);
    return w.out;
}

Bytes encode_tagged(const Json &value) {
    Writer w;
    write_plain(w, value, true);
    return w.out;
}

Bytes encode_auto_args(const Json &args, const Json &kwargs) {
    Writer w;
    w.array(2);
    write_plain(w, args, false);
    // Keyword arguments as a map sorted by name (UTF-8 byte order is code
    // point order).
    std::vector<std::pair<std::string, const Json *>> kw;
    for (auto it = kwargs.begin(); it != kwargs.end(); ++it) kw.emplace_back(it.key(), &it.value());
    std::sort(kw.begin(), kw.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    w.map(kw.size());
    for (const auto &[k, v] : kw) {
        w.str(k);
        write_plain(w, *v, false);
    }
    return w.out;
}

Json expected_rendering(const Json &v) {
    if (v.is_array()) {
        Json out = Json::array();
        for (const auto &e : v) out.push_back(expected_rendering(e));
        return out;
    }
    if (!v.is_object()) return v;
    if (is_tag(v)) {
        const std::string &tag = v.begin().key();
        if (tag == "$bytes") return v;  // msgpack_to_json's own convention
        if (tag == "$float") return Json(parse_float_literal(v.begin().value().get<std::string>()));
        throw EncodeError(EncodeError::BadInput, "tag " + tag + " has no JSON rendering to compare");
    }
    Json out = Json::object();
    for (auto it = v.begin(); it != v.end(); ++it) out[it.key()] = expected_rendering(it.value());
    return out;
}

// ---- Reporting ------------------------------------------------------------

void Report::ok(const std::string &name, const std::string &note) {
    ++passed_;
    if (note.empty()) std::printf("ok %s:%s\n", file_.c_str(), name.c_str());
    else std::printf("ok %s:%s (%s)\n", file_.c_str(), name.c_str(), note.c_str());
    std::fflush(stdout);
}

void Report::fail(const std::string &name, const std::string &detail) {
    ++failed_;
    std::printf("FAIL %s:%s: %s\n", file_.c_str(), name.c_str(), detail.c_str());
    std::fflush(stdout);
}

void Report::elsewhere(const std::string &name, const std::string &reason) {
    ++elsewhere_;
    std::printf("elsewhere %s:%s: %s\n", file_.c_str(), name.c_str(), reason.c_str());
    std::fflush(stdout);
}

void Report::category(const std::string &name, size_t count) {
    std::printf("category %s:%s: %zu vectors\n", file_.c_str(), name.c_str(), count);
    std::fflush(stdout);
}

void Report::summary() const {
    std::printf("conformance %s: %d vectors passed, %d failed, %d listed as covered elsewhere (%d total)\n",
                file_.c_str(), passed_, failed_, elsewhere_, passed_ + failed_ + elsewhere_);
    std::fflush(stdout);
}

std::string describe_rc(int rc) {
    std::string s = std::string(cachekit_error_name(rc)) + " (" + std::to_string(rc) + ")";
    if (rc != 0 && rc != CACHEKIT_ENOTFOUND) {
        const char *m = cachekit_error_last_message();
        if (m && *m) s += ": " + std::string(m);
    }
    return s;
}

bool Checks::ok(int rc, const std::string &call) {
    if (rc == CACHEKIT_OK) return true;
    add(call + " failed: " + describe_rc(rc));
    return false;
}

bool Checks::code(int rc, int want, const std::string &call) {
    if (rc == want) return true;
    add(call + " returned " + describe_rc(rc) + ", expected " + cachekit_error_name(want));
    return false;
}

bool Checks::code_in(int rc, std::initializer_list<int> want, const std::string &call) {
    for (int w : want)
        if (rc == w) return true;
    std::string names;
    for (int w : want) names += (names.empty() ? "" : " or ") + std::string(cachekit_error_name(w));
    add(call + " returned " + describe_rc(rc) + ", expected " + names);
    return false;
}

bool Checks::rejects(int rc, const std::string &call) {
    if (rc != CACHEKIT_OK) return true;
    add(call + " accepted it");
    return false;
}

// Long hex is abbreviated around the first difference.
static std::string abbreviate(const std::string &hex, size_t diff) {
    if (hex.size() <= 160) return hex;
    size_t from = diff > 40 ? diff - 40 : 0;
    std::string s = from ? "..." : "";
    s += hex.substr(from, 120);
    if (from + 120 < hex.size()) s += "...";
    return s + " (" + std::to_string(hex.size() / 2) + " bytes)";
}

void Checks::equal_hex(const std::string &got, const std::string &want, const std::string &what) {
    if (got == want) return;
    size_t diff = 0;
    while (diff < got.size() && diff < want.size() && got[diff] == want[diff]) ++diff;
    add(what + ": expected " + abbreviate(want, diff) + ", got " + abbreviate(got, diff) + " (first difference at byte " +
        std::to_string(diff / 2) + ")");
}

void Checks::report(Report &r, const std::string &name) const {
    if (!passed()) r.fail(name, detail_);
    else if (!elsewhere_.empty()) r.elsewhere(name, elsewhere_);
    else r.ok(name, notes_);
}

const std::string &str(const Json &v, const char *field) { return v.at(field).get_ref<const std::string &>(); }

const char *opt_cstr(const Json &v, const char *field) {
    auto it = v.find(field);
    if (it == v.end() || it->is_null()) return nullptr;
    return it->get_ref<const std::string &>().c_str();
}

std::string join_keys(const Json &keys) {
    std::string out;
    for (const auto &k : keys) {
        if (!out.empty()) out += ",";
        out += k.get<std::string>();
    }
    return out;
}

bool has_reject_reason(const Json &v, const char *reason) {
    const Json &r = v.at("reject_reasons");
    return std::find(r.begin(), r.end(), reason) != r.end();
}

// ---- A cache over a memory backend ----------------------------------------

MemoryCache::MemoryCache(const std::function<void(cachekit_cache_options &)> &configure) {
    cachekit_backend_options bo;
    cachekit_backend_options_init(&bo, sizeof bo);
    if (cachekit_backend_open(&backend_, "memory://", &bo) != 0)
        throw std::runtime_error("memory backend: " + describe_rc(cachekit_error_last_code()));
    cachekit_cache_options o;
    cachekit_cache_options_init(&o, sizeof o);
    o.backend = backend_;
    o.l1 = CACHEKIT_OFF;
    configure(o);
    rc_ = cachekit_cache_new(&cache_, &o);
}

MemoryCache::~MemoryCache() {
    cachekit_cache_free(cache_);
    cachekit_backend_free(backend_);
}

int MemoryCache::get_planted(std::string_view key, const Bytes &stored, Buf &out, std::string *message,
                             cachekit_lookup *info) {
    if (rc_ != 0) return rc_;
    int rc = cachekit_backend_set(backend_, key.data(), key.size(), stored.data(), stored.size(), 0);
    if (rc != 0) return rc;
    cachekit_error_clear();
    rc = cachekit_cache_get(cache_, out.p(), info, "", key.data(), key.size());
    if (rc != 0 && message) *message = cachekit_error_last_message();
    return rc;
}

}  // namespace ckconf
