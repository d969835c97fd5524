// One cached entry: a fixed header followed in the same allocation by the key
// bytes and then the value bytes. It is linked into its shard's hash chain,
// LRU list and (when it has a deadline) the shard's expiry heap. Every field
// is guarded by the shard's mutex, except that the entry is immutable after
// insertion apart from its links, heap slot and promoted_at.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cachekit::l1 {

struct NsRecord;

struct Entry {
    Entry *hnext = nullptr;  // hash chain (also the free list once unlinked)
    Entry *prev = nullptr;   // LRU: towards the head (most recent)
    Entry *next = nullptr;   // LRU: towards the tail (least recent)
    uint64_t hash = 0;
    uint64_t deadline = 0;     // kNever: no expiry
    uint64_t inserted_at = 0;  // clock time of the put
    uint64_t promoted_at = 0;  // clock time of the last move to the LRU head
    uint64_t seq = 0;          // per-shard insertion sequence (ties in the heap)
    uint64_t ns_gen = 0;       // the namespace generation when inserted
    NsRecord *ns = nullptr;    // lives as long as the cache
    uint32_t heap_index = kNoHeap;
    uint32_t key_len = 0;
    size_t value_len = 0;
    size_t charge = 0;  // bytes counted against the budget

    static constexpr uint32_t kNoHeap = UINT32_MAX;

    char *key_data() noexcept { return reinterpret_cast<char *>(this + 1); }
    const char *key_data() const noexcept { return reinterpret_cast<const char *>(this + 1); }
    std::string_view key() const noexcept { return {key_data(), key_len}; }
    std::string_view value() const noexcept { return {key_data() + key_len, value_len}; }
};

// The bytes an entry costs, counted honestly: the malloc chunk of header +
// key + value (glibc: 8-byte size field, 16-byte granularity, 32-byte
// minimum), one hash-bucket slot (8 bytes at load factor 1, up to 16 after a
// doubling) and one expiry-heap slot (the same, 16 bytes budgeted).
inline size_t entry_charge(size_t key_len, size_t value_len) noexcept {
    size_t payload = sizeof(Entry) + key_len + value_len + 8;
    size_t chunk = (payload + 15) & ~size_t(15);
    if (chunk < 32) chunk = 32;
    return chunk + 16 + 16;
}

}  // namespace cachekit::l1
