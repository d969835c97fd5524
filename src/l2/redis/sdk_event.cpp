#include "l2/redis/sdk_event.hpp"

#include <algorithm>
#include <cstdint>

#include "codec/blake3.hpp"

namespace cachekit::l2::sdk_event {
namespace {

constexpr size_t kMaxEventBytes = 4096;
constexpr size_t kMaxFieldBytes = 1024;
constexpr size_t kMaxFunctionNameBytes = 1024;  // the SDK's function segment is at most 200

// Reads one MessagePack str (fixstr, str8, str16) at `pos`.
std::optional<std::string_view> read_str(std::string_view b, size_t &pos) {
    if (pos >= b.size()) return std::nullopt;
    const auto tag = uint8_t(b[pos++]);
    size_t n;
    if ((tag & 0xe0) == 0xa0) {
        n = tag & 0x1f;
    } else if (tag == 0xd9) {
        if (pos + 1 > b.size()) return std::nullopt;
        n = uint8_t(b[pos]);
        pos += 1;
    } else if (tag == 0xda) {
        if (pos + 2 > b.size()) return std::nullopt;
        n = size_t(uint8_t(b[pos])) << 8 | uint8_t(b[pos + 1]);
        pos += 2;
    } else {
        return std::nullopt;
    }
    if (n > kMaxFieldBytes || pos + n > b.size()) return std::nullopt;
    std::string_view s = b.substr(pos, n);
    pos += n;
    return s;
}

void write_str(std::string &out, std::string_view s) {
    if (s.size() < 32) {
        out.push_back(char(0xa0 | s.size()));
    } else if (s.size() < 256) {
        out.push_back(char(0xd9));
        out.push_back(char(s.size()));
    } else {
        out.push_back(char(0xda));
        out.push_back(char(s.size() >> 8));
        out.push_back(char(s.size() & 0xff));
    }
    out.append(s);
}

}  // namespace

std::optional<std::string> registry_hash(std::string_view name) {
    if (name.size() > kMaxFunctionNameBytes) return std::nullopt;
    return blake3::hex_prefix(name, 8);
}

std::optional<std::string> registry_id_of_key(std::string_view key) {
    std::string_view ns, rest = key;
    if (rest.substr(0, 3) == "ns:") {
        const size_t func = rest.find(":func:", 3);
        if (func == std::string_view::npos) return std::nullopt;
        ns = rest.substr(3, func - 3);
        rest.remove_prefix(func + 1);
    }
    if (rest.substr(0, 5) != "func:") return std::nullopt;
    rest.remove_prefix(5);
    const size_t end = rest.find(":args:");
    if (end == std::string_view::npos || end == 0) return std::nullopt;
    std::optional<std::string> h = registry_hash(rest.substr(0, end));
    if (!h) return std::nullopt;
    return "ck:reg:" + std::string(ns) + ":" + *h;
}

std::string announced_registry_id(std::string_view key) {
    std::optional<std::string> id = registry_id_of_key(key);
    return id ? std::move(*id) : std::string(kLibraryRegistryId);
}

std::optional<Event> decode(std::string_view b) {
    if (b.empty() || b.size() > kMaxEventBytes) return std::nullopt;
    const auto head = uint8_t(b[0]);
    if ((head & 0xf0) != 0x80 || (head & 0x0f) > 4) return std::nullopt;
    size_t pos = 1;
    Event ev;
    bool has_r = false;
    for (unsigned i = 0; i < (head & 0x0fu); ++i) {
        auto name = read_str(b, pos);
        auto value = read_str(b, pos);
        if (!name || !value) return std::nullopt;
        if (*name == "r") {
            ev.registry_id = std::string(*value);
            has_r = true;
        } else if (*name == "k") {
            ev.key = std::string(*value);
        }
    }
    if (!has_r || pos != b.size()) return std::nullopt;
    // "ck:reg:{ns}:{hash}": the namespace is what lies between.
    constexpr std::string_view kReg = "ck:reg:";
    const std::string_view r = ev.registry_id;
    const size_t last = r.rfind(':');
    if (r.substr(0, kReg.size()) != kReg || last < kReg.size()) return std::nullopt;
    ev.ns = std::string(r.substr(kReg.size(), last - kReg.size()));
    return ev;
}

std::string encode(std::string_view registry_id, std::optional<std::string_view> key) {
    std::string out;
    const bool with_key = key && key->size() <= kMaxFieldBytes;
    out.push_back(char(with_key ? 0x82 : 0x81));
    write_str(out, "r");
    write_str(out, registry_id.substr(0, kMaxFieldBytes));
    if (with_key) {
        write_str(out, "k");
        write_str(out, *key);
    }
    return out;
}

}  // namespace cachekit::l2::sdk_event
