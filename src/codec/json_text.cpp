#include "codec/json_text.hpp"

#include <cstdint>

#include "codec/utf8.hpp"
#include "util/error.hpp"

namespace cachekit::json {
namespace {

class Parser {
public:
    Parser(std::string_view s, int code, size_t max_depth) : s_(s), code_(code), max_depth_(max_depth) {}

    Value document() {
        Value v = value(0);
        skip_ws();
        if (i_ != s_.size()) error("unexpected text after the JSON value");
        return v;
    }

private:
    [[noreturn]] void error(const std::string &why) {
        fail(code_, "invalid JSON at offset " + std::to_string(i_) + ": " + why);
    }
    void skip_ws() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
    }
    bool literal(std::string_view word) {
        if (s_.substr(i_, word.size()) != word) return false;
        i_ += word.size();
        return true;
    }

    Value value(size_t depth) {
        if (depth > max_depth_) error("nested too deeply");
        skip_ws();
        if (i_ >= s_.size()) error("unexpected end of input");
        Value v;
        v.begin = i_;
        char c = s_[i_];
        if (c == '{') {
            v.type = Value::Type::Object;
            ++i_;
            skip_ws();
            if (i_ < s_.size() && s_[i_] == '}') {
                ++i_;
            } else {
                for (;;) {
                    skip_ws();
                    if (i_ >= s_.size() || s_[i_] != '"') error("expected a string key");
                    std::string key = string();
                    skip_ws();
                    if (i_ >= s_.size() || s_[i_] != ':') error("expected ':'");
                    ++i_;
                    v.members.push_back(Member{std::move(key), value(depth + 1)});
                    skip_ws();
                    if (i_ < s_.size() && s_[i_] == ',') { ++i_; continue; }
                    if (i_ < s_.size() && s_[i_] == '}') { ++i_; break; }
                    error("expected ',' or '}'");
                }
            }
        } else if (c == '[') {
            v.type = Value::Type::Array;
            ++i_;
            skip_ws();
            if (i_ < s_.size() && s_[i_] == ']') {
                ++i_;
            } else {
                for (;;) {
                    v.items.push_back(value(depth + 1));
                    skip_ws();
                    if (i_ < s_.size() && s_[i_] == ',') { ++i_; continue; }
                    if (i_ < s_.size() && s_[i_] == ']') { ++i_; break; }
                    error("expected ',' or ']'");
                }
            }
        } else if (c == '"') {
            v.type = Value::Type::String;
            v.text = string();
        } else if (literal("true")) {
            v.type = Value::Type::Bool;
            v.boolean = true;
        } else if (literal("false")) {
            v.type = Value::Type::Bool;
        } else if (literal("null")) {
            v.type = Value::Type::Null;
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            v.type = Value::Type::Number;
            v.text = number();
        } else {
            error("unexpected character");
        }
        v.end = i_;
        return v;
    }

    std::string number() {
        size_t start = i_;
        auto digits = [&] {
            size_t d = i_;
            while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
            return i_ - d;
        };
        if (s_[i_] == '-') ++i_;
        if (i_ < s_.size() && s_[i_] == '0') ++i_;
        else if (digits() == 0) error("bad number");
        if (i_ < s_.size() && s_[i_] == '.') {
            ++i_;
            if (digits() == 0) error("bad number");
        }
        if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
            ++i_;
            if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
            if (digits() == 0) error("bad number");
        }
        return std::string(s_.substr(start, i_ - start));
    }

