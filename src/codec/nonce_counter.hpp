// Counter nonces of protocol.md section 6: u64be instance id || u32be counter.
// An instance id is drawn from the kernel (getrandom) for every counter, never
// derived from a process-wide seed, so a counter created after fork() cannot
// repeat the parent's. A counter inherited through fork() is retired: the
// child's first seal draws a fresh instance id (a pthread_atfork child handler
// updates the cached pid that next() compares, so the check costs no syscall).
// When the 32-bit counter runs out a fresh instance id is drawn and counting
// restarts; ENONCE only when the kernel gives no random bytes.
#pragma once

#include <atomic>
#include <cstdint>

#include "codec/crypto.hpp"

namespace cachekit::crypto {

class NonceCounter {
public:
    NonceCounter();
    NonceCounter(const NonceCounter &) = delete;
    NonceCounter &operator=(const NonceCounter &) = delete;

    // Thread-safe; never returns the same nonce twice in any process.
    Nonce next();

    // White-box hooks for tests (not in the public header): move the counter
    // near its end; read the current instance id.
    void set_counter_for_testing(uint64_t value) { counter_.store(value); }
    uint64_t instance_for_testing() const { return instance_.load(); }

    static constexpr uint64_t kCounterLimit = uint64_t(1) << 32;

private:
    void reseed(uint64_t seen_owner, uint64_t me);

    // The pid the instance id belongs to; kBusy set while a thread of that
    // pid draws a new one (for a fork or because the counter ran out).
    std::atomic<uint64_t> owner_;
    std::atomic<uint64_t> instance_;
    std::atomic<uint64_t> counter_{0};
};

}  // namespace cachekit::crypto
