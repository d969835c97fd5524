// The Redis backend's commands (Backend on one server). The connections,
// the pool, the deadline-bounded wire and the reply guard they go through
// are connection.hpp's: a call leases one connection, runs its command(s)
// (pipelined where it has several), and maps the replies
// (redis_replies.hpp) once the connection is back in the pool.
#include "l2/redis/redis_backend.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "l2/redis/connection.hpp"
#include "l2/redis/redis_args.hpp"
#include "l2/redis/redis_invalidation.hpp"
#include "l2/redis/redis_replies.hpp"
#include "util/error.hpp"

namespace cachekit::l2 {
namespace {

using std::chrono::milliseconds;

constexpr std::string_view kUnlockScript =
    "if redis.call(\"get\",KEYS[1]) == ARGV[1] then return redis.call(\"del\",KEYS[1]) else return 0 end";
// SHA-1 of kUnlockScript, as SCRIPT LOAD answers it (checked by the tests).
constexpr std::string_view kUnlockSha = "b70c2384248f88e6b75b9f89241a180f856ad852";
constexpr size_t kMgetChunk = 1000;      // keys per MGET
constexpr size_t kPipelineChunk = 1000;  // commands written before reading their replies
constexpr std::string_view kScanCount = "1000";
// SCAN's COUNT is a hint: a page may hold more keys (a whole hash bucket).
constexpr uint32_t kScanMaxKeys = 100000;

using redis_conn::Lease;
using redis_conn::Pool;
using redis_conn::Wire;
using redis_conn::tcp_where;
using redis_replies::Reply;

inline const char *data_or_empty(std::string_view text) { return text.data() ? text.data() : ""; }

class RedisBackend final : public Backend {
public:
    explicit RedisBackend(const RedisConfig &config)
        : pool_(config, describe(config)), wire_(pool_.wire()), config_(config) {}

    const char *kind() const noexcept override { return "redis"; }

    bool get(std::string_view key, cachekit_buf *out, Deadline deadline) override {
        Lease conn(pool_, deadline);
        const char *argv[] = {"GET", data_or_empty(key)};
        size_t lens[] = {3, key.size()};
        Reply reply = wire_.run(*conn, 2, argv, lens, "GET", deadline);
        return redis_replies::take_value(*reply, out, wire_.where());
    }

    // GET and PTTL sent in one write: one round trip for a hit and its TTL.
    bool get_with_ttl(std::string_view key, cachekit_buf *out, Ttl *remaining, Deadline deadline) override {
        Lease conn(pool_, deadline);
        const char *get_argv[] = {"GET", data_or_empty(key)};
        const char *pttl_argv[] = {"PTTL", data_or_empty(key)};
        const size_t get_lens[] = {3, key.size()}, pttl_lens[] = {4, key.size()};
        wire_.append(*conn, 2, get_argv, get_lens);
        wire_.append(*conn, 2, pttl_argv, pttl_lens);
        Reply value = wire_.next(*conn, "GET", deadline);
        Reply ttl = wire_.next(*conn, "PTTL", deadline);  // read before either is judged: the connection stays in step
        if (!redis_replies::take_value(*value, out, wire_.where())) return false;
        std::optional<Ttl> t = redis_replies::pttl(*ttl, wire_.where());
        // Gone between the two (expired): give the value no L1 lifetime at all.
        *remaining = t ? *t : Ttl{std::chrono::milliseconds(0)};
        return true;
    }

    void set(std::string_view key, std::string_view value, Ttl ttl, Deadline deadline) override {
        char ms[24];
        size_t ms_len = redis_args::px_milliseconds(ttl, ms);
        Lease conn(pool_, deadline);
        const char *argv[] = {"SET", data_or_empty(key), data_or_empty(value), "PX", ms};
        size_t lens[] = {3, key.size(), value.size(), 2, ms_len};
        Reply reply = wire_.run(*conn, ttl ? 5 : 3, argv, lens, "SET", deadline);
        redis_replies::expect_ok(*reply, wire_.where(), "SET");
    }

