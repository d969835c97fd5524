#include "codec/msgpack_canonical.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <vector>

#include "codec/msgpack_bounds.hpp"
#include "codec/msgpack_cursor.hpp"
#include "codec/msgpack_writer.hpp"
#include "codec/utf8.hpp"
#include "util/error.hpp"

namespace cachekit::msgpack {
namespace {

constexpr double kTwoTo63 = 9223372036854775808.0;
constexpr double kTwoTo64 = 18446744073709551616.0;

class Canonicalizer {
public:
    explicit Canonicalizer(Profile profile) : profile_(profile) {}

    void item(Cursor &in, Writer &out, uint32_t depth) {
        Header h = in.next();
        switch (h.kind) {
        case Kind::Nil: out.nil(); return;
        case Kind::Bool: out.boolean(h.u != 0); return;
        case Kind::Uint: out.uint(h.u); return;
        case Kind::Int: out.sint(h.i); return;
        case Kind::Float32:
        case Kind::Float64: number(h.d, out); return;
        case Kind::Str: {
            std::string_view s = in.body(h);
            if (!utf8_valid(s)) fail(CACHEKIT_EUNSUPPORTED, "a string is not valid UTF-8");
            out.str(s);
            return;
        }
        case Kind::Bin: {
            std::string_view b = in.body(h);
            out.bin(b.data(), b.size());
            return;
        }
        case Kind::Array:
            out.array(h.length);
            for (uint64_t i = 0; i < h.length; ++i) item(in, out, depth + 1);
            return;
        case Kind::Map: map(in, out, h.length, depth); return;
        case Kind::Ext: ext(in, out, h, depth); return;
        }
    }

private:
    void number(double d, Writer &out) {
        if (profile_ == Profile::Args) {
            if (std::isnan(d)) fail(CACHEKIT_EUNSUPPORTED, "NaN is not allowed in interop arguments");
            if (std::isinf(d)) fail(CACHEKIT_EUNSUPPORTED, "infinity is not allowed in interop arguments");
            // Integral floats in [-2^63, 2^64) are written as ints (2.0 -> 2, -0.0 -> 0).
            if (d == std::trunc(d) && d >= -kTwoTo63 && d < kTwoTo64) {
                if (d >= 0) out.uint(uint64_t(d));
                else out.sint(int64_t(d));
                return;
            }
        } else if (profile_ == Profile::AutoArgs && d == 0.0) {
            d = 0.0;  // the reference SDK normalises -0.0 to 0.0
        }
        out.float64(d);
    }

    void map(Cursor &in, Writer &out, uint64_t pairs, uint32_t depth) {
        struct Entry {
            std::string_view key;       // raw key string (string keys only)
            size_t begin, end;          // encoded key+value in scratch
        };
        std::vector<Entry> entries;
        entries.reserve(size_t(pairs));
        Buffer scratch;
        Writer sw(scratch.get());
        bool all_strings = true;
        for (uint64_t i = 0; i < pairs; ++i) {
            size_t begin = scratch.size();
            Header kh;
            {
                Cursor peek = in;
                kh = peek.next();
            }
            std::string_view key;
            if (kh.kind == Kind::Str) {
                Cursor peek = in;
                peek.next();
                key = peek.body(kh);
            } else {
                all_strings = false;
                if (profile_ != Profile::AutoArgs)
                    fail(CACHEKIT_EUNSUPPORTED, "map keys must be strings in canonical MessagePack");
            }
            item(in, sw, depth + 1);
            item(in, sw, depth + 1);
            entries.push_back({key, begin, scratch.size()});
        }
        if (all_strings) {
            // UTF-8 byte order is code point order.
            std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) { return a.key < b.key; });
            for (size_t i = 1; i < entries.size(); ++i)
                if (entries[i].key == entries[i - 1].key)
                    fail(CACHEKIT_EUNSUPPORTED, "duplicate map key \"" + std::string(entries[i].key) + "\"");
        }
        out.map(pairs);
        const char *base = scratch.data();
        for (const Entry &e : entries) out.raw(base + e.begin, e.end - e.begin);
    }

    void ext(Cursor &in, Writer &out, const Header &h, uint32_t depth) {
        std::string_view body = in.body(h);
        if (profile_ == Profile::AutoArgs)
            fail(CACHEKIT_EUNSUPPORTED, "ext type " + std::to_string(h.ext_type) + " is not allowed in auto-mode arguments");
        if (h.ext_type == CACHEKIT_MSGPACK_EXT_TIMESTAMP && profile_ == Profile::Args) {
            number(timestamp_seconds(body), out);
            return;
        }
        if (h.ext_type == CACHEKIT_MSGPACK_EXT_SET) {
            set(body, out, depth);
            return;
        }
        fail(CACHEKIT_EUNSUPPORTED, "ext type " + std::to_string(h.ext_type) + " is not allowed in canonical MessagePack");
    }

    // An aware datetime: float64 of floor(microseconds since the epoch) / 1e6.
    static double timestamp_seconds(std::string_view b) {
        const auto *p = reinterpret_cast<const uint8_t *>(b.data());
        int64_t seconds;
        uint32_t nanos;
        if (b.size() == 4) {
            seconds = load_be32(p);
            nanos = 0;
        } else if (b.size() == 8) {
            uint64_t v = load_be64(p);
            nanos = uint32_t(v >> 34);
            seconds = int64_t(v & 0x3ffffffffULL);
        } else if (b.size() == 12) {
            nanos = load_be32(p);
            seconds = int64_t(load_be64(p + 4));
        } else {
            fail(CACHEKIT_EUNSUPPORTED, "a timestamp ext must hold 4, 8 or 12 bytes");
        }
        if (nanos > 999999999u) fail(CACHEKIT_EUNSUPPORTED, "timestamp nanoseconds out of range");
        // |seconds| is bounded so the microsecond count fits an int64 and a double is exact enough.
        if (seconds > 9223372036854LL || seconds < -9223372036854LL)
            fail(CACHEKIT_EUNSUPPORTED, "timestamp out of range");
        int64_t micros = seconds * 1000000 + int64_t(nanos / 1000);
        return double(micros) / 1e6;
    }

    // A set: canonical elements sorted by their encoded bytes, duplicates dropped.
    void set(std::string_view body, Writer &out, uint32_t depth) {
        const auto *p = reinterpret_cast<const uint8_t *>(body.data());
        check_document(p, body.size());
        Cursor inner(p, body.size());
        Header h = inner.next();
        if (h.kind != Kind::Array) fail(CACHEKIT_EUNSUPPORTED, "a set ext must hold one MessagePack array");
        if (depth + 1 > kMaxDepth) fail(CACHEKIT_EDEPTH, "nesting deeper than 1024 levels");
        std::vector<std::string> elements;
        elements.reserve(size_t(h.length));
        for (uint64_t i = 0; i < h.length; ++i) {
            Buffer one;
            Writer w(one.get());
            item(inner, w, depth + 1);
            elements.emplace_back(one.view());
        }
        std::sort(elements.begin(), elements.end());
        elements.erase(std::unique(elements.begin(), elements.end()), elements.end());
        out.array(elements.size());
        for (const std::string &e : elements) out.raw(e.data(), e.size());
    }

    Profile profile_;
};

}  // namespace

void canonicalize(const uint8_t *data, size_t len, Profile profile, cachekit_buf *out) {
    check_document(data, len);
    buf_resize(out, 0);
    Writer w(out);
    Cursor in(data, len);
    Canonicalizer(profile).item(in, w, 0);
}

}  // namespace cachekit::msgpack