    unsigned hex4() {
        if (s_.size() - i_ < 4) error("short \\u escape");
        unsigned v = 0;
        for (int k = 0; k < 4; ++k) {
            char c = s_[i_++];
            v <<= 4;
            if (c >= '0' && c <= '9') v |= unsigned(c - '0');
            else if (c >= 'a' && c <= 'f') v |= unsigned(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F') v |= unsigned(c - 'A' + 10);
            else error("bad \\u escape");
        }
        return v;
    }

    static void put_utf8(std::string &out, uint32_t cp) {
        if (cp < 0x80) {
            out.push_back(char(cp));
        } else if (cp < 0x800) {
            out.push_back(char(0xc0 | cp >> 6));
            out.push_back(char(0x80 | (cp & 0x3f)));
        } else if (cp < 0x10000) {
            out.push_back(char(0xe0 | cp >> 12));
            out.push_back(char(0x80 | ((cp >> 6) & 0x3f)));
            out.push_back(char(0x80 | (cp & 0x3f)));
        } else {
            out.push_back(char(0xf0 | cp >> 18));
            out.push_back(char(0x80 | ((cp >> 12) & 0x3f)));
            out.push_back(char(0x80 | ((cp >> 6) & 0x3f)));
            out.push_back(char(0x80 | (cp & 0x3f)));
        }
    }

    std::string string() {
        ++i_;  // opening quote
        std::string out;
        for (;;) {
            if (i_ >= s_.size()) error("unterminated string");
            unsigned char c = static_cast<unsigned char>(s_[i_]);
            if (c == '"') { ++i_; break; }
            if (c < 0x20) error("control character in a string");
            if (c == '\\') {
                ++i_;
                if (i_ >= s_.size()) error("unterminated escape");
                char e = s_[i_++];
                switch (e) {
                case '"': out.push_back('"'); break;
                case '\\': out.push_back('\\'); break;
                case '/': out.push_back('/'); break;
                case 'b': out.push_back('\b'); break;
                case 'f': out.push_back('\f'); break;
                case 'n': out.push_back('\n'); break;
                case 'r': out.push_back('\r'); break;
                case 't': out.push_back('\t'); break;
                case 'u': {
                    uint32_t cp = hex4();
                    if (cp >= 0xd800 && cp <= 0xdbff) {
                        if (s_.substr(i_, 2) != "\\u") error("lone high surrogate");
                        i_ += 2;
                        uint32_t lo = hex4();
                        if (lo < 0xdc00 || lo > 0xdfff) error("bad low surrogate");
                        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                    } else if (cp >= 0xdc00 && cp <= 0xdfff) {
                        error("lone low surrogate");
                    }
                    put_utf8(out, cp);
                    break;
                }
                default: error("bad escape");
                }
                continue;
            }
            size_t k = utf8_sequence_length(s_, i_);
            if (k == 0) error("invalid UTF-8");
            out.append(s_.substr(i_, k));
            i_ += k;
        }
        return out;
    }

    std::string_view s_;
    int code_;
    size_t max_depth_;
    size_t i_ = 0;
};

void put_u_escape(std::string &out, unsigned v) {
    static const char digits[] = "0123456789abcdef";
    out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out.push_back(digits[(v >> shift) & 15]);
}

}  // namespace

Value parse(std::string_view text, int error_code, size_t max_depth) {
    return Parser(text, error_code, max_depth).document();
}

void write_python_string(std::string_view s, std::string &out) {
    out.push_back('"');
    for (size_t i = 0; i < s.size();) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c >= 0x80) {
            size_t k = utf8_sequence_length(s, i);
            if (k == 0) { put_u_escape(out, 0xfffd); ++i; continue; }
            uint32_t cp = k == 2 ? (c & 0x1fu) : k == 3 ? (c & 0x0fu) : (c & 0x07u);
            for (size_t j = 1; j < k; ++j) cp = cp << 6 | (static_cast<unsigned char>(s[i + j]) & 0x3fu);
            if (cp >= 0x10000) {
                cp -= 0x10000;
                put_u_escape(out, 0xd800 + (cp >> 10));
                put_u_escape(out, 0xdc00 + (cp & 0x3ff));
            } else {
                put_u_escape(out, cp);
            }
            i += k;
            continue;
        }
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
            if (c < 0x20 || c == 0x7f) put_u_escape(out, c);
            else out.push_back(char(c));
        }
        ++i;
    }
    out.push_back('"');
}

void write_python(const Value &v, std::string &out) {
    switch (v.type) {
    case Value::Type::Null: out += "null"; return;
    case Value::Type::Bool: out += v.boolean ? "true" : "false"; return;
    case Value::Type::Number: out += v.text; return;
    case Value::Type::String: write_python_string(v.text, out); return;
    case Value::Type::Array:
        out.push_back('[');
        for (size_t i = 0; i < v.items.size(); ++i) {
            if (i) out += ", ";
            write_python(v.items[i], out);
        }
        out.push_back(']');
        return;
    case Value::Type::Object:
        out.push_back('{');
        for (size_t i = 0; i < v.members.size(); ++i) {
            if (i) out += ", ";
            write_python_string(v.members[i].first, out);
            out += ": ";
            write_python(v.members[i].second, out);
        }
        out.push_back('}');
        return;
    }
}

}  // namespace cachekit::json