    bool del(std::string_view key, Deadline deadline) override { return integer_command("UNLINK", key, deadline) > 0; }

    bool exists(std::string_view key, Deadline deadline) override {
        return integer_command("EXISTS", key, deadline) > 0;
    }

    std::optional<Ttl> ttl(std::string_view key, Deadline deadline) override {
        Reply reply = key_command("PTTL", key, deadline);
        return redis_replies::pttl(*reply, wire_.where());
    }

    bool expire(std::string_view key, milliseconds ttl, Deadline deadline) override {
        char ms[24];
        size_t ms_len = redis_args::px_milliseconds(Ttl(ttl), ms);
        Lease conn(pool_, deadline);
        const char *argv[] = {"PEXPIRE", data_or_empty(key), ms};
        size_t lens[] = {7, key.size(), ms_len};
        Reply reply = wire_.run(*conn, 3, argv, lens, "PEXPIRE", deadline);
        return redis_replies::integer(*reply, wire_.where(), "PEXPIRE") > 0;
    }

    // The increment script by its SHA (one round trip); EVAL once when the
    // server's script cache lacks it (first use, restart, SCRIPT FLUSH).
    std::optional<int64_t> incr(std::string_view key, int64_t delta, Deadline deadline) override {
        char by[24];
        const size_t by_len = redis_args::decimal(delta, by);
        Lease conn(pool_, deadline);
        const char *argv[] = {"EVALSHA", redis_args::kIncrSha.data(), "1", data_or_empty(key), by};
        size_t lens[] = {7, redis_args::kIncrSha.size(), 1, key.size(), by_len};
        Reply reply = wire_.run(*conn, 5, argv, lens, "EVALSHA", deadline);
        if (redis_replies::is_noscript(*reply)) {
            argv[0] = "EVAL";
            lens[0] = 4;
            argv[1] = redis_args::kIncrScript.data();
            lens[1] = redis_args::kIncrScript.size();
            reply = wire_.run(*conn, 5, argv, lens, "EVAL", deadline);
        }
        return redis_replies::incremented(*reply, wire_.where());
    }

    bool add(std::string_view key, std::string_view value, Ttl ttl, Deadline deadline) override {
        char ms[24];
        size_t ms_len = redis_args::px_milliseconds(ttl, ms);
        Lease conn(pool_, deadline);
        const char *argv[] = {"SET", data_or_empty(key), data_or_empty(value), "NX", "PX", ms};
        size_t lens[] = {3, key.size(), value.size(), 2, 2, ms_len};
        Reply reply = wire_.run(*conn, ttl ? 6 : 4, argv, lens, "SET NX", deadline);
        return redis_replies::added(*reply, wire_.where());
    }

    // PEXPIRE; for no expiry PERSIST and EXISTS in one write (PERSIST alone
    // answers 0 for a key that exists without a TTL).
    bool touch(std::string_view key, Ttl ttl, Deadline deadline) override {
        if (ttl) return expire(key, *ttl, deadline);
        Lease conn(pool_, deadline);
        const char *persist_argv[] = {"PERSIST", data_or_empty(key)};
        const char *exists_argv[] = {"EXISTS", data_or_empty(key)};
        const size_t persist_lens[] = {7, key.size()}, exists_lens[] = {6, key.size()};
        wire_.append(*conn, 2, persist_argv, persist_lens);
        wire_.append(*conn, 2, exists_argv, exists_lens);
        Reply persisted = wire_.next(*conn, "PERSIST", deadline);
        Reply exists = wire_.next(*conn, "EXISTS", deadline);  // both read before either is judged
        redis_replies::integer(*persisted, wire_.where(), "PERSIST");
        return redis_replies::integer(*exists, wire_.where(), "EXISTS") > 0;
    }

