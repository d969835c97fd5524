// The file backend: one file per key in a directory shared by the processes
// of one machine (see file_backend.hpp and docs/l2.md).
//
// Concurrency protocol:
//  * A value is written to a fresh temp file in the same directory
//    (O_CREAT|O_EXCL|O_NOFOLLOW, 0600) and renamed over the entry name, so a
//    reader sees the old file or the new one, never a torn one.
//  * Every change of an existing entry name (replace, delete, removal of an
//    expired or corrupt file, eviction, clear) first takes flock(LOCK_EX) on
//    the inode the name refers to and checks the name still refers to it;
//    readers hold flock(LOCK_SH) while reading. Locks are bounded by
//    lock_timeout and the call's deadline (CACHEKIT_ETIMEOUT).
//  * Eviction, clear and the reservation of a large write hold an exclusive
//    flock on the cache directory itself (a descriptor opened per use, so a
//    forked child never shares it); no lock file a stranger could plant.
//  * Temp files are sized to their full length at creation (ftruncate), so a
//    directory scan counts a write in flight at its final size.
//  * Names are opened with O_NOFOLLOW|O_NONBLOCK and must be regular files:
//    a symlink planted under an entry name is a miss and is replaced (not
//    written through) by the next write.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <mutex>
#include <new>
#include <unordered_map>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "l2/file/file_backend.hpp"
#include "l2/file/file_backend_options.hpp"
#include "l2/file/file_dir.hpp"
#include "l2/file/file_format.hpp"
#include "l2/file/file_locks.hpp"
#include "l2/key_fault.hpp"
#include "l2/posix_io.hpp"
#include "l2/stored_integer.hpp"
#include "util/buffer.hpp"
#include "util/error.hpp"
#include "util/fork_hooks.hpp"

namespace cachekit::l2 {

namespace {

using std::chrono::milliseconds;
using posix::Fd;

// The longest wait for the directory lock: its holder evicts or clears,
// which takes longer than an entry's lock is ever held.
constexpr milliseconds kDirLockWait{500};
// A write of at least this share (percent) of max_bytes is "large": it
// reserves its bytes under the directory lock against a fresh scan.
constexpr uint64_t kLargeWritePct = 2;
// A process rescans after adding this share (percent) of a limit.
constexpr uint64_t kRescanPct = 3;

// floor(max * pct / 100) without overflow.
uint64_t pct_of(uint64_t max, uint64_t pct) { return max / 100 * pct + max % 100 * pct / 100; }

void check_deadline(Deadline deadline) {
    if (deadline.passed()) fail(CACHEKIT_ETIMEOUT, "the file backend call's deadline passed");
}

// What an entry name refers to.
struct Opened {
    enum Kind { Missing, Symlink, Other, Regular } kind = Missing;
    Fd fd;
    struct stat st {};
};

class FileBackend final : public Backend, private fork_hooks::Participant {
public:
    FileBackend(const FileConfig &config, const FileOptions &options)
        : cfg_(config), opt_(options), dir_(filedir::open_cache_dir(config.directory)) {
        if (cfg_.max_bytes == 0 || cfg_.max_entries == 0 || cfg_.max_value_bytes == 0)
            fail(CACHEKIT_EINVAL, "file backend limits (max_bytes, max_entries, max_value_bytes) must be positive");
        if (cfg_.lock_timeout.count() < 0) fail(CACHEKIT_EINVAL, "lock_timeout is negative");
        {
            std::lock_guard<std::mutex> g(est_mu_);
            rescan_locked(/*break_locks=*/true);
        }
        fork_hooks::join(this);  // last: nothing after it throws
    }
    ~FileBackend() override { fork_hooks::leave(this); }
    FileBackend(const FileBackend &) = delete;
    FileBackend &operator=(const FileBackend &) = delete;

    const char *kind() const noexcept override { return "file"; }

    bool get(std::string_view key, cachekit_buf *out, Deadline deadline) override {
        check_deadline(deadline);
        std::string name = filefmt::entry_name(key);
        Opened e = open_entry(name);
        if (e.kind != Opened::Regular) return false;
        posix::flock_or_timeout(e.fd.get(), LOCK_SH, cfg_.lock_timeout, deadline, "a cache entry");
        filefmt::Header h;
        filefmt::Verdict v = read_verdict(e, &h);
        if (v == filefmt::Verdict::MissPreserve) return false;
        if (v != filefmt::Verdict::Payload) {
            remove_locked_entry(e, name);
            return false;
        }
        uint64_t payload = uint64_t(e.st.st_size) - filefmt::kHeaderSize;
        if (payload > cfg_.max_value_bytes) return false;  // not ours to load (a larger writer's limit)
        char *dst = buf_resize(out, size_t(payload));
        size_t got = posix::pread_full(e.fd.get(), dst, size_t(payload), off_t(filefmt::kHeaderSize));
        if (got != payload) {
            buf_resize(out, 0);
            return false;
        }
        touch(e);
        return true;
    }

