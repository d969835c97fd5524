// Bounded namespace records (issue 12): a capped table whose further
// namespaces share the overflow record, records dropped once no entry or pin
// refers to them, and invalidation that stays exact across both: an entry of
// a dropped or overflowing namespace never becomes visible after that
// namespace's invalidation, and a fill ticket taken before it is refused
// even by a record created afterwards. A randomized model check, and
// concurrent readers while records come and go (for the sanitizers).
#include <atomic>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "l1/l1_cache.hpp"
#include "util/buffer.hpp"

#include "cmocka_cpp.hpp"  // last: it defines a fail() macro

using namespace cachekit;
using namespace cachekit::l1;

namespace {

Options capped(size_t max_namespaces) {
    Options o;
    o.sweep_interval_ms = 0;
    o.max_bytes = 16u << 20;
    o.max_namespaces = max_namespaces;
    return o;
}

std::string ns_of(const L1Cache &c, const std::string &key) {
    EntryInfo info;
    if (!const_cast<L1Cache &>(c).get(key, nullptr, &info)) return "<miss>";
    return info.ns;
}

void test_records_are_capped(void **) {
    L1Cache c(capped(64));
    for (int i = 0; i < 20000; ++i) {
        std::string n = "ns" + std::to_string(i);
        assert_int_equal(int(c.put(n, "k" + std::to_string(i), n, 0)), int(PutResult::Stored));
    }
    Stats st = c.stats();
    assert_true(st.namespaces <= 64);
    assert_int_equal(st.entries, 20000);
    // Every entry still answers, with its value; the late ones under the overflow record.
    Buffer out;
    for (int i = 0; i < 20000; ++i) {
        assert_true(c.get("k" + std::to_string(i), out.get()));
        assert_true(out.view() == "ns" + std::to_string(i));
    }
    assert_true(ns_of(c, "k0") == "ns0");
    assert_true(ns_of(c, "k19999") == std::string(kOverflowNamespace));
    assert_int_equal(c.stats().hits, 20000 + 2);
}

void test_clear_drops_records(void **) {
    L1Cache c(capped(4096));
    for (int i = 0; i < 1000; ++i) c.put("ns" + std::to_string(i), "k" + std::to_string(i), "v", 0);
    assert_int_equal(c.stats().namespaces, 1001);  // and the default namespace
    for (int i = 0; i < 1000; ++i) assert_true(c.get("k" + std::to_string(i), nullptr));
    c.clear();
    Stats st = c.stats();
    assert_int_equal(st.namespaces, 1);
    assert_int_equal(st.entries, 0);
    assert_int_equal(st.hits, 1000);  // dropped records' hits stay counted
}

void test_sweep_drops_unused_records(void **) {
    L1Cache c(capped(4096));
    c.put("a", "k1", "v", 0);
    c.put("b", "k2", "v", 0);
    assert_true(c.invalidate("k1"));
    c.sweep();
    assert_int_equal(c.stats().namespaces, 2);  // "" and "b"
    assert_true(c.get("k2", nullptr));
}

// A ticket taken before a namespace's invalidation is refused by a record
// created after the old one was dropped.
void test_ticket_survives_dropped_record(void **) {
    L1Cache c(capped(4096));
    FillTicket before = c.begin_fill();
    c.put("a", "k1", "v1", 0);
    c.invalidate_namespace("a");
    c.sweep();  // removes k1, frees it, drops the record of "a"
    assert_int_equal(c.stats().namespaces, 1);
    assert_false(c.get("k1", nullptr));
    assert_int_equal(int(c.put("a", "k1", "late", 0, before)), int(PutResult::Invalidated));
    assert_false(c.get("k1", nullptr));
    FillTicket after = c.begin_fill();
    assert_int_equal(int(c.put("a", "k1", "v2", 0, after)), int(PutResult::Stored));
    assert_true(ns_of(c, "k1") == "a");
}

// Entries in the overflow record die with any namespace invalidation: the
// invalidated name's own (it may be among them) and, collaterally, others.
void test_overflow_invalidation(void **) {
    L1Cache c(capped(4));  // "" + three named records
    c.put("n1", "a1", "v", 0);
    c.put("n2", "a2", "v", 0);
    c.put("n3", "a3", "v", 0);
    c.put("x", "x1", "v", 0);
    c.put("y", "y1", "v", 0);
    assert_true(ns_of(c, "x1") == std::string(kOverflowNamespace));
    FillTicket before = c.begin_fill();
    c.invalidate_namespace("x");
    assert_false(c.get("x1", nullptr));
    assert_false(c.get("y1", nullptr));  // collateral: a miss, never a stale hit
    assert_true(c.get("a1", nullptr));
    assert_int_equal(int(c.put("x", "x1", "late", 0, before)), int(PutResult::Invalidated));

    // "z" overflows, then gets a record of its own once one is free: its
    // invalidation must still end the entry in the overflow record.
    c.put("z", "z1", "old", 0);
    assert_true(ns_of(c, "z1") == std::string(kOverflowNamespace));
    assert_true(c.invalidate("a1"));
    c.sweep();  // "n1" dropped
    c.put("z", "z2", "new", 0);
    assert_true(ns_of(c, "z2") == "z");
    c.invalidate_namespace("z");
    assert_false(c.get("z1", nullptr));
    assert_false(c.get("z2", nullptr));
}

void test_pins(void **) {
    L1Cache c(capped(3));  // "" + two named records
    const NsRecord *p = c.pin_namespace("p");
    assert_non_null(p);
    c.put("q", "k", "v", 0);
    assert_null(c.pin_namespace("r"));  // full, and "r" has no record
    c.sweep();
    assert_int_equal(c.stats().namespaces, 3);  // the pin keeps "p"
    c.put("p", "kp", "v", 0);
    assert_true(c.get("kp", nullptr));
    assert_true(c.get("kp", nullptr));
    assert_int_equal(p->hits.total(), 2);
    L1Cache::unpin_namespace(p);
    assert_true(c.invalidate("kp"));
    c.sweep();
    assert_int_equal(c.stats().namespaces, 2);
    assert_int_equal(c.stats().hits, 2);
}

// Random operations over more namespaces than records, against a model:
// a hit must be a live value of the model (the L1 may miss more: evicted
// never, as the budget is ample, but overflow entries die collaterally).
void test_model(void **) {
    L1Cache c(capped(6));
    std::mt19937 rng(12);
    struct Live {
        std::string ns, value;
    };
    std::map<std::string, Live> live;  // key -> what a hit may return
    std::vector<FillTicket> tickets;
    std::map<std::string, FillTicket> ns_invalidated;  // epoch ticket right after the invalidation
    FillTicket cleared = 0;
    Buffer out;
    for (int step = 0; step < 60000; ++step) {
        std::string ns = "n" + std::to_string(rng() % 12);
        std::string key = "k" + std::to_string(rng() % 64);
        std::string value = "v" + std::to_string(step);
        switch (rng() % 10) {
        case 0: case 1: case 2: {
            c.put(ns, key, value, 0);
            live[key] = {ns, value};
            break;
        }
        case 3: {  // a fill with an older ticket: stored only if nothing it depends on moved since
            FillTicket t = tickets.empty() ? c.begin_fill() : tickets[rng() % tickets.size()];
            PutResult r = c.put(ns, key, value, 0, t);
            auto inv = ns_invalidated.find(ns);
            bool must_refuse = cleared > t || (inv != ns_invalidated.end() && inv->second > t);
            if (must_refuse) assert_int_equal(int(r), int(PutResult::Invalidated));
            if (r == PutResult::Stored) live[key] = {ns, value};  // refused: the old copy is left as it was
            break;
        }
        case 4: tickets.push_back(c.begin_fill()); if (tickets.size() > 16) tickets.erase(tickets.begin()); break;
        case 5: {
            c.invalidate_namespace(ns);
            ns_invalidated[ns] = c.begin_fill();
            for (auto it = live.begin(); it != live.end();) it = it->second.ns == ns ? live.erase(it) : std::next(it);
            break;
        }
        case 6: c.invalidate(key); live.erase(key); break;
        case 7: if (rng() % 50 == 0) { c.clear(); cleared = c.begin_fill(); live.clear(); } else c.sweep(); break;
        default: {
            if (c.get(key, out.get())) {
                auto it = live.find(key);
                assert_true(it != live.end());
                assert_true(out.view() == it->second.value);
            }
        }
        }
        assert_true(c.stats().namespaces <= 6);
    }
}

// Readers on the lock-free path while records are dropped and re-created
// under them (ASan/TSan find any use after free).
void test_concurrent_drops(void **) {
    Options o = capped(8);
    o.sweep_interval_ms = 1;
    L1Cache c(o);
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t) {
        threads.emplace_back([&c, &stop, t] {
            std::mt19937 rng(t);
            Buffer out;
            EntryInfo info;
            while (!stop.load()) {
                std::string ns = "n" + std::to_string(rng() % 32);
                std::string key = "k" + std::to_string(rng() % 256);
                switch (rng() % 8) {
                case 0: case 1: c.put(ns, key, "v", 0); break;
                case 2: c.invalidate_namespace(ns); break;
                case 3: c.invalidate(key); break;
                default: c.get(key, out.get(), &info); break;
                }
            }
        });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    stop = true;
    for (auto &t : threads) t.join();
    c.clear();
    assert_true(c.stats().namespaces <= 8);
}

}  // namespace

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_records_are_capped),
        cmocka_unit_test(test_clear_drops_records),
        cmocka_unit_test(test_sweep_drops_unused_records),
        cmocka_unit_test(test_ticket_survives_dropped_record),
        cmocka_unit_test(test_overflow_invalidation),
        cmocka_unit_test(test_pins),
        cmocka_unit_test(test_model),
        cmocka_unit_test(test_concurrent_drops),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
