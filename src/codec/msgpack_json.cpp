#include "codec/msgpack_json.hpp"

#include <charconv>
#include <cmath>

#include "codec/hashing.hpp"
#include "codec/msgpack_bounds.hpp"
#include "codec/msgpack_cursor.hpp"
#include "codec/utf8.hpp"

namespace cachekit::msgpack {
namespace {

void append_number(std::string &out, double d) {
    if (std::isnan(d)) { out += "\"NaN\""; return; }
    if (std::isinf(d)) { out += d > 0 ? "\"Infinity\"" : "\"-Infinity\""; return; }
    char buf[32];
    auto res = std::to_chars(buf, buf + sizeof buf, d);
    std::string_view text(buf, size_t(res.ptr - buf));
    out += text;
    if (text.find_first_of(".eE") == std::string_view::npos) out += ".0";  // keep it visibly a float
}

void render(Cursor &in, std::string &out) {
    Header h = in.next();
    switch (h.kind) {
    case Kind::Nil: out += "null"; return;
    case Kind::Bool: out += h.u ? "true" : "false"; return;
    case Kind::Uint: out += std::to_string(h.u); return;
    case Kind::Int: out += std::to_string(h.i); return;
    case Kind::Float32:
    case Kind::Float64: append_number(out, h.d); return;
    case Kind::Str: {
        std::string_view s = in.body(h);
        if (utf8_valid(s)) {
            append_json_string(out, s);
        } else {
            out += "{\"$invalid_utf8\": \"" + to_hex(s.data(), s.size()) + "\"}";
        }
        return;
    }
    case Kind::Bin: {
        std::string_view b = in.body(h);
        out += "{\"$bytes\": \"" + to_hex(b.data(), b.size()) + "\"}";
        return;
    }
    case Kind::Ext: {
        std::string_view b = in.body(h);
        out += "{\"$ext\": " + std::to_string(h.ext_type) + ", \"data\": \"" + to_hex(b.data(), b.size()) + "\"}";
        return;
    }
    case Kind::Array:
        out.push_back('[');
        for (uint64_t i = 0; i < h.length; ++i) {
            if (i) out += ", ";
            render(in, out);
        }
        out.push_back(']');
        return;
    case Kind::Map:
        out.push_back('{');
        for (uint64_t i = 0; i < h.length; ++i) {
            if (i) out += ", ";
            Cursor peek = in;
            Header kh = peek.next();
            if (kh.kind == Kind::Str) {
                render(in, out);
            } else {
                std::string key;
                render(in, key);  // a non-string key becomes its JSON text
                append_json_string(out, key);
            }
            out += ": ";
            render(in, out);
        }
        out.push_back('}');
        return;
    }
}

}  // namespace

void append_json_string(std::string &out, std::string_view s) {
    static const char digits[] = "0123456789abcdef";
    out.push_back('"');
    for (unsigned char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (c < 0x20) {
                out += "\\u00";
                out.push_back(digits[c >> 4]);
                out.push_back(digits[c & 15]);
            } else {
                out.push_back(char(c));
            }
        }
    }
    out.push_back('"');
}

std::string to_json(const uint8_t *data, size_t len) {
    check_document(data, len);
    Cursor in(data, len);
    std::string out;
    render(in, out);
    return out;
}

}  // namespace cachekit::msgpack