    void set(std::string_view key, std::string_view value, Ttl ttl, Deadline deadline) override {
        check_deadline(deadline);
        uint64_t expiry = expiry_for(ttl);
        check_value_fits(value);
        uint64_t file_bytes = filefmt::kHeaderSize + uint64_t(value.size());
        std::string name = filefmt::entry_name(key);

        struct stat cur;
        bool existed = posix::stat_at(dir_.get(), name, cur);
        if (existed && S_ISDIR(cur.st_mode)) fail_key(CACHEKIT_EBACKEND, in_the_way(name));
        existed = existed && S_ISREG(cur.st_mode);
        Temp tmp = reserve(name, existed ? 0 : 1, file_bytes, deadline);
        Inflight inflight{*this, tmp.name};
        try {
            fill_temp(std::move(tmp.fd), expiry, value);
            // Lock the inode currently under the name (if a regular file) so a
            // concurrent remover's check-then-unlink cannot interleave.
            for (int attempt = 0;; ++attempt) {
                Opened e = open_entry(name);
                if (e.kind == Opened::Regular) {
                    posix::flock_or_timeout(e.fd.get(), LOCK_EX, cfg_.lock_timeout, deadline, "a cache entry");
                    if (!posix::same_file_at(e.fd.get(), dir_.get(), name) && attempt < 8) continue;
                }
                if (::renameat(dir_.get(), tmp.name.c_str(), dir_.get(), name.c_str()) != 0) {
                    int err = errno;
                    if (err == EISDIR || err == ENOTEMPTY || err == EEXIST || err == EBUSY)
                        fail_key(CACHEKIT_EBACKEND, in_the_way(name));
                    posix::throw_errno("cannot rename the new cache file into place", err);
                }
                account(e.kind == Opened::Regular ? 0 : 1, 0, file_bytes,
                        e.kind == Opened::Regular ? uint64_t(e.st.st_size) : 0);
                break;
            }
        } catch (...) {
            ::unlinkat(dir_.get(), tmp.name.c_str(), 0);
            throw;
        }
    }

    bool del(std::string_view key, Deadline deadline) override {
        check_deadline(deadline);
        std::string name = filefmt::entry_name(key);
        const SteadyClock::time_point give_up = race_budget(deadline);
        for (int attempt = 0; may_retry_race(attempt, give_up); ++attempt) {
            Opened e = open_entry(name);
            if (e.kind == Opened::Symlink) ::unlinkat(dir_.get(), name.c_str(), 0);
            if (e.kind != Opened::Regular) return false;
            posix::flock_or_timeout(e.fd.get(), LOCK_EX, cfg_.lock_timeout, deadline, "a cache entry");
            if (!posix::same_file_at(e.fd.get(), dir_.get(), name)) continue;  // replaced meanwhile
            filefmt::Verdict v = read_verdict(e, nullptr);
            if (::unlinkat(dir_.get(), name.c_str(), 0) != 0) {
                if (errno == ENOENT) return false;
                posix::throw_errno("cannot delete a cache file", errno);
            }
            account(0, 1, 0, uint64_t(e.st.st_size));
            return v == filefmt::Verdict::Payload;
        }
        fail(CACHEKIT_ETIMEOUT, "delete kept racing with writers of the same key");
    }

    bool exists(std::string_view key, Deadline deadline) override { return live_header(key, deadline).has_value(); }

    std::optional<Ttl> ttl(std::string_view key, Deadline deadline) override {
        auto h = live_header(key, deadline);
        if (!h) return std::nullopt;
        if (h->expiry == 0) return Ttl{std::nullopt};
        int64_t left = int64_t(h->expiry) * 1000 - now_ms();
        return Ttl{milliseconds(std::max<int64_t>(left, 1))};
    }

    bool expire(std::string_view key, milliseconds ttl, Deadline deadline) override {
        check_deadline(deadline);
        return rewrite_expiry(key, expiry_for(Ttl(ttl)), deadline);
    }

    bool touch(std::string_view key, Ttl ttl, Deadline deadline) override {
        check_deadline(deadline);
        return rewrite_expiry(key, expiry_for(ttl), deadline);
    }

