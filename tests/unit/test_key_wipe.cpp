// White-box: key material is zeroed when it is destroyed (issue 12). A
// crypto::Key wipes itself, so every copy, temporary and container element
// does; an allocator that checks each block it frees proves it for a vector
// that grows (reallocation leaves old copies behind otherwise) and is freed.
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "codec/crypto.hpp"
#include "codec/keyring.hpp"
#include "util/buffer.hpp"

#include "../l1/cmocka_cpp.hpp"  // last: it defines a fail() macro

namespace {

using cachekit::crypto::Key;

size_t blocks_freed = 0, dirty_blocks_freed = 0;

// Counts freed blocks and those still holding a non-zero byte.
template <class T>
struct CheckingAllocator {
    using value_type = T;
    CheckingAllocator() = default;
    template <class U>
    CheckingAllocator(const CheckingAllocator<U> &) {}
    T *allocate(size_t n) {  // zeroed, so slots never constructed do not count as dirty
        void *p = ::operator new(n * sizeof(T));
        std::memset(p, 0, n * sizeof(T));
        return static_cast<T *>(p);
    }
    void deallocate(T *p, size_t n) {
        const auto *bytes = reinterpret_cast<const uint8_t *>(p);
        bool dirty = false;
        for (size_t i = 0; i < n * sizeof(T); ++i) dirty |= bytes[i] != 0;
        ++blocks_freed;
        dirty_blocks_freed += dirty;
        ::operator delete(p);
    }
    template <class U>
    bool operator==(const CheckingAllocator<U> &) const { return true; }
    template <class U>
    bool operator!=(const CheckingAllocator<U> &) const { return false; }
};

Key filled(uint8_t byte) {
    Key k;
    std::memset(k.data(), byte, k.size());
    return k;
}

void test_a_destroyed_key_is_zero(void **) {
    alignas(Key) unsigned char storage[sizeof(Key)];
    Key *k = new (storage) Key(filled(0xab));
    assert_int_equal(storage[0], 0xab);
    k->~Key();
    for (unsigned char b : storage) assert_int_equal(b, 0);
    // A copy, then an assignment over it: both wiped when destroyed.
    const Key original = filled(0x5a);
    Key *copy = new (storage) Key(original);
    *copy = filled(0x77);
    copy->~Key();
    for (unsigned char b : storage) assert_int_equal(b, 0);
}

void test_growing_and_freed_key_vectors_leave_no_key_bytes(void **) {
    blocks_freed = dirty_blocks_freed = 0;
    {
        std::vector<Key, CheckingAllocator<Key>> keys;
        for (int i = 0; i < 100; ++i) keys.push_back(filled(uint8_t(i + 1)));  // reallocates several times
        keys.erase(keys.begin());
        keys.pop_back();
    }
    assert_true(blocks_freed >= 5);
    assert_int_equal(dirty_blocks_freed, 0);
}

void test_keyring_round_trip_still_works(void **) {
    // The wiping type changes no behaviour: parse, derive, seal, open.
    auto ring = cachekit::crypto::Keyring::from_hex(std::string(64, 'a'), std::string(64, 'b'));
    assert_int_equal(ring->key_count(), 2);
    cachekit::Buffer ct, pt;
    ring->seal("t", "a", 1, "hello", 5, ct.get());
    assert_int_equal(ring->open("t", nullptr, "a", 1, ct.data(), ct.size(), pt.get()), 0);
    assert_true(pt.view() == "hello");
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_destroyed_key_is_zero),
        cmocka_unit_test(test_growing_and_freed_key_vectors_leave_no_key_bytes),
        cmocka_unit_test(test_keyring_round_trip_still_works),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
