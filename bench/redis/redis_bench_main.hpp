// What the Redis benchmarks share (bench/redis, bench/cluster): the payload,
// the anchor's raw connection (a hiredis GET copied into a buffer), and
// main()'s frame: Google Benchmark's arguments, the skip (77) without
// redis-server, a setup failure reported by name.
#pragma once

#include <benchmark/benchmark.h>
#include <hiredis/hiredis.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>

#include "redis_server.hpp"
#include "util/buffer.hpp"

namespace cachekit::bench {

// n pseudo-random lowercase letters (the same bytes every run).
inline std::string payload(size_t n) {
    std::mt19937 rng(42);
    std::string out(n, '\0');
    for (auto &c : out) c = static_cast<char>('a' + rng() % 26);
    return out;
}

// The body of a GET benchmark (B8, B8TLS): `warmup` untimed calls, then one
// per iteration; `get(out)` puts the value in `out`, which must end up
// `size` bytes long.
template <class Get>
void time_gets(benchmark::State &state, size_t size, int warmup, Get &&get) {
    Buffer out;
    for (int i = 0; i < warmup; ++i) get(out);
    for (auto _ : state) {
        get(out);
        benchmark::DoNotOptimize(out.data());
    }
    if (out.size() != size) state.SkipWithError("wrong value size");
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * size));
}

// One plain hiredis connection to 127.0.0.1:port: the anchors' client.
class RawConnection {
public:
    explicit RawConnection(int port) {
        timeval tv{5, 0};
        c_ = redisConnectWithTimeout("127.0.0.1", port, tv);
        if (c_ == nullptr || c_->err) throw std::runtime_error("cannot connect the anchor");
        redisSetTimeout(c_, tv);
    }
    ~RawConnection() { redisFree(c_); }
    RawConnection(const RawConnection &) = delete;
    RawConnection &operator=(const RawConnection &) = delete;

    redisContext *get() const { return c_; }
    // GET key, the reply copied into `out` (what a client does with it); aborts on anything but a value.
    void get(std::string_view key, Buffer &out) const {
        auto *reply = static_cast<redisReply *>(redisCommand(c_, "GET %b", key.data(), key.size()));
        if (reply == nullptr || reply->type != REDIS_REPLY_STRING) {
            std::fprintf(stderr, "anchor GET failed\n");
            std::abort();
        }
        buf_assign(out.get(), reply->str, reply->len);
        freeReplyObject(reply);
    }

private:
    redisContext *c_ = nullptr;
};

// main() of a Redis benchmark: `run` starts its server(s), registers the
// cases and runs them (run_registered()); its exceptions are reported.
inline int redis_bench_main(int argc, char **argv, const char *name, const std::function<void()> &run) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    if (testing::RedisServer::find_binary().empty()) {
        std::fprintf(stderr, "%s: redis-server is not installed; skipping\n", name);
        return 77;
    }
    try {
        run();
    } catch (const std::exception &e) {
        std::fprintf(stderr, "%s: %s\n", name, e.what());
        return 1;
    }
    return 0;
}

inline void run_registered() {
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
}

}  // namespace cachekit::bench