    // Under the entry's exclusive lock, which every replacement of the name
    // takes too: read, add, and rename the new digits over it before the
    // lock is released, so no write of the key (incr or set) falls between.
    std::optional<int64_t> incr(std::string_view key, int64_t delta, Deadline deadline) override {
        check_deadline(deadline);
        constexpr uint64_t kMostDigits = 20;  // "-9223372036854775808"
        const std::string name = filefmt::entry_name(key);
        const SteadyClock::time_point give_up = race_budget(deadline);
        for (int attempt = 0; may_retry_race(attempt, give_up); ++attempt) {
            Opened e = open_entry(name);
            if (e.kind != Opened::Regular) return std::nullopt;
            // The temp file before the entry lock: a reservation may evict,
            // and eviction takes entry locks.
            Temp tmp = reserve(name, 0, filefmt::kHeaderSize + kMostDigits, deadline);
            Inflight inflight{*this, tmp.name};
            struct RemoveTemp {
                int dir;
                const std::string &n;
                ~RemoveTemp() { ::unlinkat(dir, n.c_str(), 0); }  // gone already after the rename
            } remove_temp{dir_.get(), tmp.name};
            posix::flock_or_timeout(e.fd.get(), LOCK_EX, cfg_.lock_timeout, deadline, "a cache entry");
            if (!posix::same_file_at(e.fd.get(), dir_.get(), name)) continue;  // replaced meanwhile
            filefmt::Header h;
            const filefmt::Verdict v = read_verdict(e, &h);
            if (v == filefmt::Verdict::MissPreserve) return std::nullopt;
            if (v != filefmt::Verdict::Payload) {
                remove_locked_entry(e, name);
                return std::nullopt;
            }
            const uint64_t payload = uint64_t(e.st.st_size) - filefmt::kHeaderSize;
            if (payload > kMostDigits) fail(CACHEKIT_EUNSUPPORTED, "incr: the value is not a decimal 64-bit integer");
            std::string stored(size_t(payload), '\0');
            if (posix::pread_full(e.fd.get(), stored.data(), stored.size(), off_t(filefmt::kHeaderSize)) != payload)
                return std::nullopt;  // cut short under us: as a miss
            std::string digits;
            const int64_t sum = add_to_stored_integer(stored, delta, digits);
            const uint64_t file_bytes = filefmt::kHeaderSize + digits.size();
            if (::ftruncate(tmp.fd.get(), off_t(file_bytes)) != 0) posix::throw_errno("cannot size a temp file", errno);
            fill_temp(std::move(tmp.fd), h.expiry, digits);  // the entry's expiry kept
            if (::renameat(dir_.get(), tmp.name.c_str(), dir_.get(), name.c_str()) != 0)
                posix::throw_errno("cannot rename the new cache file into place", errno);
            account(0, 0, file_bytes, uint64_t(e.st.st_size));
            return sum;
        }
        fail(CACHEKIT_ETIMEOUT, "incr kept racing with writers of the same key");
    }

    // The new file is linked under the name (link(2) fails when the name
    // exists, so a write that wins the race is never replaced); a dead entry
    // (expired, corrupt) in the way is removed under its lock first.
    bool add(std::string_view key, std::string_view value, Ttl ttl, Deadline deadline) override {
        check_deadline(deadline);
        const uint64_t expiry = expiry_for(ttl);
        check_value_fits(value);
        const uint64_t file_bytes = filefmt::kHeaderSize + uint64_t(value.size());
        const std::string name = filefmt::entry_name(key);
        Temp tmp = reserve(name, 1, file_bytes, deadline);
        Inflight inflight{*this, tmp.name};
        struct RemoveTemp {
            int dir;
            const std::string &n;
            ~RemoveTemp() { ::unlinkat(dir, n.c_str(), 0); }  // the entry keeps its own link
        } remove_temp{dir_.get(), tmp.name};
        fill_temp(std::move(tmp.fd), expiry, value);
        const SteadyClock::time_point give_up = race_budget(deadline);
        for (int attempt = 0; may_retry_race(attempt, give_up); ++attempt) {
            Opened e = open_entry(name);
            if (e.kind == Opened::Symlink) ::unlinkat(dir_.get(), name.c_str(), 0);  // planted: replaced, as set does
            if (e.kind == Opened::Other) fail_key(CACHEKIT_EBACKEND, in_the_way(name));
            if (e.kind == Opened::Regular) {
                posix::flock_or_timeout(e.fd.get(), LOCK_EX, cfg_.lock_timeout, deadline, "a cache entry");
                if (!posix::same_file_at(e.fd.get(), dir_.get(), name)) continue;
                const filefmt::Verdict v = read_verdict(e, nullptr);
                if (v == filefmt::Verdict::Payload || v == filefmt::Verdict::MissPreserve) return false;
                if (::unlinkat(dir_.get(), name.c_str(), 0) == 0) account(0, 1, 0, uint64_t(e.st.st_size));
            }
            if (::linkat(dir_.get(), tmp.name.c_str(), dir_.get(), name.c_str(), 0) == 0) {
                account(1, 0, file_bytes, 0);
                return true;
            }
            if (errno != EEXIST) posix::throw_errno("cannot link the new cache file into place", errno);
        }
        fail(CACHEKIT_ETIMEOUT, "add kept racing with writers of the same key");
    }

