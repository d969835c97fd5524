// The in-process backend: a mutex-guarded hash map with expiry on the steady
// clock (lazy on access, plus a sweep every 1024 writes), prefix clear, and
// token locks with their own expiry.
//
// fork(): the map's mutex is in the fork registry (util/fork_hooks.hpp). A
// child has its own copy of the map, and of the locks only the forking
// thread's still hold there: a lock another parent thread held (a
// cross-process-lock load in flight) has lapsed, as its holder does not
// exist in the child and will never unlock it.
#include <mutex>
#include <new>
#include <thread>
#include <unordered_map>

#include "l2/memory_backend.hpp"
#include "l2/posix_io.hpp"
#include "l2/stored_integer.hpp"
#include "util/buffer.hpp"
#include "util/error.hpp"
#include "util/fork_hooks.hpp"

namespace cachekit::l2 {

namespace {

using std::chrono::milliseconds;

class MemoryBackend final : public Backend, private fork_hooks::Participant {
public:
    MemoryBackend() { fork_hooks::join(this); }
    ~MemoryBackend() override { fork_hooks::leave(this); }
    MemoryBackend(const MemoryBackend &) = delete;
    MemoryBackend &operator=(const MemoryBackend &) = delete;

    const char *kind() const noexcept override { return "memory"; }

    bool get(std::string_view key, cachekit_buf *out, Deadline) override {
        std::lock_guard<std::mutex> g(mu_);
        const Entry *e = live(key);
        if (!e) return false;
        buf_assign(out, e->value);
        return true;
    }

    void set(std::string_view key, std::string_view value, Ttl ttl, Deadline) override {
        std::lock_guard<std::mutex> g(mu_);
        put_locked(key, value, expiry_of(ttl));
    }

    bool del(std::string_view key, Deadline) override {
        std::lock_guard<std::mutex> g(mu_);
        bool was = live(key) != nullptr;
        auto it = map_.find(std::string(key));
        if (it != map_.end()) map_.erase(it);
        return was;
    }

    bool exists(std::string_view key, Deadline) override {
        std::lock_guard<std::mutex> g(mu_);
        return live(key) != nullptr;
    }

    bool expire(std::string_view key, milliseconds ttl, Deadline) override {
        std::lock_guard<std::mutex> g(mu_);
        const Entry *e = live(key);
        if (!e) return false;
        const_cast<Entry *>(e)->expires = expiry_of(Ttl(ttl));
        return true;
    }

    std::optional<int64_t> incr(std::string_view key, int64_t delta, Deadline) override {
        std::lock_guard<std::mutex> g(mu_);
        Entry *e = const_cast<Entry *>(live(key));
        if (!e) return std::nullopt;
        std::string digits;
        const int64_t sum = add_to_stored_integer(e->value, delta, digits);
        e->value = std::move(digits);
        return sum;
    }

    bool add(std::string_view key, std::string_view value, Ttl ttl, Deadline) override {
        auto expires = expiry_of(ttl);
        std::lock_guard<std::mutex> g(mu_);
        if (live(key)) return false;
        put_locked(key, value, expires);
        return true;
    }

    bool touch(std::string_view key, Ttl ttl, Deadline) override {
        auto expires = expiry_of(ttl);
        std::lock_guard<std::mutex> g(mu_);
        Entry *e = const_cast<Entry *>(live(key));
        if (!e) return false;
        e->expires = expires;
        return true;
    }

    uint64_t delete_many(const std::vector<std::string_view> &keys, Deadline) override {
        std::lock_guard<std::mutex> g(mu_);
        uint64_t n = 0;
        for (std::string_view key : keys) {
            if (live(key)) ++n;
            map_.erase(std::string(key));
        }
        return n;
    }

    std::optional<Ttl> ttl(std::string_view key, Deadline) override {
        std::lock_guard<std::mutex> g(mu_);
        const Entry *e = live(key);
        if (!e) return std::nullopt;
        if (!e->expires) return Ttl{std::nullopt};
        auto left = std::chrono::ceil<milliseconds>(*e->expires - SteadyClock::now());
        return Ttl{std::max(left, milliseconds(1))};
    }

    void get_many(const std::vector<std::string_view> &keys, cachekit_buf *outs, std::vector<bool> &found,
                  Deadline) override {
        found.assign(keys.size(), false);
        std::lock_guard<std::mutex> g(mu_);
        for (size_t i = 0; i < keys.size(); ++i) {
            const Entry *e = live(keys[i]);
            if (!e) continue;
            buf_assign(&outs[i], e->value);
            found[i] = true;
        }
    }

