// A W-TinyLFU cache for H2, written here after Caffeine's published design (Einziger,
// Friedman, Manes: "TinyLFU: A Highly Efficient Cache Admission Policy"): a window LRU
// of 1% of the budget in front of a segmented LRU main space (20% probation, 80%
// protected), and a count-min sketch of 4-bit counters with aging (every counter halved
// after 10 x capacity increments) deciding whether the window's victim may replace the
// main space's victim. Byte-weighted with L1's charge, so ratios compare at equal memory.
// Single-threaded: it exists to measure hit ratios, not speed.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "l1/entry.hpp"
#include <functional>

namespace cachekit::benchdata {

class FrequencySketch {
public:
    explicit FrequencySketch(size_t capacity_entries) {
        size_t width = 64;
        while (width < capacity_entries) width <<= 1;
        mask_ = width - 1;
        table_.assign(4 * width, 0);
        sample_ = 10 * capacity_entries;
    }

    void increment(uint64_t hash) {
        bool added = false;
        for (int row = 0; row < 4; ++row) {
            uint8_t &c = table_[index(hash, row)];
            if (c < 15) { ++c; added = true; }
        }
        if (added && ++additions_ >= sample_) age();
    }

    unsigned frequency(uint64_t hash) const {
        unsigned f = 15;
        for (int row = 0; row < 4; ++row) f = std::min<unsigned>(f, table_[index(hash, row)]);
        return f;
    }

private:
    size_t index(uint64_t hash, int row) const {
        uint64_t h = (hash ^ (0x9E3779B97F4A7C15ull * uint64_t(row + 1))) * 0xff51afd7ed558ccdull;
        return size_t(row) * (mask_ + 1) + size_t((h >> 29) & mask_);
    }
    void age() {  // halve every counter: old popularity fades
        for (uint8_t &c : table_) c >>= 1;
        additions_ /= 2;
    }

    std::vector<uint8_t> table_;
    size_t mask_ = 0, sample_ = 0, additions_ = 0;
};

class WTinyLfu {
public:
    WTinyLfu(uint64_t max_bytes, size_t avg_charge, size_t value_size)
        : value_size_(value_size), window_max_(max_bytes / 100), protected_max_((max_bytes - max_bytes / 100) * 8 / 10),
          main_max_(max_bytes - max_bytes / 100), sketch_(size_t(max_bytes / avg_charge)) {}

    // A read; true on a hit. A miss is followed by put() (read-through), as in H1.
    bool get(std::string_view key) {
        uint64_t h = hash(key);
        sketch_.increment(h);
        auto it = map_.find(std::string(key));
        if (it == map_.end()) return false;
        Node &n = *it->second;
        if (n.seg == Window) {
            window_.splice(window_.begin(), window_, it->second);
        } else if (n.seg == Protected) {
            protected_.splice(protected_.begin(), protected_, it->second);
        } else {  // probation -> protected; protected's overflow goes back to probation
            protected_.splice(protected_.begin(), probation_, it->second);
            n.seg = Protected;
            probation_bytes_ -= n.charge;
            protected_bytes_ += n.charge;
            while (protected_bytes_ > protected_max_) {
                auto last = std::prev(protected_.end());
                last->seg = Probation;
                protected_bytes_ -= last->charge;
                probation_bytes_ += last->charge;
                probation_.splice(probation_.begin(), protected_, last);
            }
        }
        return true;
    }

    void put(std::string_view key) {
        if (map_.count(std::string(key))) return;
        window_.push_front(Node{std::string(key), l1::entry_charge(key.size(), value_size_), Window,
                                hash(key)});
        map_[window_.front().key] = window_.begin();
        window_bytes_ += window_.front().charge;
        while (window_bytes_ > window_max_) {
            auto cand = std::prev(window_.end());
            window_bytes_ -= cand->charge;
            cand->seg = Probation;
            probation_.splice(probation_.begin(), window_, cand);
            probation_bytes_ += cand->charge;
            admit_or_evict();
        }
    }

private:
    static uint64_t hash(std::string_view key) { return std::hash<std::string_view>{}(key); }

    enum Segment : uint8_t { Window, Probation, Protected };
    struct Node {
        std::string key;
        size_t charge;
        Segment seg;
        uint64_t hash;
    };
    using List = std::list<Node>;

    // The candidate (just moved to probation's head) against probation's tail while the
    // main space is over budget: the less frequent of the two leaves.
    void admit_or_evict() {
        while (probation_bytes_ + protected_bytes_ > main_max_ && !probation_.empty()) {
            auto cand = probation_.begin();
            auto victim = std::prev(probation_.end());
            if (cand == victim) { evict(probation_, victim); break; }
            if (sketch_.frequency(cand->hash) > sketch_.frequency(victim->hash)) evict(probation_, victim);
            else { evict(probation_, cand); break; }
        }
    }
    void evict(List &list, List::iterator it) {
        probation_bytes_ -= it->charge;
        map_.erase(it->key);
        list.erase(it);
    }

    size_t value_size_;
    uint64_t window_max_, protected_max_, main_max_;
    uint64_t window_bytes_ = 0, probation_bytes_ = 0, protected_bytes_ = 0;
    List window_, probation_, protected_;
    std::unordered_map<std::string, List::iterator> map_;
    FrequencySketch sketch_;
};

}  // namespace cachekit::benchdata
