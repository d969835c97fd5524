// A memory L2 whose chosen calls can be held on a latch, to force an
// interleaving instead of timing one (the ordering tests of the cache), and
// which counts its reads. Arm an operation; its next call signals `reached`
// (a read after it has read, so a held read has seen the old state; a write
// or delete before it changes anything) and waits until `release`.
// Optionally every call first sleeps a random few microseconds (the
// stress test's jitter).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <random>
#include <thread>

#include "l2/backend.hpp"
#include "l2/memory_backend.hpp"
#include "cache_test_util.hpp"

namespace ct {

class LatchedBackend final : public cachekit::l2::Backend {
public:
    enum class Op { None, Get, Set, Del, Clear };
    using Deadline = cachekit::l2::Deadline;
    using Ttl = cachekit::l2::Ttl;

    // One held call: wait for reached, then open release.
    struct Latch {
        Gate reached, release;
    };

    // Hold the next call of `op` (one at a time); the latch stays valid until re-armed.
    std::shared_ptr<Latch> arm(Op op) {
        auto latch = std::make_shared<Latch>();
        std::lock_guard lock(mu_);
        armed_op_ = op;
        latch_ = latch;
        return latch;
    }
    void jitter(bool on) { jitter_.store(on); }
    int gets() const { return gets_.load(); }
    cachekit::l2::Backend &inner() { return *inner_; }

    const char *kind() const noexcept override { return "memory"; }
    bool get(std::string_view key, cachekit_buf *out, Deadline d) override {
        wobble();
        gets_.fetch_add(1);
        bool found = inner_->get(key, out, d);
        hold(Op::Get);
        return found;
    }
    void set(std::string_view key, std::string_view value, Ttl ttl, Deadline d) override {
        wobble();
        hold(Op::Set);
        inner_->set(key, value, ttl, d);
        wobble();
    }
    bool del(std::string_view key, Deadline d) override {
        wobble();
        hold(Op::Del);
        bool existed = inner_->del(key, d);
        wobble();
        return existed;
    }
    bool exists(std::string_view key, Deadline d) override { return inner_->exists(key, d); }
    std::optional<Ttl> ttl(std::string_view key, Deadline d) override { return inner_->ttl(key, d); }
    void get_many(const std::vector<std::string_view> &keys, cachekit_buf *outs, std::vector<bool> &found,
                  Deadline d) override {
        inner_->get_many(keys, outs, found, d);
    }
    void set_many(const std::vector<cachekit::l2::KeyValue> &entries, Ttl ttl, Deadline d) override {
        inner_->set_many(entries, ttl, d);
    }
    uint64_t clear(const cachekit::l2::KeySelection &which, Deadline d) override {
        hold(Op::Clear);
        return inner_->clear(which, d);
    }
    std::optional<std::string> lock(std::string_view name, std::chrono::milliseconds hold_for, Deadline d) override {
        return inner_->lock(name, hold_for, d);
    }
    bool unlock(std::string_view name, std::string_view token, Deadline d) override {
        return inner_->unlock(name, token, d);
    }
    cachekit::l2::Health health(Deadline d) override { return inner_->health(d); }

private:
    void hold(Op op) {
        std::shared_ptr<Latch> latch;
        {
            std::lock_guard lock(mu_);
            if (armed_op_ != op) return;
            armed_op_ = Op::None;
            latch = latch_;
        }
        latch->reached.open();
        latch->release.wait();
    }
    void wobble() {
        if (!jitter_.load(std::memory_order_relaxed)) return;
        thread_local std::minstd_rand rng(std::random_device{}());
        const unsigned r = rng() % 8;
        if (r < 4) std::this_thread::yield();
        else if (r == 7) std::this_thread::sleep_for(std::chrono::microseconds(rng() % 200));
    }

    std::unique_ptr<cachekit::l2::Backend> inner_ = cachekit::l2::open_memory();
    std::mutex mu_;
    Op armed_op_ = Op::None;
    std::shared_ptr<Latch> latch_;
    std::atomic<bool> jitter_{false};
    std::atomic<int> gets_{0};
};

}  // namespace ct
