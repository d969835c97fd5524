#include "l1/epoch.hpp"

#include <new>

#include "util/fork_hooks.hpp"

namespace cachekit::l1 {

thread_local EpochSlot *EpochDomain::tls_slot_ = nullptr;

// Gives the slot back when its thread exits. Kept apart from tls_slot_ so the
// hot path reads a trivial thread_local (no initialisation guard).
struct EpochSlotOwner {
    EpochSlot *slot = nullptr;
    ~EpochSlotOwner() {
        if (slot != nullptr) EpochDomain::release_thread_slot(slot);
    }
};

namespace {
thread_local EpochSlotOwner slot_owner;
}

// In a child after fork() only the forking thread exists: slots the other
// threads held (perhaps mid-lookup) would pin the epoch forever and no
// retired entry would ever be freed again. Hand them back.
void EpochDomain::forget_other_threads() noexcept {
    EpochDomain &d = global();
    for (EpochSlot *s = d.slots_.load(std::memory_order_seq_cst); s != nullptr; s = s->next) {
        if (s == tls_slot_) continue;
        s->pinned.store(0, std::memory_order_seq_cst);
        s->in_use.store(false, std::memory_order_seq_cst);
    }
}

// The domain's part in fork(): nothing to lock (slots are atomics), only the
// child's cleanup.
struct EpochForkHandler final : fork_hooks::Participant {
    void before_fork() noexcept override {}
    void after_fork_parent() noexcept override {}
    void after_fork_child() noexcept override { EpochDomain::forget_other_threads(); }
};

void EpochDomain::join_fork_registry() {
    static const bool joined = [] {
        fork_hooks::join(new EpochForkHandler);  // never destroyed, like the domain
        return true;
    }();
    (void)joined;
}

EpochSlot *EpochDomain::register_thread() {
    EpochDomain &d = global();
    EpochSlot *slot = nullptr;
    // Reuse the slot of a thread that has exited.
    for (EpochSlot *s = d.slots_.load(std::memory_order_seq_cst); s != nullptr; s = s->next) {
        bool idle = false;
        if (s->in_use.compare_exchange_strong(idle, true, std::memory_order_seq_cst)) {
            slot = s;
            break;
        }
    }
    if (slot == nullptr) {
        slot = new EpochSlot;  // may throw: nothing registered yet
        slot->in_use.store(true, std::memory_order_relaxed);
        EpochSlot *head = d.slots_.load(std::memory_order_seq_cst);
        do {
            slot->next = head;
        } while (!d.slots_.compare_exchange_weak(head, slot, std::memory_order_seq_cst));
    }
    slot->depth = 0;
    slot_owner.slot = slot;
    tls_slot_ = slot;
    return slot;
}

void EpochDomain::release_thread_slot(EpochSlot *s) noexcept {
    tls_slot_ = nullptr;
    s->pinned.store(0, std::memory_order_seq_cst);
    s->in_use.store(false, std::memory_order_seq_cst);
}

uint64_t EpochDomain::try_advance() noexcept {
    uint64_t e = epoch_.load(std::memory_order_seq_cst);
    for (EpochSlot *s = slots_.load(std::memory_order_seq_cst); s != nullptr; s = s->next) {
        uint64_t p = s->pinned.load(std::memory_order_seq_cst);
        if (p != 0 && p != e) return e;  // a reader still works in an older epoch
    }
    if (epoch_.compare_exchange_strong(e, e + 1, std::memory_order_seq_cst)) return e + 1;
    return e;  // someone else moved it: e holds the newer value
}

}  // namespace cachekit::l1
