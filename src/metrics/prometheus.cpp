#include "metrics/prometheus.hpp"

#include <algorithm>
#include <charconv>

#include "cachekit/cachekit.h"
#include "util/prometheus_label.hpp"

namespace cachekit::metrics {
namespace {

std::string number(double v) {
    char buf[32];
    auto res = std::to_chars(buf, buf + sizeof buf, v);  // shortest form that reads back exactly
    return std::string(buf, res.ptr);
}

class Writer {
public:
    void header(const char *name, const char *type, const char *help) {
        out_ += "# HELP ";
        out_ += name;
        out_ += " ";
        out_ += help;
        out_ += "\n# TYPE ";
        out_ += name;
        out_ += " ";
        out_ += type;
        out_ += "\n";
    }
    void sample(const std::string &name, const std::string &labels, const std::string &value) {
        out_ += name + "{" + labels + "} " + value + "\n";
    }
    template <size_t N>
    void histogram(const char *name, const std::string &labels, const std::array<double, N> &bounds,
                   const HistogramCounts<N> &h) {
        uint64_t cumulative = 0;
        for (size_t i = 0; i <= N; ++i) {
            cumulative += h.buckets[i];
            std::string le = i < N ? number(bounds[i]) : "+Inf";
            sample(std::string(name) + "_bucket", labels + ",le=\"" + le + "\"", std::to_string(cumulative));
        }
        sample(std::string(name) + "_sum", labels, number(h.sum()));
        sample(std::string(name) + "_count", labels, std::to_string(cumulative));
    }
    std::string take() { return std::move(out_); }

private:
    std::string out_;
};

}  // namespace

std::string prometheus_text(const CacheMetrics &metrics, const ExpositionContext &ctx) {
    const std::vector<SeriesCounts> all = metrics.snapshot();  // sorted by name
    const std::string ser = prometheus_label(ctx.serializer);
    Writer w;

    w.header("cache_operations_total", "counter", "Cache operations by outcome.");
    for (const SeriesCounts &m : all) {
        const std::string base = "namespace=\"" + prometheus_label(m.ns) + "\",serializer=\"" + ser + "\"";
        auto op = [&](const char *operation, const char *success, uint64_t v) {
            w.sample("cache_operations_total", std::string("operation=\"") + operation + "\"," + base +
                                                   ",success=\"" + success + "\"",
                     std::to_string(v));
        };
        op("get", "true", m.l1_hits + m.l2_hits);
        op("get", "false", m.misses);
        op("set", "true", m.stores);
        op("set", "false", m.too_large + m.dropped_fills);
        op("load", "true", m.loads);
        op("load", "false", m.load_errors);
        op("invalidate", "true", m.invalidations);
    }
    w.header("cachekit_cache_hits_total", "counter", "Cache hits by tier.");
    for (const SeriesCounts &m : all) {
        const std::string base = "namespace=\"" + prometheus_label(m.ns) + "\"";
        w.sample("cachekit_cache_hits_total", base + ",tier=\"l1\"", std::to_string(m.l1_hits));
        w.sample("cachekit_cache_hits_total", base + ",tier=\"l2\"", std::to_string(m.l2_hits));
    }
    w.header("cachekit_cache_errors_total", "counter", "Backend failures and refused entries, by kind.");
    for (const SeriesCounts &m : all) {
        const std::string base = "namespace=\"" + prometheus_label(m.ns) + "\",kind=\"";
        auto err = [&](const char *kind, uint64_t v) { w.sample("cachekit_cache_errors_total", base + kind + "\"", std::to_string(v)); };
        err("backend", m.backend_errors);
        err("timeout", m.timeouts);
        err("corrupt", m.corrupt);
        err("tampered", m.tampered);
        err("wrong_key", m.wrong_key);
        err("downgrade", m.downgrade);
        err("serializer_mismatch", m.serializer_mismatch);
        err("registry", m.registry_errors);
    }
    w.header("cachekit_stale_served_total", "counter", "Stale-while-revalidate hits served.");
    for (const SeriesCounts &m : all)
        w.sample("cachekit_stale_served_total", "namespace=\"" + prometheus_label(m.ns) + "\"", std::to_string(m.stale_served));
    w.header("cache_operation_duration_ms", "histogram", "L2 read latency in milliseconds.");
    for (const SeriesCounts &m : all)
        w.histogram("cache_operation_duration_ms",
                    "operation=\"l2_get\",namespace=\"" + prometheus_label(m.ns) + "\",serializer=\"" + ser + "\"", kLatencyBucketsMs, m.l2_latency_ms);
    w.header("cache_operation_size_bytes", "histogram", "Stored entry sizes in bytes.");
    for (const SeriesCounts &m : all)
        w.histogram("cache_operation_size_bytes",
                    "operation=\"set\",namespace=\"" + prometheus_label(m.ns) + "\",serializer=\"" + ser + "\"", kSizeBucketsBytes, m.stored_bytes);
    if (ctx.has_backend) {
        static const char *names[] = {"closed", "open", "half_open"};
        const int s = ctx.breaker_state;
        w.header("circuit_breaker_state", "gauge", "L2 circuit breaker state: 0 closed, 1 open, 2 half-open.");
        for (const SeriesCounts &m : all)
            w.sample("circuit_breaker_state",
                     "namespace=\"" + prometheus_label(m.ns) + "\",state=\"" + (s >= 0 && s <= 2 ? names[s] : "unknown") + "\"",
                     std::to_string(s));
    }
    return w.take();
}

std::string l1_admission_text(uint64_t admitted, uint64_t rejected) {
    Writer w;
    w.header("cachekit_l1_admitted_total", "counter",
             "L1 TinyLFU: entries leaving the window admitted over a main-region victim.");
    w.sample("cachekit_l1_admitted_total", "policy=\"tinylfu\"", std::to_string(admitted));
    w.header("cachekit_l1_rejected_by_admission_total", "counter",
             "L1 TinyLFU: entries leaving the window evicted because the victim was read more often.");
    w.sample("cachekit_l1_rejected_by_admission_total", "policy=\"tinylfu\"", std::to_string(rejected));
    return w.take();
}

}  // namespace cachekit::metrics
