#include "codec/nonce_counter.hpp"

#include <cerrno>
#include <thread>

#include <sodium.h>
#include <sys/random.h>

#include "util/error.hpp"
#include "util/fork_hooks.hpp"

namespace cachekit::crypto {
namespace {

constexpr uint64_t kBusy = uint64_t(1) << 63;

// 8 bytes straight from the kernel: no user-space generator whose state a
// fork could duplicate. false when the kernel has none to give.
bool kernel_random(uint64_t &out) {
    for (;;) {
        ssize_t n = getrandom(&out, sizeof out, 0);
        if (n == ssize_t(sizeof out)) return true;
        if (n >= 0 || errno == EINTR) continue;  // a signal (8 bytes never come short otherwise)
        if (errno != ENOSYS) return false;
        // Kernels before 3.17: libsodium reads /dev/urandom per call.
        ensure_sodium();
        randombytes_buf(&out, sizeof out);
        return true;
    }
}

[[noreturn]] void no_randomness() {
    fail(CACHEKIT_ENONCE, "no random bytes for a fresh nonce prefix (getrandom failed: " +
                              std::to_string(errno) + ")");
}

}  // namespace

NonceCounter::NonceCounter() {
    uint64_t fresh;
    if (!kernel_random(fresh)) no_randomness();
    instance_.store(fresh);
    owner_.store(uint64_t(fork_hooks::pid()));
}

void NonceCounter::reseed(uint64_t seen, uint64_t me) {
    if (seen == (me | kBusy)) {  // another thread of this process is drawing
        std::this_thread::yield();
        return;
    }
    // `seen` is this pid (the counter ran out) or another pid (inherited
    // through fork; a kBusy left by a thread the fork did not copy included).
    if (!owner_.compare_exchange_strong(seen, me | kBusy)) return;
    uint64_t fresh;
    if (!kernel_random(fresh)) {
        if (seen == me) counter_.store(kCounterLimit);  // the next caller tries again
        owner_.store(seen);
        no_randomness();
    }
    // The new id is visible before the counter restarts: a caller that read
    // the old id and draws a restarted count sees the change and retries.
    instance_.store(fresh);
    counter_.store(0);
    owner_.store(me);
}

Nonce NonceCounter::next() {
    const uint64_t me = uint64_t(fork_hooks::pid());  // one load: kept current by the atfork child handler
    for (;;) {
        const uint64_t owner = owner_.load();
        if (owner != me) {
            reseed(owner, me);
            continue;
        }
        const uint64_t instance = instance_.load();
        const uint64_t c = counter_.fetch_add(1);
        if (c >= kCounterLimit) {
            if (c == kCounterLimit) reseed(me, me);  // exactly one caller rolls to a new prefix
            else std::this_thread::yield();
            continue;
        }
        if (instance_.load() != instance) continue;  // c may belong to the new prefix
        Nonce n;
        for (int i = 0; i < 8; ++i) n[size_t(i)] = uint8_t(instance >> (56 - 8 * i));
        for (int i = 0; i < 4; ++i) n[size_t(8 + i)] = uint8_t(c >> (24 - 8 * i));
        return n;
    }
}

}  // namespace cachekit::crypto
