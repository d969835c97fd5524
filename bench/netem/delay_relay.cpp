// delay_relay: B9's link where the kernel has no sch_netem (bench/netem/b9.py starts it).
//   delay_relay --listen HOST:PORT --target HOST:PORT [--delay-us N] [--spin-us N] [--realtime]
// Relays every connection made to --listen to --target, holding each chunk N us (default
// 125, so 250 us per round trip) in each direction. PORT 0 listens on a free port.
// --realtime runs the relay's threads SCHED_FIFO when allowed (root): netem works in the
// kernel, out of the scheduler's way, and on a loaded machine a normal-priority relay
// adds the run queue's waits to the link. Prints "listening PORT sched=fifo|other" on
// stdout once it accepts, then runs until SIGTERM or SIGINT.
#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>

#include "delay_line.hpp"

namespace {

int usage(const char *why) {
    std::fprintf(stderr,
                 "delay_relay: %s\nusage: delay_relay --listen HOST:PORT --target HOST:PORT [--delay-us N] "
                 "[--spin-us N] [--realtime]\n",
                 why);
    return 2;
}

bool split_host_port(const std::string &s, std::string &host, uint16_t &port) {
    const auto colon = s.rfind(':');
    if (colon == std::string::npos || colon == 0) return false;
    char *end = nullptr;
    const unsigned long p = std::strtoul(s.c_str() + colon + 1, &end, 10);
    if (end == s.c_str() + colon + 1 || *end != '\0' || p > 65535) return false;
    host = s.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    port = static_cast<uint16_t>(p);
    return true;
}

bool parse_us(const char *s, long &out) {
    char *end = nullptr;
    out = std::strtol(s, &end, 10);
    return end != s && *end == '\0' && out >= 0 && out <= 10'000'000;
}

}  // namespace

int main(int argc, char **argv) {
    std::string listen_host, target_host;
    uint16_t listen_port = 0, target_port = 0;
    bool have_listen = false, have_target = false, realtime = false;
    cachekit::bench::DelayOptions options;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "--realtime") {
            realtime = true;
            continue;
        }
        if (i + 1 >= argc) return usage(("missing the value of " + arg).c_str());
        const char *value = argv[++i];
        long us = 0;
        if (arg == "--listen") {
            if (!split_host_port(value, listen_host, listen_port)) return usage("--listen wants HOST:PORT");
            have_listen = true;
        } else if (arg == "--target") {
            if (!split_host_port(value, target_host, target_port)) return usage("--target wants HOST:PORT");
            have_target = true;
        } else if (arg == "--delay-us") {
            if (!parse_us(value, us)) return usage("--delay-us wants microseconds (0 to 10000000)");
            options.one_way = std::chrono::microseconds(us);
        } else if (arg == "--spin-us") {
            if (!parse_us(value, us)) return usage("--spin-us wants microseconds (0 to 10000000)");
            options.spin = std::chrono::microseconds(us);
        } else {
            return usage(("unknown argument " + arg).c_str());
        }
    }
    if (!have_listen || !have_target) return usage("--listen and --target are required");

    // Wait for the signals in this thread only: the relay's threads inherit the mask.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGTERM);
    sigaddset(&stop_signals, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    // The relay's threads inherit this thread's policy.
    const char *sched = "other";
    if (realtime) {
        sched_param param{};
        param.sched_priority = 10;
        const int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param);
        if (rc == 0)
            sched = "fifo";
        else
            std::fprintf(stderr, "delay_relay: SCHED_FIFO refused (%s): normal priority\n", std::strerror(rc));
    }
    try {
        cachekit::bench::DelayRelay relay(listen_host, listen_port, target_host, target_port, options);
        std::printf("listening %u sched=%s\n", relay.port(), sched);
        std::fflush(stdout);
        int sig = 0;
        sigwait(&stop_signals, &sig);
        relay.stop();
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
