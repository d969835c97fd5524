// Reading the cache's Prometheus text in tests: sums over series and the
// namespace labels it carries (shared by the metrics and limits suites).
#pragma once

#include <cstdint>
#include <set>
#include <string>

namespace prometheus_text {

// The sum of the values of the lines that start with `prefix` and contain `part`.
inline uint64_t sum_lines(const std::string &text, const std::string &prefix, const std::string &part) {
    uint64_t sum = 0;
    for (size_t at = 0; at < text.size();) {
        size_t end = text.find('\n', at);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(at, end - at);
        at = end + 1;
        if (line.rfind(prefix, 0) == 0 && line.find(part) != std::string::npos)
            sum += std::stoull(line.substr(line.rfind(' ') + 1));
    }
    return sum;
}

// How many distinct namespace labels the text has (one series per namespace).
inline size_t namespace_labels(const std::string &text) {
    std::set<std::string> names;
    const std::string marker = "cachekit_stale_served_total{namespace=\"";
    for (size_t at = text.find(marker); at != std::string::npos; at = text.find(marker, at + 1)) {
        size_t from = at + marker.size();
        names.insert(text.substr(from, text.find('"', from) - from));
    }
    return names.size();
}

}  // namespace prometheus_text
