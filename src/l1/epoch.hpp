// Epoch-based reclamation for the L1's lock-free reads. A reader pins the
// current global epoch in its own thread slot for the length of one lookup;
// a writer that unlinks an entry retires it stamped with the epoch it read
// after the unlink, and frees it only once the epoch has moved two steps past
// that stamp. The epoch only moves when every pinned reader has seen the
// current one, so no reader can still hold a pointer to a freed entry.
//
// One domain serves the whole process (every L1Cache), so a thread needs one
// slot however many caches it reads. Slots are reused after their thread
// exits and never freed. Every access to the epoch and the slots is
// sequentially consistent: that is what makes "stamped after the unlink" and
// "pinned before the first pointer load" a proof rather than a hope (and on
// x86 seq_cst loads cost what plain loads do).
#pragma once

#include <atomic>
#include <cstdint>

namespace cachekit::l1 {

struct alignas(64) EpochSlot {
    std::atomic<uint64_t> pinned{0};  // 0: not reading; else the epoch pinned
    std::atomic<bool> in_use{false};
    unsigned depth = 0;     // nested pins, owner thread only
    EpochSlot *next = nullptr;  // registry list, immutable once published
};

class EpochDomain {
public:
    static EpochDomain &global() noexcept;  // defined below: inlined on the hot path

    // The calling thread's slot, registered on first use (which allocates
    // once per thread and may throw std::bad_alloc).
    static EpochSlot *this_thread_slot() {
        EpochSlot *s = tls_slot_;
        return s != nullptr ? s : register_thread();
    }

    void pin(EpochSlot *s) noexcept {
        if (s->depth++ != 0) return;
        s->pinned.exchange(epoch_.load(std::memory_order_seq_cst), std::memory_order_seq_cst);
    }
    // A release store is enough to leave: try_advance() seeing 0 then
    // also sees every read the reader made before it.
    void unpin(EpochSlot *s) noexcept {
        if (--s->depth == 0) s->pinned.store(0, std::memory_order_release);
    }

    // The epoch to stamp a retired object with; call after its unlink.
    uint64_t retire_stamp() const noexcept { return epoch_.load(std::memory_order_seq_cst); }
    uint64_t current() const noexcept { return epoch_.load(std::memory_order_seq_cst); }
    // Objects stamped with `stamp` may be freed once this holds.
    bool reclaimable(uint64_t stamp) const noexcept { return stamp + 2 <= current(); }

    // Move the epoch one step if every pinned reader has seen the current
    // one. Returns the epoch after the attempt.
    uint64_t try_advance() noexcept;

    // Joins the fork registry once per process (its child forgets the other
    // threads' slots). Called by every L1Cache's constructor, before any
    // thread can read that cache: joining from a reader's first lookup could
    // wait on the registry's lock while another thread forks, and the child
    // would inherit a static guard still "in progress" and hang on it.
    static void join_fork_registry();

private:
    static EpochSlot *register_thread();
    static void release_thread_slot(EpochSlot *s) noexcept;
    static void forget_other_threads() noexcept;
    friend struct EpochSlotOwner;
    friend struct EpochForkHandler;

    // initial-exec: one pointer of static TLS, read without a call into the
    // dynamic linker on every lookup.
    [[gnu::tls_model("initial-exec")]] static thread_local EpochSlot *tls_slot_;

    alignas(64) std::atomic<uint64_t> epoch_{1};  // its own line: read by every pin
    alignas(64) std::atomic<EpochSlot *> slots_{nullptr};
};

// One domain for the process; constant-initialised, so no guard on access.
inline constinit EpochDomain global_epoch_domain;
inline EpochDomain &EpochDomain::global() noexcept { return global_epoch_domain; }

// Pins the calling thread for the guard's lifetime.
class EpochGuard {
public:
    EpochGuard() : slot_(EpochDomain::this_thread_slot()) { EpochDomain::global().pin(slot_); }
    ~EpochGuard() { EpochDomain::global().unpin(slot_); }
    EpochGuard(const EpochGuard &) = delete;
    EpochGuard &operator=(const EpochGuard &) = delete;

private:
    EpochSlot *slot_;
};

}  // namespace cachekit::l1
