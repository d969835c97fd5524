// The fill-after-invalidate race, made deterministic with fill tickets: a
// fill begins (ticket), an invalidation lands, then the slow fill finishes.
// The late put must be dropped for invalidate(key), invalidate_namespace,
// clear() and a namespace that did not exist yet, while fills that begin after
// the invalidation (or target other keys/namespaces) are stored.
#include <future>
#include <string>
#include <thread>

#include "l1/l1_cache.hpp"
#include "util/buffer.hpp"

#include "cmocka_cpp.hpp"  // last: it defines a fail() macro

using namespace cachekit;
using namespace cachekit::l1;

namespace {

Options quiet() {
    Options o;
    o.sweep_interval_ms = 0;
    o.max_bytes = 4u << 20;
    return o;
}

bool has(L1Cache &c, std::string_view key, std::string_view want) {
    Buffer out;
    return c.get(key, out.get()) && out.view() == want;
}

void test_key_invalidation(void **) {
    L1Cache c(quiet());
    assert_int_equal(int(c.put("", "k", "old", 0)), int(PutResult::Stored));
    FillTicket t = c.begin_fill();           // slow fill starts, reads the source
    assert_true(c.invalidate("k"));          // the source changes: invalidate
    assert_int_equal(int(c.put("", "k", "stale", 0, t)), int(PutResult::Invalidated));
    Buffer out;
    assert_false(c.get("k", out.get()));    // the invalidation was not undone
    assert_int_equal(c.stats().dropped_fills, 1);
    // Invalidating an absent key also refuses older fills.
    FillTicket t2 = c.begin_fill();
    assert_false(c.invalidate("absent"));
    assert_int_equal(int(c.put("", "absent", "stale", 0, t2)), int(PutResult::Invalidated));
    // A fill that starts after the invalidation lands.
    FillTicket t3 = c.begin_fill();
    assert_int_equal(int(c.put("", "k", "fresh", 0, t3)), int(PutResult::Stored));
    assert_true(has(c, "k", "fresh"));
}

void test_other_keys_unaffected(void **) {
    L1Cache c(quiet());
    // Find a key in another shard and another tombstone slot than "k": a
    // ticket is refused only for the invalidated key (or a slot collision).
    std::string other;
    for (int i = 0;; ++i) {
        other = "other" + std::to_string(i);
        uint64_t a = L1Cache::hash_key("k"), b = L1Cache::hash_key(other);
        if (c.shard_of(other) != c.shard_of("k") && ((a >> 50) & 63) != ((b >> 50) & 63)) break;
    }
    FillTicket t = c.begin_fill();
    c.invalidate("k");
    assert_int_equal(int(c.put("", other, "v", 0, t)), int(PutResult::Stored));
    assert_true(has(c, other, "v"));
}

void test_namespace_invalidation(void **) {
    L1Cache c(quiet());
    c.put("users", "u1", "a", 0);
    c.put("orders", "o1", "b", 0);
    FillTicket t = c.begin_fill();
    c.invalidate_namespace("users");
    Buffer out;
    assert_false(c.get("u1", out.get()));
    assert_true(has(c, "o1", "b"));
    assert_int_equal(int(c.put("users", "u2", "late", 0, t)), int(PutResult::Invalidated));
    assert_int_equal(int(c.put("orders", "o2", "ok", 0, t)), int(PutResult::Stored));
    assert_false(c.get("u2", out.get()));
    assert_true(has(c, "o2", "ok"));
    // New fills in the invalidated namespace land.
    assert_int_equal(int(c.put("users", "u3", "new", 0, c.begin_fill())), int(PutResult::Stored));
    assert_true(has(c, "u3", "new"));
    // Unticketed puts always land.
    assert_int_equal(int(c.put("users", "u1", "again", 0)), int(PutResult::Stored));
    assert_true(has(c, "u1", "again"));
}

void test_unknown_namespace(void **) {
    L1Cache c(quiet());
    FillTicket t = c.begin_fill();
    c.invalidate_namespace("never-seen");  // no record yet
    assert_int_equal(int(c.put("never-seen", "k", "late", 0, t)), int(PutResult::Invalidated));
    Buffer out;
    assert_false(c.get("k", out.get()));
    assert_int_equal(int(c.put("never-seen", "k", "ok", 0, c.begin_fill())), int(PutResult::Stored));
    assert_true(has(c, "k", "ok"));
}

void test_clear(void **) {
    L1Cache c(quiet());
    c.put("", "a", "1", 0);
    c.put("n", "b", "2", 0);
    FillTicket t = c.begin_fill();
    c.clear();
    assert_int_equal(c.stats().entries, 0);
    assert_int_equal(c.stats().bytes, 0);
    assert_int_equal(int(c.put("", "a", "late", 0, t)), int(PutResult::Invalidated));
    assert_int_equal(int(c.put("zzz", "c", "late", 0, t)), int(PutResult::Invalidated));
    assert_int_equal(c.stats().entries, 0);
    assert_int_equal(int(c.put("", "a", "new", 0, c.begin_fill())), int(PutResult::Stored));
    assert_true(has(c, "a", "new"));
}

// A slow writer on another thread, interleaved deterministically with
// promises: begin fill -> (main) invalidate -> finish fill.
void test_threads_interleaved(void **) {
    L1Cache c(quiet());
    c.put("ns", "k", "v0", 0);
    std::promise<void> began, invalidated;
    PutResult late = PutResult::Stored;
    std::thread writer([&] {
        FillTicket t = c.begin_fill();
        began.set_value();
        invalidated.get_future().wait();
        late = c.put("ns", "k", "v-stale", 0, t);  // cmocka asserts only on the main thread
    });
    began.get_future().wait();
    c.invalidate("k");
    invalidated.set_value();
    writer.join();
    assert_int_equal(int(late), int(PutResult::Invalidated));
    Buffer out;
    assert_false(c.get("k", out.get()));
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_key_invalidation),
        cmocka_unit_test(test_other_keys_unaffected),
        cmocka_unit_test(test_namespace_invalidation),
        cmocka_unit_test(test_unknown_namespace),
        cmocka_unit_test(test_clear),
        cmocka_unit_test(test_threads_interleaved),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
