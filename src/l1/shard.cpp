#include "l1/shard.hpp"

#include <cstdlib>
#include <cstring>
#include <new>

#include "l1/epoch.hpp"

namespace cachekit::l1 {

namespace {
constexpr size_t kInitialBuckets = 16;
constexpr auto kSc = std::memory_order_seq_cst;
constexpr auto kRelaxed = std::memory_order_relaxed;
}  // namespace

BucketTable *BucketTable::create(size_t buckets) {
    void *mem = std::malloc(sizeof(BucketTable) + buckets * sizeof(std::atomic<Entry *>));
    if (mem == nullptr) throw std::bad_alloc();
    auto *t = new (mem) BucketTable{buckets - 1};
    for (size_t i = 0; i < buckets; ++i) new (&t->slots()[i]) std::atomic<Entry *>(nullptr);
    return t;
}

void BucketTable::destroy(BucketTable *t) noexcept { std::free(t); }

Shard::Shard() : table(BucketTable::create(kInitialBuckets)) {}

Shard::~Shard() {
    // The owner has freed the entries (see L1Cache); the tables are ours.
    BucketTable::destroy(table.load(kRelaxed));
    for (RetiredTable &r : retired_tables) BucketTable::destroy(r.table);
}

Entry *Shard::find(uint32_t hash, std::string_view key) const noexcept {
    BucketTable *t = table.load(kRelaxed);
    for (Entry *e = t->slot(hash).load(kRelaxed); e != nullptr; e = e->hnext.load(kRelaxed)) {
        if (e->hash == hash && e->key_len == key.size() && std::memcmp(e->key_data(), key.data(), key.size()) == 0)
            return e;
    }
    return nullptr;
}

Entry *Shard::find_unlocked(uint32_t hash, std::string_view key) const noexcept {
    BucketTable *t = table.load(kSc);
    Entry *e = t->slot(hash).load(kSc);
    for (unsigned steps = 0; e != nullptr && steps < kMaxUnlockedSteps; e = e->hnext.load(kSc), ++steps) {
        if (e->hash == hash && e->key_len == key.size() && std::memcmp(e->key_data(), key.data(), key.size()) == 0)
            return e;
    }
    return nullptr;
}

void Shard::grow() {
    BucketTable *old = table.load(kRelaxed);
    size_t n = (old->mask + 1) * 2;
    retired_tables.reserve(retired_tables.size() + 1);  // may throw: nothing changed yet
    BucketTable *fresh = BucketTable::create(n);
    // Entries move one at a time; a reader walking the old table may be led
    // into the new one and miss, which it detects (find_unlocked) and retries.
    for (size_t i = 0; i <= old->mask; ++i) {
        Entry *e = old->slots()[i].load(kRelaxed);
        while (e != nullptr) {
            Entry *nx = e->hnext.load(kRelaxed);
            std::atomic<Entry *> &dst = fresh->slot(e->hash);
            e->hnext.store(dst.load(kRelaxed), kSc);
            dst.store(e, kRelaxed);  // not yet published
            e = nx;
        }
    }
    table.store(fresh, kSc);
    retired_tables.push_back(RetiredTable{EpochDomain::global().retire_stamp(), old});
    ++rehashes;
}

void Shard::prepare_insert() {
    if (entries() + 1 > bucket_count()) grow();
    if (heap.size() == heap.capacity()) heap.reserve(heap.empty() ? 16 : heap.size() * 2);
}

void LruList::push_front(Entry *e) noexcept {
    e->prev = nullptr;
    e->next = head;
    if (head) head->prev = e;
    head = e;
    if (!tail) tail = e;
    bytes += e->charge();
}

void LruList::remove(Entry *e) noexcept {
    if (e->prev) e->prev->next = e->next; else head = e->next;
    if (e->next) e->next->prev = e->prev; else tail = e->prev;
    e->prev = e->next = nullptr;
    bytes -= e->charge();
}

void LruList::move_to_front(Entry *e) noexcept {
    if (e == head) return;
    e->prev->next = e->next;
    if (e->next) e->next->prev = e->prev; else tail = e->prev;
    e->prev = nullptr;
    e->next = head;
    head->prev = e;
    head = e;
}

void Shard::link(Entry *e, uint64_t now, Segment seg) noexcept {
    std::atomic<Entry *> &slot = table.load(kRelaxed)->slot(e->hash);
    e->hnext.store(slot.load(kRelaxed), kRelaxed);
    e->segment.store(seg, kRelaxed);
    lists[seg].push_front(e);
    stamp_promotion(e, now);
    if (e->deadline != UINT64_MAX) {
        heap.push_back(HeapNode{e->deadline, e});  // capacity reserved by prepare_insert
        heap_up(heap.size() - 1);
    } else {
        e->heap_index = Entry::kNoHeap;
    }
    e->linked = 1;
    set_count(entries() + 1);
    slot.store(e, kSc);  // publish: every field above is set
}

void Shard::unlink(Entry *e) noexcept {
    std::atomic<Entry *> *pp = &table.load(kRelaxed)->slot(e->hash);
    while (pp->load(kRelaxed) != e) pp = &pp->load(kRelaxed)->hnext;
    pp->store(e->hnext.load(kRelaxed), kSc);  // e keeps its hnext for readers on it
    lists[e->segment.load(kRelaxed)].remove(e);
    if (e->heap_index != Entry::kNoHeap) heap_remove(e);
    e->linked = 0;
    set_count(entries() - 1);
}

void Shard::retire(Entry *e, uint64_t epoch) noexcept {
    e->next = nullptr;
    e->retire_epoch = epoch;
    if (retired_tail) retired_tail->next = e; else retired_head = e;
    retired_tail = e;
}

Entry *Shard::take_reclaimable(uint64_t reclaim_below) noexcept {
    Entry *first = retired_head, *last = nullptr;
    for (Entry *e = retired_head; e != nullptr && e->retire_epoch < reclaim_below; e = e->next) last = e;
    if (last == nullptr) first = nullptr;
    else {
        retired_head = last->next;
        if (retired_head == nullptr) retired_tail = nullptr;
        last->next = nullptr;
    }
    size_t kept = 0;
    for (RetiredTable &r : retired_tables) {
        if (r.epoch < reclaim_below) BucketTable::destroy(r.table);
        else retired_tables[kept++] = r;
    }
    retired_tables.resize(kept);
    return first;
}

Entry *Shard::take_all_retired() noexcept {
    Entry *all = retired_head;
    retired_head = retired_tail = nullptr;
    return all;
}

void Shard::stamp_promotion(Entry *e, uint64_t now) noexcept {
    e->promoted_at.store(now, kRelaxed);
    uint32_t seq = lru_seq.load(kRelaxed) + 1;
    lru_seq.store(seq, kRelaxed);
    e->lru_seq.store(seq, kRelaxed);
}

void Shard::promote(Entry *e, uint64_t now) noexcept {
    stamp_promotion(e, now);
    lists[e->segment.load(kRelaxed)].move_to_front(e);
}

void Shard::move_to(Entry *e, Segment seg, uint64_t now) noexcept {
    stamp_promotion(e, now);
    lists[e->segment.load(kRelaxed)].remove(e);
    e->segment.store(seg, kRelaxed);
    lists[seg].push_front(e);
}

Entry *Shard::detach_all() noexcept {
    BucketTable *t = table.load(kRelaxed);
    for (size_t i = 0; i <= t->mask; ++i) t->slots()[i].store(nullptr, kSc);
    // One chain through next: each list head to tail, the lists one after another.
    Entry *list = nullptr, *last = nullptr;
    for (LruList &l : lists) {
        for (Entry *e = l.head; e != nullptr; e = e->next) {
            e->heap_index = Entry::kNoHeap;
            e->linked = 0;
        }
        if (l.head == nullptr) continue;
        if (last) last->next = l.head; else list = l.head;
        last = l.tail;
        l = LruList{};
    }
    heap.clear();
    set_count(0);
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