    uint64_t delete_many(const std::vector<std::string_view> &keys, Deadline deadline) override {
        uint64_t n = 0;
        for (std::string_view key : keys) n += del(key, deadline) ? 1 : 0;
        return n;
    }

private:
    // Another write of the key replaced the entry between our open and our
    // lock: try again (at least 8 times) while the call's time allows. Each
    // try is an even race with that writer, so a fixed count alone loses to
    // a writer in a tight loop (two processes incrementing one counter).
    SteadyClock::time_point race_budget(Deadline deadline) const {
        return std::min(deadline.at, SteadyClock::now() + cfg_.lock_timeout);
    }
    static bool may_retry_race(int attempt, SteadyClock::time_point give_up) {
        return attempt < 8 || SteadyClock::now() < give_up;
    }

    // Only the header's 8 expiry bytes are rewritten, under the entry's
    // exclusive lock (the reference SDK's refresh_ttl does the same): the
    // payload and the file's other bytes stay as they are.
    bool rewrite_expiry(std::string_view key, uint64_t expiry, Deadline deadline) {
        std::string name = filefmt::entry_name(key);
        Opened e = open_entry(name);
        if (e.kind != Opened::Regular) return false;
        posix::flock_or_timeout(e.fd.get(), LOCK_EX, cfg_.lock_timeout, deadline, "a cache entry");
        if (!posix::same_file_at(e.fd.get(), dir_.get(), name)) return false;  // rewritten meanwhile: its TTL stands
        filefmt::Verdict v = read_verdict(e, nullptr);
        if (v == filefmt::Verdict::MissPreserve) return false;
        if (v != filefmt::Verdict::Payload) {
            remove_locked_entry(e, name);
            return false;
        }
        Fd w(::openat(dir_.get(), name.c_str(), O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        struct stat wst;
        if (!w || ::fstat(w.get(), &wst) != 0 || wst.st_ino != e.st.st_ino || wst.st_dev != e.st.st_dev) return false;
        const auto header = filefmt::encode_header(expiry);
        constexpr size_t kExpiryAt = 6;  // after "CK", version, reserved, flags
        const ssize_t n = ::pwrite(w.get(), header.data() + kExpiryAt, 8, off_t(kExpiryAt));
        if (n != 8) posix::throw_errno("cannot rewrite a cache file's expiry", n < 0 ? errno : EIO);
        return true;
    }

    // A value this backend takes at all (set and add): its own limit, and room in 90 % of max_bytes.
    void check_value_fits(std::string_view value) const {
        if (value.size() > cfg_.max_value_bytes)
            fail(CACHEKIT_ETOOBIG, "value of " + std::to_string(value.size()) + " bytes exceeds the file backend's " +
                                       "max_value_bytes (" + std::to_string(cfg_.max_value_bytes) + ")");
        const uint64_t file_bytes = filefmt::kHeaderSize + uint64_t(value.size());
        if (file_bytes > pct_of(cfg_.max_bytes, 90))  // nothing is evicted for what can never fit
            fail_key(CACHEKIT_EBUSY, "the file cache is full: an entry of " + std::to_string(file_bytes) +
                                         " bytes cannot fit in 90 % of max_bytes (" + std::to_string(cfg_.max_bytes) +
                                         "); not written");
    }

public:
    void get_many(const std::vector<std::string_view> &keys, cachekit_buf *outs, std::vector<bool> &found,
                  Deadline deadline) override {
        found.assign(keys.size(), false);
        for (size_t i = 0; i < keys.size(); ++i) found[i] = get(keys[i], &outs[i], deadline);
    }

    void set_many(const std::vector<KeyValue> &entries, Ttl ttl, Deadline deadline) override {
        for (const auto &kv : entries) set(kv.key, kv.value, ttl, deadline);
    }

    // Names are hashed: a prefix cannot be seen, and the directory is the
    // cache's own, so an empty prefix clears all of it (glob and accept unused).
    uint64_t clear(const KeySelection &which, Deadline deadline) override {
        if (!which.prefix.empty() || (which.accept && !which.hashed_names_clear_all))
            fail(CACHEKIT_EINVAL, "the file backend stores hashed names: it can clear everything (empty prefix) "
                                  "but not a prefix or a namespace");
        check_deadline(deadline);
        // Lock order everywhere: est_mu_, then the directory flock.
        std::lock_guard<std::mutex> g(est_mu_);
        Fd lock = dir_lock(deadline);
        filedir::Scan s = filedir::scan(dir_.get(), real_now_s());
        uint64_t removed = 0;
        for (const auto &ent : s.entries) {
            Opened e = open_entry(ent.name);
            if (e.kind != Opened::Regular) continue;
            posix::flock_or_timeout(e.fd.get(), LOCK_EX, cfg_.lock_timeout, deadline, "a cache entry");
            if (!posix::same_file_at(e.fd.get(), dir_.get(), ent.name)) continue;
            if (::unlinkat(dir_.get(), ent.name.c_str(), 0) == 0) ++removed;
        }
        rescan_locked(false);
        return removed;
    }

    std::optional<std::string> lock(std::string_view name, milliseconds hold, Deadline deadline) override {
        check_deadline(deadline);
        return filelock::acquire(dir_.get(), filefmt::lock_name(name), hold, now_ms(), cfg_.lock_timeout, deadline);
    }

    bool unlock(std::string_view name, std::string_view token, Deadline deadline) override {
        check_deadline(deadline);
        return filelock::release(dir_.get(), filefmt::lock_name(name), token, now_ms(), cfg_.lock_timeout,
                                 deadline);
    }

    Health health(Deadline deadline) override {
        auto t0 = SteadyClock::now();
        Health h;
        try {
            check_deadline(deadline);
            struct stat st;
            if (::fstat(dir_.get(), &st) != 0 || !S_ISDIR(st.st_mode))
                posix::throw_errno("the cache directory is gone", errno);
            // Write/read probe of a temp file (cleaned as an orphan if we die here).
            std::string probe = ".health.tmp." + posix::random_hex(8);
            std::string data = posix::random_hex(8);
            {
                Fd fd(::openat(dir_.get(), probe.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
                if (!fd) posix::throw_errno("cannot create a probe file", errno);
                struct Unlink {
                    int dir;
                    const std::string &n;
                    ~Unlink() { ::unlinkat(dir, n.c_str(), 0); }
                } unlink_probe{dir_.get(), probe};
                posix::write_full(fd.get(), data.data(), data.size(), "cannot write a probe file");
                std::string back(data.size(), '\0');
                if (posix::pread_full(fd.get(), back.data(), back.size(), 0) != back.size() || back != data)
                    fail(CACHEKIT_EBACKEND, "the probe file read back differently");
            }
            std::lock_guard<std::mutex> g(est_mu_);
            h.ok = true;
            h.detail = "dir=" + cfg_.directory + " entries~" + std::to_string(est_entries_) + " bytes~" +
                       std::to_string(est_bytes_);
        } catch (const std::exception &e) {
            h.ok = false;
            h.detail = e.what();
        }
        h.latency_ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - t0).count();
        return h;
    }

private:
    int64_t now_ms() const {
        auto t = opt_.now ? opt_.now() : std::chrono::system_clock::now();
        return std::chrono::duration_cast<milliseconds>(t.time_since_epoch()).count();
    }
    // Temp-file ages use the real clock: a test clock must not make in-flight
    // temp files of other writers look orphaned.
    static int64_t real_now_s() {
        return std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
            .count();
    }

    // Expiry (Unix seconds, 0 = never) of a write now: now + ttl rounded down
    // to a whole second, as the reference SDK writes it (int(time() + ttl)),
    // so an entry never outlives its TTL (a reader's L1 keeps the exact one).
    uint64_t expiry_for(Ttl ttl) const {
        if (!ttl) return 0;
        int64_t ms = ttl->count();
        if (ms <= 0) fail(CACHEKIT_EINVAL, "a TTL must be positive");
        if (uint64_t(ms) > filefmt::kMaxTtlSeconds * 1000)
            fail(CACHEKIT_EINVAL, "the file backend's longest TTL is 10 years (" +
                                      std::to_string(filefmt::kMaxTtlSeconds) + " s)");
        int64_t at = now_ms() + ms;
        return uint64_t(at / 1000);
    }

    Opened open_entry(const std::string &name) const {
        Opened e;
        e.fd.reset(::openat(dir_.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        if (!e.fd) {
            int err = errno;
            if (err == ENOENT) return e;
            if (err == ELOOP) {
                e.kind = Opened::Symlink;
                return e;
            }
            if (err == ENXIO || err == EISDIR) {  // a socket or a directory
                e.kind = Opened::Other;
                return e;
            }
            if (err == EACCES || err == EPERM)  // a file of the wrong mode: this key's trouble only
                fail_key(CACHEKIT_EBACKEND, "the cache file " + name + " cannot be opened (permission denied)");
            posix::throw_errno("cannot open a cache file", err);
        }
        if (::fstat(e.fd.get(), &e.st) != 0) posix::throw_errno("cannot stat a cache file", errno);
        e.kind = S_ISREG(e.st.st_mode) ? Opened::Regular : Opened::Other;
        return e;
    }

    filefmt::Verdict read_verdict(const Opened &e, filefmt::Header *h) const {
        char hdr[filefmt::kHeaderSize];
        size_t n = posix::pread_full(e.fd.get(), hdr, sizeof hdr, 0);
        return filefmt::classify(hdr, n, now_ms(), h);
    }

    std::optional<filefmt::Header> live_header(std::string_view key, Deadline deadline) {
        check_deadline(deadline);
        std::string name = filefmt::entry_name(key);
        Opened e = open_entry(name);
        if (e.kind != Opened::Regular) return std::nullopt;
        posix::flock_or_timeout(e.fd.get(), LOCK_SH, cfg_.lock_timeout, deadline, "a cache entry");
        filefmt::Header h;
        filefmt::Verdict v = read_verdict(e, &h);
        if (v == filefmt::Verdict::Payload) return h;
        if (v != filefmt::Verdict::MissPreserve) remove_locked_entry(e, name);
        return std::nullopt;
    }

    // Remove an expired or corrupt entry we hold open: try once to upgrade to
    // LOCK_EX (never wait: other readers may hold it; a later read or the
    // eviction scan removes it then) and unlink only if the name still
    // refers to this inode. Best effort.
    void remove_locked_entry(const Opened &e, const std::string &name) {
        try {
            if (!posix::flock_for(e.fd.get(), LOCK_EX, milliseconds(0))) return;
            if (!posix::same_file_at(e.fd.get(), dir_.get(), name)) return;
            if (::unlinkat(dir_.get(), name.c_str(), 0) == 0) account(0, 1, 0, uint64_t(e.st.st_size));
        } catch (const Error &) {
        }
    }

    // Stamp a file with the precise time: the kernel's own file times are
    // coarse (a jiffy), which would make eviction order among recent files
    // arbitrary.
    static void stamp(int fd) {
        struct timespec ts[2];
        ::clock_gettime(CLOCK_REALTIME, &ts[0]);
        ts[1] = ts[0];
        ::futimens(fd, ts);  // best effort
    }

    // Refresh the mtime of a hit (LRU by mtime), at most once a second.
    void touch(const Opened &e) const {
        struct timespec now;
        ::clock_gettime(CLOCK_REALTIME, &now);
        if (now.tv_sec - e.st.st_mtim.tv_sec >= 1) stamp(e.fd.get());
    }

    static std::string in_the_way(const std::string &name) {
        return "something that is not a cache file (a directory?) is in the way of the cache file " + name +
               ": this key is not written (other keys are unaffected)";
    }

    struct Temp {
        std::string name;
        Fd fd;
    };

    // A fresh temp file for an entry, already `bytes` long (sparse), so that
    // every directory scan counts the write in flight at its final size.
    Temp create_temp(const std::string &name, uint64_t bytes) {
        Temp t{name + ".tmp." + posix::random_hex(8), {}};
        t.fd.reset(::openat(dir_.get(), t.name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
        if (!t.fd) posix::throw_errno("cannot create a temp file in the cache directory", errno);
        try {
            if (::fchmod(t.fd.get(), 0600) != 0) posix::throw_errno("cannot chmod a temp file", errno);
            if (::ftruncate(t.fd.get(), off_t(bytes)) != 0) posix::throw_errno("cannot size a temp file", errno);
        } catch (...) {
            ::unlinkat(dir_.get(), t.name.c_str(), 0);
            throw;
        }
        return t;
    }

    // Write the header and value into a temp file of create_temp (the caller
    // removes the file on failure).
    void fill_temp(Fd fd, uint64_t expiry, std::string_view value) {
        auto header = filefmt::encode_header(expiry);
        posix::write_full(fd.get(), header.data(), header.size(), "cannot write a cache file");
        posix::write_full(fd.get(), value.data(), value.size(), "cannot write a cache file");
        stamp(fd.get());
        if (opt_.fsync && ::fdatasync(fd.get()) != 0) posix::throw_errno("fdatasync failed", errno);
        int rc = ::close(fd.release());
        if (rc != 0 && errno != EINTR) posix::throw_errno("cannot close a cache file", errno);
    }

    // ---- The entry/byte estimate, limits and eviction ----------------------
    //
    // The view of a write = the estimate (the last scan, entries and every
    // file's bytes, temp files included, plus this process's changes since)
    // + this process's writes in flight + the write itself. A write proceeds
    // only when its view stays within 90 % of both limits, evicting down to
    // 70 % first when it would not. A large write takes that view from a
    // fresh scan under the directory lock and creates its (full-size) temp
    // file before releasing it, so concurrent large writers of all processes
    // see each other. See docs/l2.md for the bound this gives.

    void account(uint64_t add_entries, uint64_t sub_entries, uint64_t add_bytes, uint64_t sub_bytes) {
        std::lock_guard<std::mutex> g(est_mu_);
        est_entries_ = est_entries_ + add_entries - std::min(est_entries_ + add_entries, sub_entries);
        est_bytes_ = est_bytes_ + add_bytes - std::min(est_bytes_ + add_bytes, sub_bytes);
    }

    // A write of this process between its reservation and its rename (or
    // failure): in every view of this process, and known by its temp name so
    // a scan does not count its temp file twice.
    struct InflightWrite {
        uint64_t entries = 0;
        uint64_t bytes = 0;
    };
    struct Inflight {
        FileBackend &b;
        const std::string &tmp;
        ~Inflight() {
            std::lock_guard<std::mutex> g(b.est_mu_);
            auto it = b.inflight_.find(tmp);
            if (it == b.inflight_.end()) return;
            b.inflight_entries_ -= it->second.entries;
            b.inflight_bytes_ -= it->second.bytes;
            b.inflight_.erase(it);
        }
    };

    // Other processes' writes are only seen by a scan: rescan when the
    // estimate is older than rescan_interval, or when this process has added
    // kRescanPct of a limit since the last scan (so each process's unseen
    // additions stay below that share plus one small write).
    bool estimate_stale() const {
        return SteadyClock::now() - last_scan_ > opt_.rescan_interval ||
               added_entries_ >= std::max<uint64_t>(1, pct_of(cfg_.max_entries, kRescanPct)) ||
               added_bytes_ >= std::max<uint64_t>(1, pct_of(cfg_.max_bytes, kRescanPct));
    }

    // Bytes of a scan: entries plus temp files, except this process's own
    // writes in flight (already in the view).
    uint64_t scanned_bytes(const filedir::Scan &s) const {
        uint64_t bytes = s.bytes;
        for (const auto &t : s.temps)
            if (inflight_.find(t.name) == inflight_.end()) bytes += t.size;
        return bytes;
    }

    void adopt_scan(uint64_t entries, uint64_t bytes) {
        est_entries_ = entries;
        est_bytes_ = bytes;
        last_scan_ = SteadyClock::now();
        added_entries_ = added_bytes_ = 0;
    }

    void break_stale_locks(const filedir::Scan &s, int64_t now) {
        for (const auto &l : s.lock_files) {
            try {
                filelock::break_if_stale(dir_.get(), l, now, milliseconds(0));
            } catch (const Error &) {  // raced into something else: left to its own calls
            }
        }
    }

    void rescan_locked(bool break_locks) {
        filedir::Scan s = filedir::scan(dir_.get(), real_now_s());
        adopt_scan(s.entries.size(), scanned_bytes(s));
        if (break_locks) break_stale_locks(s, now_ms());
    }

    bool fits(uint64_t entries, uint64_t bytes, uint64_t new_entries, uint64_t new_bytes, uint64_t pct) const {
        return entries + inflight_entries_ + new_entries <= pct_of(cfg_.max_entries, pct) &&
               bytes + inflight_bytes_ + new_bytes <= pct_of(cfg_.max_bytes, pct);
    }

    // Reserve room for a write that adds `new_entries` (0 or 1) entries and a
    // file of `new_bytes` (the file it replaces stays counted until the
    // rename), and create its temp file. A cache too full even after
    // eviction is this write's trouble: a KeyFault (CACHEKIT_EBUSY).
    Temp reserve(const std::string &name, uint64_t new_entries, uint64_t new_bytes, Deadline deadline) {
        std::lock_guard<std::mutex> g(est_mu_);
        const bool large = new_bytes >= std::max<uint64_t>(1, pct_of(cfg_.max_bytes, kLargeWritePct));
        Fd dir_locked;
        if (large) {
            dir_locked = dir_lock(deadline);
            rescan_locked(false);
        } else if (estimate_stale()) {
            rescan_locked(false);
        }
        if (!fits(est_entries_, est_bytes_, new_entries, new_bytes, 90)) {
            if (!dir_locked) dir_locked = dir_lock(deadline);
            evict_locked(name, new_entries, new_bytes, deadline);
            if (!fits(est_entries_, est_bytes_, new_entries, new_bytes, 90))
                fail_key(CACHEKIT_EBUSY,
                         "the file cache is full: " + std::to_string(est_entries_ + inflight_entries_) +
                             " entries and " + std::to_string(est_bytes_ + inflight_bytes_) +
                             " bytes (limits " + std::to_string(cfg_.max_entries) + " / " +
                             std::to_string(cfg_.max_bytes) + ", writes stop at 90 %) and eviction could not make "
                             "room for " + std::to_string(new_bytes) + " more bytes; not written");
        }
        Temp t = create_temp(name, new_bytes);  // under the directory lock when large
        inflight_.emplace(t.name, InflightWrite{new_entries, new_bytes});
        inflight_entries_ += new_entries;
        inflight_bytes_ += new_bytes;
        added_entries_ += new_entries;
        added_bytes_ += new_bytes;
        return t;
    }

    // An exclusive flock on the cache directory, through a descriptor of its
    // own (flock belongs to the open file description: one per use, so a
    // forked child holding an inherited descriptor never shares it). No lock
    // file: nothing a stranger could plant under a name.
    Fd dir_lock(Deadline deadline) {
        Fd fd(::openat(dir_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!fd) posix::throw_errno("cannot open the cache directory to lock it", errno);
        posix::flock_or_timeout(fd.get(), LOCK_EX, std::max(cfg_.lock_timeout, kDirLockWait), deadline,
                                "the cache directory");
        return fd;
    }

    // Under the directory lock (held by the caller): rescan, remove expired
    // and corrupt entries, then the oldest by mtime until the write fits in
    // 70 % of both limits. The entry being written is never evicted for itself.
    void evict_locked(const std::string &keep, uint64_t new_entries, uint64_t new_bytes, Deadline deadline) {
        filedir::Scan s = filedir::scan(dir_.get(), real_now_s());
        uint64_t entries = s.entries.size(), bytes = scanned_bytes(s);
        struct Candidate {
            const filedir::Entry *e;
            bool dead;  // expired or corrupt
        };
        std::vector<Candidate> order;
        order.reserve(s.entries.size());
        int64_t now = now_ms();
        for (const auto &ent : s.entries) {
            if (ent.name == keep) continue;
            bool dead = false;
            Fd fd(::openat(dir_.get(), ent.name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
            if (fd) {
                char hdr[filefmt::kHeaderSize];
                size_t n = posix::pread_full(fd.get(), hdr, sizeof hdr, 0);
                auto v = filefmt::classify(hdr, n, now, nullptr);
                dead = v == filefmt::Verdict::MissExpired || v == filefmt::Verdict::Corrupt;
            }
            order.push_back({&ent, dead});
        }
        std::sort(order.begin(), order.end(), [](const Candidate &a, const Candidate &b) {
            if (a.dead != b.dead) return a.dead;
            if (a.e->mtime.tv_sec != b.e->mtime.tv_sec) return a.e->mtime.tv_sec < b.e->mtime.tv_sec;
            if (a.e->mtime.tv_nsec != b.e->mtime.tv_nsec) return a.e->mtime.tv_nsec < b.e->mtime.tv_nsec;
            return a.e->name < b.e->name;
        });
        for (const auto &c : order) {
            if (fits(entries, bytes, new_entries, new_bytes, 70) && !c.dead) break;
            if (deadline.passed()) break;
            Opened e;
            try {
                e = open_entry(c.e->name);
            } catch (const KeyFault &) {  // one unreadable file: skip it
                continue;
            }
            if (e.kind != Opened::Regular) continue;
            // Never wait for a busy entry during eviction: skip it.
            if (!posix::flock_for(e.fd.get(), LOCK_EX, milliseconds(0))) continue;
            if (!posix::same_file_at(e.fd.get(), dir_.get(), c.e->name)) continue;
            if (::unlinkat(dir_.get(), c.e->name.c_str(), 0) != 0) continue;
            entries -= 1;
            bytes -= std::min(bytes, uint64_t(e.st.st_size));
        }
        adopt_scan(entries, bytes);
        break_stale_locks(s, now);
    }

    // fork(): est_mu_ is taken before it (its holders wait on no other
    // participant's lock; an eviction in progress finishes first). In the
    // child the writes other threads had reserved never finish: their
    // reservations go (the old table is left behind, not freed).
    void before_fork() noexcept override { est_mu_.lock(); }
    void after_fork_parent() noexcept override { est_mu_.unlock(); }
    void after_fork_child() noexcept override {
        new (&inflight_) decltype(inflight_)();
        inflight_entries_ = 0;
        inflight_bytes_ = 0;
        new (&est_mu_) std::mutex();
    }

    FileConfig cfg_;
    FileOptions opt_;
    Fd dir_;
    std::mutex est_mu_;  // the estimate; also serialises eviction in this process
    uint64_t est_entries_ = 0;
    uint64_t est_bytes_ = 0;
    uint64_t added_entries_ = 0;  // reserved by this process since the last scan
    uint64_t added_bytes_ = 0;
    std::unordered_map<std::string, InflightWrite> inflight_;  // by temp file name
    uint64_t inflight_entries_ = 0;
    uint64_t inflight_bytes_ = 0;
    SteadyClock::time_point last_scan_{};
};

}  // namespace

std::unique_ptr<Backend> open_file(const FileConfig &config, const FileOptions &options) {
    return std::make_unique<FileBackend>(config, options);
}

std::unique_ptr<Backend> open_file(const FileConfig &config) { return open_file(config, FileOptions{}); }

}  // namespace cachekit::l2