    // UNLINKs of up to kMgetChunk keys, all written before any reply is read.
    uint64_t delete_many(const std::vector<std::string_view> &keys, Deadline deadline) override {
        if (keys.empty()) return 0;
        std::vector<const char *> argv;
        std::vector<size_t> lens;
        Lease conn(pool_, deadline);
        const size_t chunks = (keys.size() + kMgetChunk - 1) / kMgetChunk;
        for (size_t c = 0; c < chunks; ++c) {
            const size_t begin = c * kMgetChunk, end = std::min(keys.size(), begin + kMgetChunk);
            argv.assign(1, "UNLINK");
            lens.assign(1, 6);
            for (size_t i = begin; i < end; ++i) {
                argv.push_back(data_or_empty(keys[i]));
                lens.push_back(keys[i].size());
            }
            wire_.append(*conn, static_cast<int>(argv.size()), argv.data(), lens.data());
        }
        uint64_t deleted = 0;
        std::string error;
        for (size_t c = 0; c < chunks; ++c) {
            Reply reply = wire_.next(*conn, "UNLINK", deadline);
            std::optional<long long> n = redis_replies::integer_of(*reply);
            if (n && *n >= 0)
                deleted += static_cast<uint64_t>(*n);
            else if (error.empty())
                error = redis_replies::describe(*reply, wire_.where(), "UNLINK");
        }
        if (!error.empty()) fail(CACHEKIT_EBACKEND, error);
        return deleted;
    }

    void get_many(const std::vector<std::string_view> &keys, cachekit_buf *outs, std::vector<bool> &found,
                  Deadline deadline) override {
        found.assign(keys.size(), false);
        if (keys.empty()) return;
        if (outs == nullptr) fail(CACHEKIT_EINVAL, "get_many: no output buffers");
        std::vector<const char *> argv;
        std::vector<size_t> lens;
        Lease conn(pool_, deadline);
        // MGETs of up to kMgetChunk keys, all sent in one write before any reply is read.
        size_t chunks = (keys.size() + kMgetChunk - 1) / kMgetChunk;
        for (size_t c = 0; c < chunks; ++c) {
            size_t begin = c * kMgetChunk, end = std::min(keys.size(), begin + kMgetChunk);
            argv.assign(1, "MGET");
            lens.assign(1, 4);
            for (size_t i = begin; i < end; ++i) {
                argv.push_back(data_or_empty(keys[i]));
                lens.push_back(keys[i].size());
            }
            wire_.append(*conn, static_cast<int>(argv.size()), argv.data(), lens.data(),
                         ReplyShape::array(static_cast<uint32_t>(end - begin)));
        }
        std::string error;
        for (size_t c = 0; c < chunks; ++c) {
            size_t begin = c * kMgetChunk, end = std::min(keys.size(), begin + kMgetChunk);
            Reply reply = wire_.next(*conn, "MGET", deadline);
            std::string wrong = redis_replies::mget(*reply, end - begin, outs + begin, found, begin, wire_.where());
            if (error.empty()) error = std::move(wrong);
        }
        if (!error.empty()) fail(CACHEKIT_EBACKEND, error);
    }

    void set_many(const std::vector<KeyValue> &entries, Ttl ttl, Deadline deadline) override {
        if (entries.empty()) return;
        char ms[24];
        size_t ms_len = redis_args::px_milliseconds(ttl, ms);
        int argc = ttl ? 5 : 3;
        Lease conn(pool_, deadline);
        std::string error;
        for (size_t begin = 0; begin < entries.size(); begin += kPipelineChunk) {
            size_t end = std::min(entries.size(), begin + kPipelineChunk);
            for (size_t i = begin; i < end; ++i) {
                const KeyValue &kv = entries[i];
                const char *argv[] = {"SET", data_or_empty(kv.key), data_or_empty(kv.value), "PX", ms};
                size_t lens[] = {3, kv.key.size(), kv.value.size(), 2, ms_len};
                wire_.append(*conn, argc, argv, lens);
            }
            for (size_t i = begin; i < end; ++i) {
                Reply reply = wire_.next(*conn, "SET", deadline);
                if (error.empty() && !redis_replies::is_ok(*reply))
                    error = redis_replies::describe(*reply, wire_.where(), "SET");
            }
        }
        if (!error.empty()) fail(CACHEKIT_EBACKEND, error);
    }

