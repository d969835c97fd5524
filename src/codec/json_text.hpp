// A small strict JSON reader and a writer that reproduces Python's
// json.dumps defaults (", " and ": " separators, ASCII-only output), for the
// CK v3 frame header. Object keys keep their order.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cachekit::json {

struct Member;

struct Value {
    enum class Type { Null, Bool, Number, String, Array, Object };
    Type type = Type::Null;
    bool boolean = false;
    std::string text;  // String: decoded UTF-8; Number: the literal as written
    std::vector<Value> items;
    std::vector<Member> members;  // object members in document order
    size_t begin = 0, end = 0;    // span of this value in the parsed text

    const Value *find(std::string_view key) const;
};

struct Member {
    std::string first;  // the key
    Value second;       // the value
};

inline const Value *Value::find(std::string_view key) const {
    for (const auto &m : members)
        if (m.first == key) return &m.second;
    return nullptr;
}

// Parse exactly one JSON value (white space around it allowed). Throws
// cachekit::Error(code, ...) with `error_code` on malformed input.
Value parse(std::string_view text, int error_code, size_t max_depth = 64);

// Python json.dumps(value) with default settings.
void write_python(const Value &value, std::string &out);
void write_python_string(std::string_view utf8, std::string &out);

}  // namespace cachekit::json