    void set_many(const std::vector<KeyValue> &entries, Ttl ttl, Deadline) override {
        auto expires = expiry_of(ttl);
        std::lock_guard<std::mutex> g(mu_);
        for (const auto &kv : entries) put_locked(kv.key, kv.value, expires);
    }

    uint64_t clear(const KeySelection &which, Deadline) override {
        std::lock_guard<std::mutex> g(mu_);
        auto now = SteadyClock::now();
        uint64_t n = 0;
        for (auto it = map_.begin(); it != map_.end();) {
            if (which.takes(it->first)) {
                if (!expired(it->second, now)) ++n;
                it = map_.erase(it);
            } else {
                ++it;
            }
        }
        return n;
    }

    std::optional<std::string> lock(std::string_view name, milliseconds hold, Deadline) override {
        if (hold.count() <= 0) fail(CACHEKIT_EINVAL, "a lock needs a positive hold time");
        std::string token = posix::random_hex(16);
        std::lock_guard<std::mutex> g(mu_);
        auto now = SteadyClock::now();
        auto it = locks_.find(std::string(name));
        if (it != locks_.end() && it->second.expires > now) return std::nullopt;
        locks_[std::string(name)] = Lock{token, now + hold, std::this_thread::get_id()};
        return token;
    }

    bool unlock(std::string_view name, std::string_view token, Deadline) override {
        std::lock_guard<std::mutex> g(mu_);
        auto it = locks_.find(std::string(name));
        if (it == locks_.end() || it->second.token != token) return false;
        bool live_lock = it->second.expires > SteadyClock::now();
        locks_.erase(it);
        return live_lock;
    }

    Health health(Deadline) override {
        auto t0 = SteadyClock::now();
        Health h;
        {
            std::lock_guard<std::mutex> g(mu_);
            h.detail = "entries=" + std::to_string(map_.size());
        }
        h.ok = true;
        h.latency_ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
        return h;
    }

private:
    void before_fork() noexcept override { mu_.lock(); }
    void after_fork_parent() noexcept override { mu_.unlock(); }
    // Only the forking thread exists here: the locks other threads took
    // lapse (marked expired, nothing freed in the handler).
    void after_fork_child() noexcept override {
        const std::thread::id me = std::this_thread::get_id();
        for (auto &kv : locks_)
            if (kv.second.holder != me) kv.second.expires = SteadyClock::time_point::min();
        new (&mu_) std::mutex;
    }

    struct Entry {
        std::string value;
        std::optional<SteadyClock::time_point> expires;
    };
    struct Lock {
        std::string token;
        SteadyClock::time_point expires;
        std::thread::id holder;  // the thread that took it (fork: see after_fork_child)
    };

    static std::optional<SteadyClock::time_point> expiry_of(Ttl ttl) {
        if (!ttl) return std::nullopt;
        if (ttl->count() <= 0) fail(CACHEKIT_EINVAL, "a TTL must be positive");
        return SteadyClock::now() + *ttl;
    }

    static bool expired(const Entry &e, SteadyClock::time_point now) { return e.expires && *e.expires <= now; }

    // The live entry under key (an expired one is dropped). Caller holds mu_.
    const Entry *live(std::string_view key) {
        auto it = map_.find(std::string(key));
        if (it == map_.end()) return nullptr;
        if (expired(it->second, SteadyClock::now())) {
            map_.erase(it);
            return nullptr;
        }
        return &it->second;
    }

    void put_locked(std::string_view key, std::string_view value, std::optional<SteadyClock::time_point> expires) {
        map_.insert_or_assign(std::string(key), Entry{std::string(value), expires});
        if (++writes_ % 1024 == 0) sweep_locked();
    }

    void sweep_locked() {
        auto now = SteadyClock::now();
        for (auto it = map_.begin(); it != map_.end();) it = expired(it->second, now) ? map_.erase(it) : std::next(it);
        for (auto it = locks_.begin(); it != locks_.end();)
            it = it->second.expires <= now ? locks_.erase(it) : std::next(it);
    }

    std::mutex mu_;
    std::unordered_map<std::string, Entry> map_;
    std::unordered_map<std::string, Lock> locks_;
    uint64_t writes_ = 0;
};

}  // namespace

std::unique_ptr<Backend> open_memory() { return std::make_unique<MemoryBackend>(); }

}  // namespace cachekit::l2