    uint64_t clear(const KeySelection &which, Deadline deadline) override {
        const std::string pattern = glob_escape(which.prefix) + which.glob;

        Lease conn(pool_, deadline);
        const char *scan_argv[] = {"SCAN", "0", "MATCH", pattern.data(), "COUNT", kScanCount.data()};
        size_t scan_lens[] = {4, 1, 5, pattern.size(), 5, kScanCount.size()};
        const ReplyShape scan_shape = ReplyShape::nested(2, kScanMaxKeys);
        Reply scan = wire_.run(*conn, 6, scan_argv, scan_lens, "SCAN", deadline, scan_shape);
        uint64_t deleted = 0;
        redis_replies::ScanPage page;
        std::vector<const char *> argv;
        std::vector<size_t> lens;
        for (;;) {
            redis_replies::scan_page(*scan, wire_.where(), page);
            if (page.keys.empty() && !page.more) break;
            // This batch's UNLINK and the next SCAN go in one write: one round trip per batch.
            // Only keys the selection takes (the glob only narrows the SCAN).
            argv.assign(1, "UNLINK");
            lens.assign(1, 6);
            for (std::string_view key : page.keys) {
                if (!which.takes(key)) continue;
                argv.push_back(data_or_empty(key));
                lens.push_back(key.size());
            }
            const bool unlink = argv.size() > 1;
            if (unlink) wire_.append(*conn, static_cast<int>(argv.size()), argv.data(), lens.data());
            if (page.more) {
                scan_argv[1] = data_or_empty(page.cursor);
                scan_lens[1] = page.cursor.size();
                wire_.append(*conn, 6, scan_argv, scan_lens, scan_shape);
            }
            if (unlink) {
                // Sends both requests (the scan reply they point into is still alive).
                Reply unlinked = wire_.next(*conn, "UNLINK", deadline);
                std::optional<long long> count = redis_replies::integer_of(*unlinked);
                if (!count) {
                    std::string error = redis_replies::describe(*unlinked, wire_.where(), "UNLINK");
                    if (page.more) wire_.next(*conn, "SCAN", deadline);  // keep the connection in step
                    fail(CACHEKIT_EBACKEND, error);
                }
                deleted += static_cast<uint64_t>(*count);
            }
            if (!page.more) break;
            scan = wire_.next(*conn, "SCAN", deadline);
        }
        return deleted;
    }

    bool keeps_registry() const noexcept override { return true; }

    // SET, SADD and EXPIRE in one write, their replies read before any is
    // judged (the connection stays in step); only the SET's can fail the call.
    bool set_registered(std::string_view key, std::string_view value, Ttl ttl, std::string_view registry,
                        std::string_view member, Deadline deadline) override {
        char ms[24];
        size_t ms_len = redis_args::px_milliseconds(ttl, ms);
        char secs[24];
        auto res = std::to_chars(secs, secs + sizeof secs, static_cast<long long>(kRegistryTtl.count()));
        const size_t secs_len = static_cast<size_t>(res.ptr - secs);
        Lease conn(pool_, deadline);
        const char *set_argv[] = {"SET", data_or_empty(key), data_or_empty(value), "PX", ms};
        const size_t set_lens[] = {3, key.size(), value.size(), 2, ms_len};
        const char *sadd_argv[] = {"SADD", data_or_empty(registry), data_or_empty(member)};
        const size_t sadd_lens[] = {4, registry.size(), member.size()};
        const char *expire_argv[] = {"EXPIRE", data_or_empty(registry), secs};
        const size_t expire_lens[] = {6, registry.size(), secs_len};
        wire_.append(*conn, ttl ? 5 : 3, set_argv, set_lens);
        wire_.append(*conn, 3, sadd_argv, sadd_lens);
        wire_.append(*conn, 3, expire_argv, expire_lens);
        Reply set = wire_.next(*conn, "SET", deadline);
        Reply added = wire_.next(*conn, "SADD", deadline);
        Reply renewed = wire_.next(*conn, "EXPIRE", deadline);
        redis_replies::expect_ok(*set, wire_.where(), "SET");
        return redis_replies::integer_of(*added).has_value() && redis_replies::integer_of(*renewed).has_value();
    }

