// What a cachekit_set_log_handler handler heard, for the failure-log tests
// (tests/cache and tests/cluster): record() is the handler, take_lines()
// hands over and forgets what it heard so far.
#pragma once

#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

namespace cachekit::testing {

struct LogLine {
    int level;
    std::string event;
    std::string message;
};

inline std::mutex g_log_mu;
inline std::vector<LogLine> g_log_lines;

inline void record(int level, const char *event, const char *message, void *) {
    std::lock_guard lock(g_log_mu);
    g_log_lines.push_back({level, event, message});
}

inline std::vector<LogLine> take_lines() {
    std::lock_guard lock(g_log_mu);
    std::vector<LogLine> out;
    out.swap(g_log_lines);
    return out;
}

inline size_t count(const std::vector<LogLine> &lines, const char *event) {
    size_t n = 0;
    for (const LogLine &l : lines) n += l.event == event;
    return n;
}

inline const LogLine *find(const std::vector<LogLine> &lines, const char *event) {
    for (const LogLine &l : lines)
        if (l.event == event) return &l;
    return nullptr;
}

inline void print(const std::vector<LogLine> &lines) {
    for (const LogLine &l : lines) std::fprintf(stderr, "  [%d] %s: %s\n", l.level, l.event.c_str(), l.message.c_str());
}

}  // namespace cachekit::testing

// fail_msg (cmocka) after printing what the handler heard.
#define FAIL_SHOWING(lines, ...)                 \
    do {                                         \
        cachekit::testing::print(lines);         \
        fail_msg(__VA_ARGS__);                   \
    } while (0)
