// A userspace delay line for B9 where the kernel has no sch_netem: a TCP relay that
// forwards every accepted connection to one target and holds each chunk it reads for a
// fixed one-way delay before writing it on, in both directions. Each direction has a
// reader (stamps a chunk with its deadline on arrival) and a writer (a FIFO of
// (deadline, bytes); sleeps to just before the deadline, then spins), so chunks keep
// their order and their delays overlap like a link's, instead of adding up.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cachekit::bench {

struct DelayOptions {
    std::chrono::nanoseconds one_way{std::chrono::microseconds(125)};
    // The writer sleeps until this long before a deadline and spins the rest: the
    // sleep's wake-up jitter is absorbed by the spin.
    std::chrono::nanoseconds spin{std::chrono::microseconds(30)};
    size_t chunk_bytes = 64 * 1024;  // the most one read forwards as one chunk
};

class DelayRelay {
public:
    // Listens on listen_host:listen_port (0: a free port, see port()) and relays every
    // connection to target_host:target_port. Throws std::runtime_error when it cannot listen.
    DelayRelay(const std::string &listen_host, uint16_t listen_port, std::string target_host,
               uint16_t target_port, DelayOptions options);
    ~DelayRelay();
    DelayRelay(const DelayRelay &) = delete;
    DelayRelay &operator=(const DelayRelay &) = delete;

    uint16_t port() const { return port_; }
    // Closes the listener and every relayed connection (pending chunks are dropped) and
    // waits for the relay's threads. Idempotent.
    void stop();

    // Counters, for tests: connections whose relay threads have not all finished, and
    // sends that wrote only part of a chunk (the writer then waits and writes the rest).
    size_t open_connections() const { return open_.load(); }
    uint64_t partial_sends() const { return partial_sends_.load(); }

    struct Connection;  // defined in delay_line.cpp

private:
    void accept_loop();
    void relay(int client_fd);
    void thread_done();

    int listen_fd_ = -1;
    uint16_t port_ = 0;
    std::string target_host_;
    uint16_t target_port_;
    DelayOptions options_;
    std::thread acceptor_;
    std::atomic<bool> stopping_{false};
    std::atomic<size_t> open_{0};
    std::atomic<uint64_t> partial_sends_{0};
    std::mutex mu_;  // guards connections_ and live_threads_
    std::condition_variable all_done_;
    std::vector<std::weak_ptr<Connection>> connections_;
    size_t live_threads_ = 0;

};

}  // namespace cachekit::bench