    // SSCAN pages of the set; each page's UNLINKs and SREM go out with the
    // next SSCAN (one round trip per page). A member written meanwhile is
    // either drained or left for the next drain, never lost: it leaves the
    // set only in the SREM that follows its key's UNLINK.
    std::vector<std::string> drain_registry(std::string_view registry, std::string_view key_prefix,
                                            Deadline deadline) override {
        Lease conn(pool_, deadline);
        const char *scan_argv[] = {"SSCAN", data_or_empty(registry), "0", "COUNT", kScanCount.data()};
        size_t scan_lens[] = {5, registry.size(), 1, 5, kScanCount.size()};
        const ReplyShape scan_shape = ReplyShape::nested(2, kScanMaxKeys);
        Reply scan = wire_.run(*conn, 5, scan_argv, scan_lens, "SSCAN", deadline, scan_shape);
        std::vector<std::string> drained;
        std::vector<std::string> keys;
        std::vector<const char *> unlink_argv, srem_argv;
        std::vector<size_t> unlink_lens, srem_lens;
        redis_replies::ScanPage page;
        for (;;) {
            redis_replies::scan_page(*scan, wire_.where(), page);
            if (page.keys.empty() && !page.more) break;
            const size_t first = drained.size();
            keys.clear();
            for (std::string_view member : page.keys) {
                drained.emplace_back(member);
                keys.emplace_back(std::string(key_prefix).append(member));
            }
            unlink_argv.assign(1, "UNLINK");
            unlink_lens.assign(1, 6);
            srem_argv.assign({"SREM", data_or_empty(registry)});
            srem_lens.assign({4, registry.size()});
            for (size_t i = 0; i < keys.size(); ++i) {
                unlink_argv.push_back(keys[i].data());
                unlink_lens.push_back(keys[i].size());
                srem_argv.push_back(drained[first + i].data());
                srem_lens.push_back(drained[first + i].size());
            }
            const bool any = !keys.empty();
            if (any) {
                wire_.append(*conn, static_cast<int>(unlink_argv.size()), unlink_argv.data(), unlink_lens.data());
                wire_.append(*conn, static_cast<int>(srem_argv.size()), srem_argv.data(), srem_lens.data());
            }
            if (page.more) {
                scan_argv[2] = data_or_empty(page.cursor);
                scan_lens[2] = page.cursor.size();
                wire_.append(*conn, 5, scan_argv, scan_lens, scan_shape);
            }
            if (any) {
                Reply unlinked = wire_.next(*conn, "UNLINK", deadline);
                Reply removed = wire_.next(*conn, "SREM", deadline);
                std::string error;
                if (!redis_replies::integer_of(*unlinked))
                    error = redis_replies::describe(*unlinked, wire_.where(), "UNLINK");
                else if (!redis_replies::integer_of(*removed))
                    error = redis_replies::describe(*removed, wire_.where(), "SREM");
                if (!error.empty()) {
                    if (page.more) wire_.next(*conn, "SSCAN", deadline);  // keep the connection in step
                    fail(CACHEKIT_EBACKEND, error);
                }
            }
            if (!page.more) break;
            scan = wire_.next(*conn, "SSCAN", deadline);
        }
        return drained;
    }

    std::optional<std::string> lock(std::string_view name, milliseconds hold, Deadline deadline) override {
        if (hold.count() <= 0) fail(CACHEKIT_EINVAL, "lock: the hold time must be positive");
        const std::string token = redis_args::new_lock_token();
        char ms[24];
        size_t ms_len = redis_args::px_milliseconds(Ttl(hold), ms);

        Lease conn(pool_, deadline);
        const char *argv[] = {"SET", data_or_empty(name), token.c_str(), "NX", "PX", ms};
        size_t lens[] = {3, name.size(), token.size(), 2, 2, ms_len};
        Reply reply = wire_.run(*conn, 6, argv, lens, "SET NX", deadline);
        if (!redis_replies::lock_taken(*reply, wire_.where())) return std::nullopt;
        return token;
    }

