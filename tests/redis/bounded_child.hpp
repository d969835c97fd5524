// Forked children with a capped address space, to prove a call did not
// allocate what hostile input declared (tests/redis, tests/unit, tests/limits):
//   - run_in_child(body): body's return value as the child's exit status;
//   - cap_address_space(headroom): RLIMIT_AS at what is mapped + headroom;
//   - run_bounded(check): the Redis limit tests' form. The child's address
//     space is capped (VmSize + 256 MiB) unless a sanitizer or valgrind owns
//     the address space, and in every build its peak RSS (VmHWM) may grow by
//     at most 128 MiB. In sanitizer builds the check runs in this process,
//     unbounded. The check returns true on success.
// A child leaves with _exit (the parent's objects are not its own).
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

// Runs `body` in a forked child. Returns the child's exit status (body's
// return value), 128 + the signal that killed it, or -1 if fork failed.
inline int run_in_child(const std::function<int()> &body) {
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        const int rc = body();
        std::fflush(nullptr);
        _exit(rc);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Forks children one after another while the caller's other threads work:
// before_round(round) in the parent, then child() as run_in_child runs it.
// Returns the first round whose child did not exit 0 (its run_in_child
// status in *status), or -1 when all `rounds` did.
inline int first_failed_round(int rounds, const std::function<void(int)> &before_round,
                              const std::function<int()> &child, int *status) {
    for (int round = 0; round < rounds; ++round) {
        before_round(round);
        *status = run_in_child(child);
        if (*status != 0) return round;
    }
    return -1;
}

// run_in_child's status in words, for a failure message.
inline std::string describe_child_status(int status) {
    if (status < 0) return "fork failed";
    if (status > 128) return "the child was killed by signal " + std::to_string(status - 128) + " (blocked on a lock?)";
    return "the child exited with status " + std::to_string(status);
}

// Caps this process's address space at what it maps now plus `headroom`
// bytes; false if the kernel refused.
inline bool cap_address_space(unsigned long long headroom) {
    rlimit lim{};
    lim.rlim_cur = lim.rlim_max = proc_status_bytes("VmSize") + headroom;
    return setrlimit(RLIMIT_AS, &lim) == 0;
}

// 0 when `check` passed within the bounds.
inline int run_bounded(const std::function<bool()> &check) {
    constexpr unsigned long long kGrowth = 128ULL << 20;
    if constexpr (kSanitized) return check() ? 0 : 1;
    return run_in_child([&] {
        if (!address_space_is_owned()) cap_address_space(256ULL << 20);
        const unsigned long long before = proc_status_bytes("VmHWM");
        bool ok = check();
        const unsigned long long peak = proc_status_bytes("VmHWM");
        if (peak > before + kGrowth) {
            std::fprintf(stderr, "peak RSS grew by %llu MiB\n", (peak - before) >> 20);
            ok = false;
        }
        return ok ? 0 : 1;
    });
}

}  // namespace cachekit::testing
