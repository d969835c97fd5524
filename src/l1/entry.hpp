// One cached entry: a fixed header followed in the same allocation by the key
// bytes and then the value bytes. It is linked into its shard's hash chain,
// LRU list and (when it has a deadline) the shard's expiry heap.
//
// Readers find entries without the shard lock (see epoch.hpp): they follow
// hnext and read the fields that never change after publication (hash,
// lengths, deadline, namespace, inserted_at, the bytes) plus the two atomics
// that steer promotion. Everything else is the shard lock's. Once unlinked,
// an entry waits on its shard's retire list (chained through `next`, stamped
// in `retire_epoch`) until no reader can still see it.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cachekit::l1 {

struct NsRecord;

// The shard's LRU lists. With LRU eviction every entry is in kWindow (a
// window of the whole budget); with TinyLFU admission (admission.hpp) new
// entries start in kWindow, and the main region is kProbation + kProtected.
enum Segment : uint8_t { kWindow = 0, kProbation = 1, kProtected = 2, kSegments = 3 };

struct Entry {
    // The first 64 bytes hold everything a lookup reads.
    std::atomic<Entry *> hnext{nullptr};  // hash chain; kept intact after unlink
    uint64_t deadline = 0;                // kNever: no expiry
    std::atomic<uint64_t> promoted_at{0};  // clock time of the last move to the LRU head
    NsRecord *ns = nullptr;               // lives as long as the cache
    uint64_t ns_gen = 0;                  // the namespace generation when inserted
    uint32_t hash = 0;                    // low 32 bits of the key hash (bucket index, tag)
    uint32_t key_len = 0;
    uint32_t value_len = 0;
    std::atomic<uint32_t> lru_seq{0};  // the shard's LRU sequence at the last move to the head
    // Shard lock only from here on.
    uint32_t heap_index = kNoHeap;
    uint8_t linked = 0;  // 1 while in the shard's index and LRU list
    // Which of the shard's LRU lists holds it (see Segment). Written under
    // the shard lock; lock-free hits read it to see a probation entry.
    std::atomic<uint8_t> segment{0};
    uint16_t spare = 0;
    Entry *next = nullptr;  // LRU: towards the tail; once retired: the next retired entry
    union {
        Entry *prev = nullptr;  // LRU: towards the head (most recent)
        uint64_t retire_epoch;  // once retired: the epoch stamp
    };
    uint64_t inserted_at = 0;  // clock time of the put (immutable, readers may read it)

    static constexpr uint32_t kNoHeap = UINT32_MAX;

    char *key_data() noexcept { return reinterpret_cast<char *>(this + 1); }
    const char *key_data() const noexcept { return reinterpret_cast<const char *>(this + 1); }
    std::string_view key() const noexcept { return {key_data(), key_len}; }
    std::string_view value() const noexcept { return {key_data() + key_len, value_len}; }
    size_t charge() const noexcept;
};

static_assert(sizeof(Entry) == 88, "entry_charge() below assumes an 88-byte header");

// The bytes an entry costs, counted honestly and for the worst case: the
// malloc chunk of header + key + value (glibc: 8-byte size field, 16-byte
// granularity, 32-byte minimum), its hash-bucket slot (8 bytes, 16 right
// after the table doubles) and its expiry-heap slot (a 16-byte node, 32 right
// after the vector doubles). With an 88-byte header that is 136-151 bytes of
// overhead per entry besides key and value.
inline size_t entry_charge(size_t key_len, size_t value_len) noexcept {
    size_t payload = sizeof(Entry) + key_len + value_len + 8;
    size_t chunk = (payload + 15) & ~size_t(15);
    if (chunk < 32) chunk = 32;
    return chunk + 16 + 32;
}

inline size_t Entry::charge() const noexcept { return entry_charge(key_len, value_len); }

}  // namespace cachekit::l1
