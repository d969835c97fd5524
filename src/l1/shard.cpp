#include "l1/shard.hpp"

#include <cstring>

namespace cachekit::l1 {

namespace {
constexpr size_t kInitialBuckets = 16;
}

Shard::Shard() : buckets(new Entry *[kInitialBuckets]()), mask(kInitialBuckets - 1) {}

Shard::~Shard() = default;  // the owner frees the entries (see L1Cache)

Entry *Shard::find(uint64_t hash, std::string_view key) const noexcept {
    for (Entry *e = buckets[hash & mask]; e != nullptr; e = e->hnext) {
        if (e->hash == hash && e->key_len == key.size() &&
            std::memcmp(e->key_data(), key.data(), key.size()) == 0)
            return e;
    }
    return nullptr;
}

void Shard::grow() {
    size_t n = (mask + 1) * 2;
    std::unique_ptr<Entry *[]> fresh(new Entry *[n]());
    size_t m = n - 1;
    for (size_t i = 0; i <= mask; ++i) {
        Entry *e = buckets[i];
        while (e != nullptr) {
            Entry *nx = e->hnext;
            e->hnext = fresh[e->hash & m];
            fresh[e->hash & m] = e;
            e = nx;
        }
    }
    buckets = std::move(fresh);
    mask = m;
    ++rehashes;
}

void Shard::prepare_insert() {
    if (count + 1 > mask + 1) grow();
    if (heap.size() == heap.capacity()) heap.reserve(heap.empty() ? 16 : heap.size() * 2);
}

void Shard::link(Entry *e, uint64_t now) noexcept {
    Entry *&slot = buckets[e->hash & mask];
    e->hnext = slot;
    slot = e;
    e->prev = nullptr;
    e->next = head;
    if (head) head->prev = e;
    head = e;
    if (!tail) tail = e;
    e->promoted_at = now;
    if (e->deadline != UINT64_MAX) {
        heap.push_back(HeapNode{e->deadline, e});  // capacity reserved by prepare_insert
        heap_up(heap.size() - 1);
    } else {
        e->heap_index = Entry::kNoHeap;
    }
    ++count;
}

void Shard::unlink(Entry *e) noexcept {
    Entry **pp = &buckets[e->hash & mask];
    while (*pp != e) pp = &(*pp)->hnext;
    *pp = e->hnext;
    e->hnext = nullptr;
    if (e->prev) e->prev->next = e->next; else head = e->next;
    if (e->next) e->next->prev = e->prev; else tail = e->prev;
    e->prev = e->next = nullptr;
    if (e->heap_index != Entry::kNoHeap) heap_remove(e);
    --count;
}

void Shard::promote(Entry *e, uint64_t now) noexcept {
    e->promoted_at = now;
    if (e == head) return;
    e->prev->next = e->next;
    if (e->next) e->next->prev = e->prev; else tail = e->prev;
    e->prev = nullptr;
    e->next = head;
    head->prev = e;
    head = e;
}

Entry *Shard::detach_all() noexcept {
    Entry *list = nullptr;
    for (Entry *e = head; e != nullptr;) {
        Entry *nx = e->next;
        e->hnext = list;
        list = e;
        e = nx;
    }
    std::memset(buckets.get(), 0, sizeof(Entry *) * (mask + 1));
    head = tail = nullptr;
    heap.clear();
    count = 0;
    return list;
}

void Shard::heap_up(size_t i) noexcept {
    HeapNode n = heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 4;
        if (heap[parent].deadline <= n.deadline) break;
        heap_place(i, heap[parent]);
        i = parent;
    }
    heap_place(i, n);
}

void Shard::heap_down(size_t i) noexcept {
    HeapNode n = heap[i];
    size_t size = heap.size();
    for (;;) {
        size_t first = 4 * i + 1;
        if (first >= size) break;
        size_t best = first;
        size_t last = first + 4 < size ? first + 4 : size;
        for (size_t c = first + 1; c < last; ++c)
            if (heap[c].deadline < heap[best].deadline) best = c;
        if (heap[best].deadline >= n.deadline) break;
        heap_place(i, heap[best]);
        i = best;
    }
    heap_place(i, n);
}

void Shard::heap_remove(Entry *e) noexcept {
    size_t i = e->heap_index;
    HeapNode last = heap.back();
    heap.pop_back();
    e->heap_index = Entry::kNoHeap;
    if (last.entry == e) return;
    heap_place(i, last);
    if (i > 0 && last.deadline < heap[(i - 1) / 4].deadline) heap_up(i); else heap_down(i);
}

}  // namespace cachekit::l1
