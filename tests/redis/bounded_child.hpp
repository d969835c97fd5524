// Run a check in a forked child whose memory is bounded (in sanitizer
// builds: in this process, unbounded), to prove a call
// did not allocate what a hostile reply declared: the child's address space
// is capped (RLIMIT_AS, VmSize + 256 MiB) unless a sanitizer or valgrind
// owns the address space, and in every build its peak RSS (VmHWM) may grow
// by at most 128 MiB. The check returns true on success; the child leaves
// with _exit (the parent's objects are not its own).
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

namespace cachekit::testing {

// A /proc/self/status field in bytes ("VmHWM", "VmSize"), 0 if missing.
inline unsigned long long proc_status_bytes(const char *field) {
    std::ifstream in("/proc/self/status");
    std::string line;
    const std::string want = std::string(field) + ":";
    while (std::getline(in, line)) {
        if (line.compare(0, want.size(), want) != 0) continue;
        std::istringstream rest(line.substr(want.size()));
        unsigned long long kb = 0;
        rest >> kb;
        return kb * 1024;
    }
    return 0;
}

// Built with ASan or TSan: their runtimes own the address space, and a
// fork() of this threaded process (the fake servers' threads) can stop in
// their locks, so the check runs in this process instead.
inline constexpr bool kSanitized =
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
    true;
#else
    false;
#endif
#else
    false;
#endif

inline bool address_space_is_owned() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    return true;
#else
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
    return true;
#endif
#endif
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line))
        if (line.find("vgpreload") != std::string::npos) return true;  // valgrind
    return false;
#endif
}

// The child's exit status: 0 when `check` passed within the bounds.
inline int run_bounded(const std::function<bool()> &check) {
    constexpr unsigned long long kGrowth = 128ULL << 20;
    if constexpr (kSanitized) return check() ? 0 : 1;
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        if (!address_space_is_owned()) {
            rlimit lim{};
            lim.rlim_cur = lim.rlim_max = proc_status_bytes("VmSize") + (256ULL << 20);
            setrlimit(RLIMIT_AS, &lim);
        }
        const unsigned long long before = proc_status_bytes("VmHWM");
        bool ok = check();
        const unsigned long long peak = proc_status_bytes("VmHWM");
        if (peak > before + kGrowth) {
            std::fprintf(stderr, "peak RSS grew by %llu MiB\n", (peak - before) >> 20);
            ok = false;
        }
        std::fflush(nullptr);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace cachekit::testing
