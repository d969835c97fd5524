// A cache's metrics report hits another layer counts itself through
// metrics::EngineHitSource alone (src/metrics/engine_hits.hpp), here a fake
// source with no L1 behind it: a series reports the hits its pinned counter
// gained since the pin; the rest of the source's total (hits before a pin,
// namespaces never asked for, namespaces the source keeps no counter for,
// folded series) counts in "__other__"; the sum is the source's total plus
// the series' own counts; every pin is given back, on a fold and when the
// metrics go.
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "metrics/cache_metrics.hpp"
#include "metrics/engine_hits.hpp"
#include "cache_test_util.hpp"

namespace {

using cachekit::metrics::CacheMetrics;
using cachekit::metrics::EngineHitSource;
using cachekit::metrics::EngineHitsPin;
using cachekit::metrics::SeriesCounts;
using cachekit::metrics::StripedCounter;

class FakeSource final : public EngineHitSource {
public:
    // A counter of its own for `ns` (others count in `elsewhere`).
    StripedCounter &counter(const std::string &ns) { return counters_[ns]; }
    StripedCounter elsewhere;
    int pins = 0;
    int bad_unpins = 0;

    EngineHitsPin pin(std::string_view ns) override {
        auto it = counters_.find(ns);
        if (it == counters_.end()) return {};
        ++pins;
        return {&it->second, &it->second};
    }
    void unpin(const EngineHitsPin &pin) noexcept override {
        if (pin.token == nullptr || pin.token != static_cast<const void *>(pin.hits)) ++bad_unpins;
        --pins;
    }
    uint64_t total_hits() const override {
        uint64_t sum = elsewhere.total();
        for (const auto &[name, c] : counters_) sum += c.total();
        return sum;
    }

private:
    std::map<std::string, StripedCounter, std::less<>> counters_;
};

uint64_t l1_hits_of(const CacheMetrics &m, const std::string &ns) {
    for (const SeriesCounts &c : m.snapshot())
        if (c.ns == ns) return c.l1_hits;
    fail_msg("no series \"%s\"", ns.c_str());
    return 0;
}

void test_a_series_reads_its_pinned_counter(void **) {
    FakeSource source;
    source.counter("a").add(3);  // before the series is made: not a's
    source.counter("b");
    {
        CacheMetrics m;
        m.count_engine_hits(source);
        m.of("a").l1_hits.add(1);  // counted by the cache itself
        assert_int_equal(source.pins, 1);
        source.counter("a").add(5);
        source.counter("b").add(2);  // no series asked for "b"
        source.elsewhere.add(4);
        assert_int_equal(l1_hits_of(m, "a"), 6);
        assert_int_equal(l1_hits_of(m, "__other__"), 3 + 2 + 4);
        assert_int_equal(m.totals(nullptr).l1_hits, source.total_hits() + 1);
        assert_int_equal(m.totals("a").l1_hits, 6);
        // A second of() finds the series: no second pin.
        m.of("a");
        assert_int_equal(source.pins, 1);
    }
    assert_int_equal(source.pins, 0);
    assert_int_equal(source.bad_unpins, 0);
}

void test_a_namespace_without_a_counter_counts_in_other(void **) {
    FakeSource source;
    CacheMetrics m;
    m.count_engine_hits(source);
    m.of("z").misses.add(1);
    assert_int_equal(source.pins, 0);
    source.elsewhere.add(7);
    assert_int_equal(l1_hits_of(m, "z"), 0);
    assert_int_equal(l1_hits_of(m, "__other__"), 7);
    assert_int_equal(m.totals(nullptr).l1_hits, 7);
}

void test_a_fold_gives_the_pin_back(void **) {
    FakeSource source;
    for (int i = 0; i < 10; ++i) source.counter("n" + std::to_string(i));
    {
        CacheMetrics m(1);  // the smallest bound: the hot slots and one more
        m.count_engine_hits(source);
        for (int i = 0; i < 9; ++i) m.of("n" + std::to_string(i));
        assert_int_equal(source.pins, 9);
        source.counter("n8").add(2);  // n8 holds no hot slot: the one to fold
        assert_int_equal(l1_hits_of(m, "n8"), 2);
        m.of("n9");  // past the bound: n8 is folded
        assert_int_equal(m.series(), 9);
        assert_int_equal(source.pins, 9);
        source.counter("n8").add(3);  // after the fold: "__other__"'s
        source.counter("n9").add(1);
        assert_int_equal(l1_hits_of(m, "n9"), 1);
        assert_int_equal(l1_hits_of(m, "__other__"), 5);
        assert_int_equal(m.totals(nullptr).l1_hits, source.total_hits());
    }
    assert_int_equal(source.pins, 0);
    assert_int_equal(source.bad_unpins, 0);
}

void test_without_a_source_only_own_counts(void **) {
    CacheMetrics m;
    m.of("a").l1_hits.add(2);
    assert_int_equal(l1_hits_of(m, "a"), 2);
    assert_int_equal(m.totals(nullptr).l1_hits, 2);
    assert_int_equal(m.snapshot().size(), 1);  // no "__other__" with nothing in it
}

}  // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_series_reads_its_pinned_counter),
        cmocka_unit_test(test_a_namespace_without_a_counter_counts_in_other),
        cmocka_unit_test(test_a_fold_gives_the_pin_back),
        cmocka_unit_test(test_without_a_source_only_own_counts),
    };
    return cmocka_run_group_tests_name("metrics_engine_hits", tests, nullptr, nullptr);
}
