// Workload pieces shared by the L1 benchmarks (l1_bench: B1, B2, H1; h2_bench: H2 and
// the H1 curve): the naive exact LRU baseline at L1's charge, key sets and Zipf traces.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <list>
#include <mutex>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "l1/l1_cache.hpp"
#include "util/buffer.hpp"

namespace cachekit::benchdata {

// ---------------------------------------------------------------- baseline

// Exact LRU: one std::mutex, std::unordered_map, a std::list, copy-out.
class NaiveLru {
public:
    explicit NaiveLru(uint64_t max_bytes) : max_bytes_(max_bytes) {}

    bool get(const std::string &key, cachekit_buf *out) {
        std::lock_guard lock(mu_);
        auto it = map_.find(key);
        if (it == map_.end()) return false;
        lru_.splice(lru_.begin(), lru_, it->second);
        buf_assign(out, it->second->value);
        return true;
    }

    void put(const std::string &key, std::string_view value) {
        std::lock_guard lock(mu_);
        auto it = map_.find(key);
        if (it != map_.end()) {
            bytes_ -= charge(*it->second);
            lru_.erase(it->second);
            map_.erase(it);
        }
        lru_.push_front(Node{key, std::string(value)});
        map_.emplace(key, lru_.begin());
        bytes_ += charge(lru_.front());
        while (bytes_ > max_bytes_ && !lru_.empty()) {
            Node &victim = lru_.back();
            bytes_ -= charge(victim);
            map_.erase(victim.key);
            lru_.pop_back();
        }
    }

private:
    struct Node {
        std::string key, value;
    };
    // The same charge as L1, so hit ratios compare at equal memory.
    static uint64_t charge(const Node &n) { return l1::entry_charge(n.key.size(), n.value.size()); }

    std::mutex mu_;
    std::unordered_map<std::string, std::list<Node>::iterator> map_;
    std::list<Node> lru_;
    uint64_t bytes_ = 0, max_bytes_;
};

inline std::vector<std::string> make_keys(size_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::string> keys;
    keys.reserve(n);
    for (size_t i = 0; i < n; ++i) {
        std::string k = "k" + std::to_string(i) + ":";
        size_t len = 16 + rng() % 49;  // 16..64
        while (k.size() < len) k.push_back(char('a' + rng() % 26));
        k.resize(len);
        keys.push_back(std::move(k));
    }
    return keys;
}

// Zipf(s) ranks over n items, shuffled onto key indexes so hot keys are not
// the first ones created.
inline std::vector<uint32_t> zipf_sequence(size_t n, double s, size_t len, uint64_t seed) {
    std::vector<double> cdf(n);
    double sum = 0;
    for (size_t i = 0; i < n; ++i) cdf[i] = (sum += 1.0 / std::pow(double(i + 1), s));
    std::vector<uint32_t> perm(n);
    for (size_t i = 0; i < n; ++i) perm[i] = uint32_t(i);
    std::mt19937_64 rng(seed);
    for (size_t i = n - 1; i > 0; --i) std::swap(perm[i], perm[rng() % (i + 1)]);
    std::vector<uint32_t> seq(len);
    for (size_t i = 0; i < len; ++i) {
        double u = double(rng() >> 11) * 0x1.0p-53 * sum;
        size_t rank = size_t(std::lower_bound(cdf.begin(), cdf.end(), u) - cdf.begin());
        seq[i] = perm[std::min(rank, n - 1)];
    }
    return seq;
}

}  // namespace cachekit::benchdata