    bool unlock(std::string_view name, std::string_view token, Deadline deadline) override {
        Lease conn(pool_, deadline);
        const char *argv[] = {"EVALSHA", kUnlockSha.data(), "1", data_or_empty(name), data_or_empty(token)};
        size_t lens[] = {7, kUnlockSha.size(), 1, name.size(), token.size()};
        Reply reply = wire_.run(*conn, 5, argv, lens, "EVALSHA", deadline);
        if (redis_replies::is_noscript(*reply)) {
            // Not in the server's script cache (first use, restart, SCRIPT FLUSH): EVAL caches it again.
            argv[0] = "EVAL";
            lens[0] = 4;
            argv[1] = kUnlockScript.data();
            lens[1] = kUnlockScript.size();
            reply = wire_.run(*conn, 5, argv, lens, "EVAL", deadline);
        }
        return redis_replies::unlocked(*reply, wire_.where());
    }

    Health health(Deadline deadline) override {
        Lease conn(pool_, deadline);
        const char *argv[] = {"PING"};
        size_t lens[] = {4};
        auto start = SteadyClock::now();
        Reply reply = wire_.run(*conn, 1, argv, lens, "PING", deadline);
        auto end = SteadyClock::now();
        redis_replies::expect_pong(*reply, wire_.where());
        Health health;
        health.ok = true;
        health.latency_ms = std::chrono::duration<double, std::milli>(end - start).count();
        health.detail = "PONG from " + wire_.where();
        return health;
    }

    // L1 coherence: a feed with its own connection (redis_invalidation.cpp).
    std::unique_ptr<InvalidationFeed> watch(const WatchRequest &request) override {
        return start_redis_feed(config_, request);
    }

private:
    static std::string describe(const RedisConfig &config) {
        if (!config.unix_path.empty()) return "redis unix:" + config.unix_path + " db " + std::to_string(config.db);
        return tcp_where(config) + " db " + std::to_string(config.db);
    }

    // One command on one key (its reply is mapped after the connection is back in the pool).
    Reply key_command(const char *name, std::string_view key, Deadline deadline) {
        Lease conn(pool_, deadline);
        const char *argv[] = {name, data_or_empty(key)};
        size_t lens[] = {std::strlen(name), key.size()};
        return wire_.run(*conn, 2, argv, lens, name, deadline);
    }

    long long integer_command(const char *name, std::string_view key, Deadline deadline) {
        Reply reply = key_command(name, key, deadline);
        return redis_replies::integer(*reply, wire_.where(), name);
    }

    Pool pool_;
    const Wire &wire_;
    const RedisConfig config_;
};

}  // namespace

std::unique_ptr<Backend> open_redis(const RedisConfig &config) {
    if (config.unix_path.empty()) {
        if (config.host.empty()) fail(CACHEKIT_EINVAL, "Redis config: no host and no unix socket path");
        if (config.port <= 0 || config.port > 65535)
            fail(CACHEKIT_EINVAL, "Redis config: port " + std::to_string(config.port) + " is not in 1..65535");
    }
    if (config.db < 0) fail(CACHEKIT_EINVAL, "Redis config: the database must be a non-negative integer");
    if (config.tls.enabled && !config.unix_path.empty())
        fail(CACHEKIT_EINVAL, "Redis config: TLS needs a TCP host, not a unix socket");
    if (config.pool_size == 0) fail(CACHEKIT_EINVAL, "Redis config: the pool size must be at least 1");
    if (config.connect_timeout.count() <= 0 || config.command_timeout.count() <= 0)
        fail(CACHEKIT_EINVAL, "Redis config: the connect and command timeouts must be positive");
    if (config.reconnect_backoff_min.count() < 0 || config.reconnect_backoff_max < config.reconnect_backoff_min)
        fail(CACHEKIT_EINVAL, "Redis config: reconnect backoff must satisfy 0 <= min <= max");
    return std::make_unique<RedisBackend>(config);
}

}  // namespace cachekit::l2
