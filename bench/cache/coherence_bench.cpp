// C3 (issue 17): L1 coherence on one Redis; the cases are in
// coherence_cases.hpp (shared with the cluster's, bench/cluster). Starts its
// own redis-server on a free 127.0.0.1 port (the test harness) and exits 77
// when none is installed.
#include "coherence_cases.hpp"
#include "redis_bench_main.hpp"

int main(int argc, char **argv) {
    return cachekit::bench::redis_bench_main(argc, argv, "coherence_bench", [] {
        namespace c3 = cachekit::bench::c3;
        cachekit::testing::RedisServer server;
        cachekit::bench::RawConnection raw(server.port());
        c3::Target target;
        c3::setup_and_register(&target, server.url(), "", [&] { return raw.get(); });
        cachekit::bench::run_registered();
        c3::close(&target);
    });
}
