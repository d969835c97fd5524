// A Prometheus label value as the text exposition spells it: backslash,
// quote and newline escaped. Shared by the cache's metrics and the backends
// that label their own series (cluster nodes, the Sentinel primary).
#pragma once

#include <string>
#include <string_view>

namespace cachekit {

inline std::string prometheus_label(std::string_view v) {
    std::string out;
    out.reserve(v.size());
    for (char c : v) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out.push_back(c);
    }
    return out;
}

}  // namespace cachekit
