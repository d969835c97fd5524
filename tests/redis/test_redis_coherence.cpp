// L1 coherence on one Redis (issue 17, docs/redis.md "L1 coherence"), over
// the public C API and a private redis-server: a cache A with an L1 reads a
// key into L1; a raw SET from another client, a put by another process's
// cache, an invalidation and a FLUSHALL each make A's next read return what
// Redis now holds (within a bounded wait: the message travels). The
// invalidation connection killed with CLIENT KILL: the L1 is flushed, no
// stale read, coherence comes back. A fill racing a stream of writes never
// leaves a stale entry behind. The reference SDK's channel events drop
// keys too. Propagation lag p50/p99 over 10,000 updates is printed, not
// asserted. Skips (exit 77) without redis-server.
#include <hiredis/hiredis.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "redis_server.hpp"
// Last: it pulls in cmocka.h.
#include "../cache/cache_test_util.hpp"
#include "raw_redis.hpp"

using cachekit::testing::RedisServer;

namespace {

std::unique_ptr<RedisServer> g_redis;
constexpr const char *kPrefix = "coh:";
constexpr auto kPatience = 10s;  // bound of every wait for a message to arrive

// A raw client to the test server.
struct Raw : cachekit::testing::RawRedis {
    Raw() : RawRedis(g_redis->port()) {}
};

std::string url(const char *mode) { return g_redis->url() + "?l1_coherence=" + mode; }

ct::CacheHandle cache_on(const std::string &u, bool l1 = true) {
    cachekit_cache_options o = ct::default_options();
    o.backend_url = u.c_str();
    o.key_prefix = kPrefix;
    o.l1 = l1 ? CACHEKIT_ON : CACHEKIT_OFF;
    return ct::new_cache(&o);
}

std::string metrics(cachekit_cache *c) {
    ct::Buf out;
    CT_OK(cachekit_cache_metrics_text(c, out.get()));
    return out.str();
}

// The value of one coherence series in the metrics text (-1: absent).
long long series(cachekit_cache *c, const std::string &name) {
    const std::string text = metrics(c);
    const size_t at = text.find("\n" + name + "{");
    if (at == std::string::npos) return -1;
    const size_t sp = text.find(' ', at + 1);
    return std::atoll(text.c_str() + sp + 1);
}

void wait_live(cachekit_cache *c) {
    if (!ct::eventually([&] { return series(c, "cachekit_l1_coherence_live") == 1; }, kPatience, 5ms))
        fail_msg("the invalidation connection never became live:\n%s", metrics(c).c_str());
}

// The stored bytes of `value` (the cache's envelope; no key in it without encryption).
std::string stored_form(Raw &raw, const std::string &value) {
    ct::CacheHandle w = cache_on(url("off"), false);
    CT_OK(cachekit_cache_put(w.get(), nullptr, "scratch", 7, value.data(), value.size(), 0));
    return raw.text({"GET", std::string(kPrefix) + "scratch"});
}

struct Read {
    int rc;
    std::string value;
    int source;
};

Read read(cachekit_cache *c, const std::string &key) {
    ct::Buf out;
    cachekit_lookup info = CACHEKIT_LOOKUP_INIT;
    int rc = cachekit_cache_get(c, out.get(), &info, nullptr, key.data(), key.size());
    return {rc, out.str(), info.source};
}

// cachekit-py's event, written out by hand: {"r": registry id[, "k": key]} (short strings only).
std::string sdk_event(const std::string &registry_id, const char *key) {
    auto str = [](const std::string &s) {
        if (s.size() < 32) return std::string(1, char(0xa0 | s.size())) + s;
        return std::string(1, char(0xd9)) + char(s.size()) + s;  // str8
    };
    std::string out(1, char(key ? 0x82 : 0x81));
    out += str("r") + str(registry_id);
    if (key) out += str("k") + str(key);
    return out;
}

// A reads `key` into L1 and then hits L1 with `want`.
void read_into_l1(cachekit_cache *a, const std::string &key, const std::string &want) {
    Read r = read(a, key);
    assert_int_equal(r.rc, CACHEKIT_OK);
    assert_true(r.value == want);
    // The fill may have been dropped by the message of a write just before: read again until an L1 hit.
    assert_true(ct::eventually([&] { Read h = read(a, key); return h.source == CACHEKIT_SOURCE_L1 && h.value == want; },
                               kPatience, 1ms));
}

bool eventually_reads(cachekit_cache *a, const std::string &key, const std::string &want) {
    return ct::eventually([&] { Read r = read(a, key); return r.rc == CACHEKIT_OK && r.value == want; }, kPatience, 1ms);
}

void test_raw_set_reaches_l1(void **) {
    Raw raw;
    ct::CacheHandle a = cache_on(url("tracking"));
    wait_live(a.get());
    const std::string v1 = ct::mp_str("one"), v2 = ct::mp_str("two");
    raw.text({"SET", std::string(kPrefix) + "k1", stored_form(raw, v1)});
    read_into_l1(a.get(), "k1", v1);
    const long long dropped = series(a.get(), "cachekit_l1_coherence_keys_dropped_total");
    raw.text({"SET", std::string(kPrefix) + "k1", stored_form(raw, v2)});
    assert_true(eventually_reads(a.get(), "k1", v2));
    assert_true(series(a.get(), "cachekit_l1_coherence_keys_dropped_total") > dropped);
    assert_true(series(a.get(), "cachekit_l1_coherence_messages_total") > 0);
}

// B is another process with its own cache (and L1) on the same Redis.
void in_child(const std::function<void(cachekit_cache *)> &body) {
    const pid_t pid = fork();
    if (pid == 0) {
        ct::CacheHandle b = cache_on(url("tracking"));
        body(b.get());
        b.reset();
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

void test_other_process_put_and_invalidate(void **) {
    Raw raw;
    ct::CacheHandle a = cache_on(url("tracking"));
    wait_live(a.get());
    const std::string v1 = ct::mp_str("b-one"), v2 = ct::mp_str("b-two");
    CT_OK(cachekit_cache_put(a.get(), nullptr, "k2", 2, v1.data(), v1.size(), 0));
    read_into_l1(a.get(), "k2", v1);
    in_child([&](cachekit_cache *b) { cachekit_cache_put(b, nullptr, "k2", 2, v2.data(), v2.size(), 0); });
    assert_true(eventually_reads(a.get(), "k2", v2));
    read_into_l1(a.get(), "k2", v2);
    in_child([&](cachekit_cache *b) { cachekit_cache_invalidate(b, nullptr, "k2", 2); });
    assert_true(ct::eventually([&] { return read(a.get(), "k2").rc == CACHEKIT_ENOTFOUND; }, kPatience, 1ms));
}

void test_flushall_empties_l1(void **) {
    Raw raw;
    ct::CacheHandle a = cache_on(url("tracking"));
    wait_live(a.get());
    const std::string v = ct::mp_str("f");
    CT_OK(cachekit_cache_put(a.get(), nullptr, "k3", 2, v.data(), v.size(), 0));
    read_into_l1(a.get(), "k3", v);
    raw.text({"FLUSHALL"});
    assert_true(ct::eventually([&] { return read(a.get(), "k3").rc == CACHEKIT_ENOTFOUND; }, kPatience, 1ms));
}

// Only the server's nil is a flush: a client allowed to PUBLISH on the
// tracking channel sends strings, which must not empty the L1 (issue 25).
void test_forged_flush_message_is_ignored(void **) {
    Raw raw;
    ct::CacheHandle a = cache_on(url("tracking"));
    wait_live(a.get());
    // Messages arrive in order: once the drop of a raw SET's key is counted,
    // every message sent before it has been handled.
    int marks = 0;
    auto barrier = [&] {
        const long long dropped = series(a.get(), "cachekit_l1_coherence_keys_dropped_total");
        raw.text({"SET", std::string(kPrefix) + "forged-mark", std::to_string(++marks)});
        assert_true(ct::eventually(
            [&] { return series(a.get(), "cachekit_l1_coherence_keys_dropped_total") > dropped; }, kPatience, 1ms));
    };
    const std::string kept = ct::mp_str("kept");
    // Written raw: a's own put is also announced on the SDK channel by another
    // thread, and that event could arrive after the barrier and drop the fill.
    raw.text({"SET", std::string(kPrefix) + "forged-keep", stored_form(raw, kept)});
    barrier();  // the SET's message has come back
    read_into_l1(a.get(), "forged-keep", kept);
    const long long flushes = series(a.get(), "cachekit_l1_coherence_flushes_total");
    for (const char *payload : {"x", "", "*-1"}) raw.text({"PUBLISH", "__redis__:invalidate", payload});
    barrier();
    assert_int_equal(series(a.get(), "cachekit_l1_coherence_flushes_total"), flushes);
    Read r = read(a.get(), "forged-keep");
    assert_int_equal(r.rc, CACHEKIT_OK);
    assert_int_equal(r.source, CACHEKIT_SOURCE_L1);
    assert_true(r.value == kept);
}

void test_client_kill_flushes(void **) {
    Raw raw;
    ct::CacheHandle a = cache_on(url("tracking"));
    wait_live(a.get());
    const std::string v1 = ct::mp_str("kill-1"), v2 = ct::mp_str("kill-2"), v3 = ct::mp_str("kill-3");
    CT_OK(cachekit_cache_put(a.get(), nullptr, "k4", 2, v1.data(), v1.size(), 0));
    read_into_l1(a.get(), "k4", v1);
    const long long flushes = series(a.get(), "cachekit_l1_coherence_flushes_total");
    const std::string id = raw.feed_client_id();
    assert_false(id.empty());
    raw.text({"CLIENT", "KILL", "ID", id});
    // No tracking now: this write sends no message to anyone.
    raw.text({"SET", std::string(kPrefix) + "k4", stored_form(raw, v2)});
    // The loss is noticed: the L1 is flushed and the stale copy is gone.
    assert_true(ct::eventually([&] { return series(a.get(), "cachekit_l1_coherence_flushes_total") > flushes; },
                               kPatience, 1ms));
    Read r = read(a.get(), "k4");
    assert_int_equal(r.rc, CACHEKIT_OK);
    assert_true(r.value == v2);
    // Back again (a new connection, another flush), and coherent.
    wait_live(a.get());
    assert_true(raw.feed_client_id() != id);
    read_into_l1(a.get(), "k4", v2);
    raw.text({"SET", std::string(kPrefix) + "k4", stored_form(raw, v3)});
    assert_true(eventually_reads(a.get(), "k4", v3));
}

// A writer keeps changing the key while A reads it: fills race the
// messages. Once the writer stops, A converges on the last value and stays
// there: no fill that read an older value landed after the last message.
void test_fill_races_invalidation(void **) {
    Raw raw;
    ct::CacheHandle a = cache_on(url("tracking"));
    wait_live(a.get());
    std::vector<std::string> forms;
    for (int i = 0; i < 50; ++i) forms.push_back(stored_form(raw, ct::mp_str("race-" + std::to_string(i))));
    std::atomic<bool> done{false};
    std::thread reader([&] {
        while (!done.load()) read(a.get(), "k5");
    });
    ct::JoinOnExit join(reader, [&] { done = true; });
    for (int round = 0; round < 2000; ++round) raw.text({"SET", std::string(kPrefix) + "k5", forms[size_t(round) % forms.size()]});
    done = true;
    reader.join();
    const std::string last = ct::mp_str("race-" + std::to_string(1999 % 50));
    assert_true(eventually_reads(a.get(), "k5", last));
    for (int i = 0; i < 200; ++i) {
        Read r = read(a.get(), "k5");
        assert_true(r.value == last);
    }
}

int load_counter(cachekit_load *load, void *payload) {
    auto *n = static_cast<int *>(payload);
    const std::string v = ct::mp_str("loaded-" + std::to_string(++*n));
    return cachekit_load_set_value(load, v.data(), v.size());
}

// A load's own L2 write comes back as a message while it stores: that is a
// write, not an invalidation, so the load keeps its L2 entry (it must not
// take it back as it would for an invalidation racing it), and a second
// process then reads it without loading.
void test_loads_keep_their_l2_write(void **) {
    Raw raw;
    ct::CacheHandle a = cache_on(url("tracking"));
    int loads = 0;
    for (int i = 0; i < 50; ++i) {
        const std::string key = "load-" + std::to_string(i);
        ct::Buf out;
        CT_OK(cachekit_cache_get_or_load(a.get(), out.get(), nullptr, nullptr, key.data(), key.size(), 0,
                                         load_counter, &loads));
    }
    assert_int_equal(loads, 50);
    // Their own messages came back: the lag histogram has samples.
    assert_true(ct::eventually([&] {
        const std::string text = metrics(a.get());
        const size_t at = text.find("\ncachekit_l1_coherence_lag_ms_count ");
        return at != std::string::npos && std::atoll(text.c_str() + at + 36) > 0;
    }, kPatience, 1ms));
    std::this_thread::sleep_for(50ms);  // every message has arrived
    for (int i = 0; i < 50; ++i)
        assert_true(raw.text({"EXISTS", std::string(kPrefix) + "load-" + std::to_string(i)}) == "1");
    ct::CacheHandle b = cache_on(url("tracking"));
    int b_loads = 0;
    for (int i = 0; i < 50; ++i) {
        const std::string key = "load-" + std::to_string(i);
        ct::Buf out;
        CT_OK(cachekit_cache_get_or_load(b.get(), out.get(), nullptr, nullptr, key.data(), key.size(), 0,
                                         load_counter, &b_loads));
    }
    assert_int_equal(b_loads, 0);
}

// cachekit-py's channel: a key event drops the key, a function event the namespace.
void test_sdk_channel_events(void **) {
    Raw raw;
    ct::CacheHandle a = cache_on(url("pubsub"));
    wait_live(a.get());
    assert_true(metrics(a.get()).find("mode=\"pubsub\"") != std::string::npos);
    const std::string v1 = ct::mp_str("sdk-1"), v2 = ct::mp_str("sdk-2");
    // Written raw: a's own put would be announced, and its event could drop the fill below.
    raw.text({"SET", std::string(kPrefix) + "k6", stored_form(raw, v1)});
    read_into_l1(a.get(), "k6", v1);
    // pubsub mode: a raw SET is not seen (no tracking) ...
    raw.text({"SET", std::string(kPrefix) + "k6", stored_form(raw, v2)});
    Read r = read(a.get(), "k6");
    assert_true(r.value == v1 && r.source == CACHEKIT_SOURCE_L1);
    // ... until the SDK's event for the key arrives.
    raw.text({"PUBLISH", "cachekit:py:invalidate:v1", sdk_event("ck:reg::00ff", "k6")});
    assert_true(eventually_reads(a.get(), "k6", v2));
    // A function-wide event (no "k") drops the namespace ("" here).
    read_into_l1(a.get(), "k6", v2);
    raw.text({"SET", std::string(kPrefix) + "k6", stored_form(raw, v1)});
    raw.text({"PUBLISH", "cachekit:py:invalidate:v1", sdk_event("ck:reg::00ff", nullptr)});
    assert_true(eventually_reads(a.get(), "k6", v1));
    // Garbage on the channel is ignored.
    raw.text({"PUBLISH", "cachekit:py:invalidate:v1", "\x91\x01"});
    assert_true(series(a.get(), "cachekit_l1_coherence_live") == 1);
}

// Our writes and invalidations of auto-mode keys are announced on
// cachekit-py's channel, in its format (for its listeners' L1s).
void test_announces_on_sdk_channel(void **) {
    Raw sub;
    auto *r = static_cast<redisReply *>(redisCommand(sub.c, "SUBSCRIBE cachekit:py:invalidate:v1"));
    freeReplyObject(r);
    ct::CacheHandle a = cache_on(url("tracking"));
    const std::string key = "ns:users:func:app.get_user:args:" + std::string(64, 'a') + ":1s";
    const std::string v = ct::mp_str("announced");
    CT_OK(cachekit_cache_put(a.get(), "users", key.data(), key.size(), v.data(), v.size(), 0));
    CT_OK(cachekit_cache_invalidate(a.get(), "users", key.data(), key.size()));
    // {"r": "ck:reg:users:" + blake3("app.get_user")[:16 hex] (Python's blake3), "k": key}, twice.
    const std::string want = sdk_event("ck:reg:users:5407d2bc85936a3a", key.c_str());
    for (int i = 0; i < 2; ++i) {
        void *reply = nullptr;
        assert_int_equal(redisGetReply(sub.c, &reply), REDIS_OK);
        auto *m = static_cast<redisReply *>(reply);
        assert_int_equal(m->type, REDIS_REPLY_ARRAY);
        assert_true(std::string(m->element[2]->str, m->element[2]->len) == want);
        freeReplyObject(m);
    }
    // A key of another shape (interop, the C API's own) is announced under
    // a registry id no SDK function has, for libcachekit's listeners alone.
    CT_OK(cachekit_cache_put(a.get(), nullptr, "plain", 5, v.data(), v.size(), 0));
    void *reply = nullptr;
    assert_int_equal(redisGetReply(sub.c, &reply), REDIS_OK);
    auto *m = static_cast<redisReply *>(reply);
    assert_true(std::string(m->element[2]->str, m->element[2]->len) == sdk_event("ck:reg::libcachekit", "plain"));
    freeReplyObject(m);
}

// auto on a server whose ACL refuses CLIENT TRACKING falls back to the
// channel (issue 25): there another libcachekit process's write of a key of
// any shape still reaches this L1, since every write is announced.
void test_auto_without_tracking_hears_every_key(void **) {
    Raw raw;
    raw.text({"ACL", "SETUSER", "notrack", "on", ">pw", "~*", "&*", "+@all", "-client|tracking"});
    const std::string u = "redis://notrack:pw@127.0.0.1:" + std::to_string(g_redis->port()) + "?l1_coherence=auto";
    ct::CacheHandle a = cache_on(u);
    wait_live(a.get());
    assert_true(metrics(a.get()).find("cachekit_l1_coherence_live{mode=\"pubsub\"} 1") != std::string::npos);
    const std::string v1 = ct::mp_str("nt-1"), v2 = ct::mp_str("nt-2");
    const std::string key = "users:get_user:" + std::string(64, 'b');  // an interop key's shape
    CT_OK(cachekit_cache_put(a.get(), nullptr, key.data(), key.size(), v1.data(), v1.size(), 0));
    read_into_l1(a.get(), key, v1);
    in_child([&](cachekit_cache *b) { cachekit_cache_put(b, nullptr, key.data(), key.size(), v2.data(), v2.size(), 0); });
    assert_true(eventually_reads(a.get(), key, v2));
    raw.text({"ACL", "DELUSER", "notrack"});
}

void test_off_has_no_feed(void **) {
    Raw raw;
    ct::CacheHandle a = cache_on(url("off"));
    assert_true(metrics(a.get()).find("cachekit_l1_coherence") == std::string::npos);
    const std::string v1 = ct::mp_str("off-1"), v2 = ct::mp_str("off-2");
    CT_OK(cachekit_cache_put(a.get(), nullptr, "k7", 2, v1.data(), v1.size(), 0));
    read_into_l1(a.get(), "k7", v1);
    raw.text({"SET", std::string(kPrefix) + "k7", stored_form(raw, v2)});
    std::this_thread::sleep_for(50ms);
    assert_true(read(a.get(), "k7").value == v1);  // off is off: L1 keeps its copy until its TTL
}

// auto: tracking on this Redis 7; live when cachekit_cache_new returns
// (it waits for the first attempt), so a put is an L1 entry at once.
void test_auto_picks_tracking(void **) {
    ct::CacheHandle a = cache_on(url("auto"));
    assert_true(metrics(a.get()).find("cachekit_l1_coherence_live{mode=\"tracking\"} 1") != std::string::npos);
}

// Without the parameter there is no feed (opt-in: docs/redis.md).
void test_default_is_off(void **) {
    ct::CacheHandle a = cache_on(g_redis->url());
    assert_true(metrics(a.get()).find("cachekit_l1_coherence") == std::string::npos);
}

// A forked child inherits the parent's L1 but not its feed thread: its
// first read flushes that L1 and starts its own feed, so a write made after
// the fork is never read stale from the inherited copy.
void test_forked_child_starts_its_own_feed(void **) {
    Raw raw;
    ct::CacheHandle a = cache_on(url("tracking"));
    const std::string v1 = ct::mp_str("fork-1"), v2 = ct::mp_str("fork-2"), v3 = ct::mp_str("fork-3");
    const std::string f2 = stored_form(raw, v2), f3 = stored_form(raw, v3);
    CT_OK(cachekit_cache_put(a.get(), nullptr, "k9", 2, v1.data(), v1.size(), 0));
    read_into_l1(a.get(), "k9", v1);
    const pid_t pid = fork();
    if (pid == 0) {
        redisContext *c = redisConnect("127.0.0.1", g_redis->port());
        const std::string key = std::string(kPrefix) + "k9";
        auto set = [&](const std::string &form) {
            freeReplyObject(redisCommand(c, "SET %b %b", key.data(), key.size(), form.data(), form.size()));
        };
        set(f2);
        if (read(a.get(), "k9").value != v2) _exit(2);  // not the inherited copy
        // The child's own feed keeps its L1 coherent.
        if (!eventually_reads(a.get(), "k9", v2)) _exit(3);
        const bool in_l1 = ct::eventually([&] { return read(a.get(), "k9").source == CACHEKIT_SOURCE_L1; }, kPatience, 1ms);
        if (!in_l1) _exit(4);
        set(f3);
        if (!eventually_reads(a.get(), "k9", v3)) _exit(5);
        _exit(0);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    // A child that invalidates and frees the inherited cache without reading
    // first: nothing waits for the parent's feed threads (they are not there).
    const pid_t quiet = fork();
    if (quiet == 0) {
        cachekit_cache_invalidate(a.get(), nullptr, "k8", 2);
        cachekit_cache_free(a.release());
        _exit(0);
    }
    assert_int_equal(waitpid(quiet, &status, 0), quiet);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    // The parent's feed saw the child's writes too.
    assert_true(eventually_reads(a.get(), "k9", v3));
}

// Reported, not asserted: the time from a raw SET until A's next read returns it.
void test_propagation_lag(void **) {
    Raw raw;
    ct::CacheHandle a = cache_on(url("tracking"));
    wait_live(a.get());
    const int n = std::getenv("CACHEKIT_LAG_UPDATES") ? std::atoi(std::getenv("CACHEKIT_LAG_UPDATES")) : 10000;
    std::vector<std::string> forms, values;
    for (int i = 0; i < 2; ++i) {
        values.push_back(ct::mp_str("lag-" + std::to_string(i)));
        forms.push_back(stored_form(raw, values.back()));
    }
    read_into_l1(a.get(), "k8", (raw.text({"SET", std::string(kPrefix) + "k8", forms[1]}), values[1]));
    std::vector<double> lag_us;
    lag_us.reserve(size_t(n));
    for (int i = 0; i < n; ++i) {
        const size_t v = size_t(i) % 2;
        raw.text({"SET", std::string(kPrefix) + "k8", forms[v]});
        const auto t0 = std::chrono::steady_clock::now();
        const auto until = t0 + kPatience;
        for (;;) {
            Read r = read(a.get(), "k8");
            if (r.value == values[v]) break;
            if (std::chrono::steady_clock::now() > until) fail_msg("update %d never arrived", i);
        }
        lag_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(lag_us.begin(), lag_us.end());
    std::printf("propagation lag over %d updates (SET acknowledged -> A's read returns it): p50 %.1f us, p99 %.1f us, max %.1f us\n",
                n, lag_us[lag_us.size() / 2], lag_us[lag_us.size() * 99 / 100], lag_us.back());
    std::printf("%s", metrics(a.get()).substr(metrics(a.get()).find("# HELP cachekit_l1_coherence")).c_str());
}

}  // namespace

int main() {
    RedisServer::require_or_skip("test_redis_coherence");
    g_redis = std::make_unique<RedisServer>();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_raw_set_reaches_l1),
        cmocka_unit_test(test_other_process_put_and_invalidate),
        cmocka_unit_test(test_flushall_empties_l1),
        cmocka_unit_test(test_forged_flush_message_is_ignored),
        cmocka_unit_test(test_client_kill_flushes),
        cmocka_unit_test(test_fill_races_invalidation),
        cmocka_unit_test(test_loads_keep_their_l2_write),
        cmocka_unit_test(test_sdk_channel_events),
        cmocka_unit_test(test_announces_on_sdk_channel),
        cmocka_unit_test(test_auto_without_tracking_hears_every_key),
        cmocka_unit_test(test_off_has_no_feed),
        cmocka_unit_test(test_auto_picks_tracking),
        cmocka_unit_test(test_default_is_off),
        cmocka_unit_test(test_forked_child_starts_its_own_feed),
        cmocka_unit_test(test_propagation_lag),
    };
    int failed = cmocka_run_group_tests(tests, nullptr, nullptr);
    g_redis.reset();
    return failed;
}
