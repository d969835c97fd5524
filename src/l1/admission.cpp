#include "l1/admission.hpp"

namespace cachekit::l1 {

Admission::Admission(uint64_t max_bytes, unsigned shards, uint64_t charge_guess)
    : window_share_(max_bytes / 100 / shards),
      main_share_(max_bytes / shards - window_share_),
      protected_share_(main_share_ * 8 / 10),
      sketch_(size_t(max_bytes / charge_guess)) {}

void Admission::after_link(Shard &s, uint64_t now) noexcept {
    LruList &window = s.lists[kWindow];
    // The window keeps at least its newest entry, whatever its share.
    while (window.bytes > window_share_ && window.tail != window.head) {
        uint64_t main = s.lists[kProbation].bytes + s.lists[kProtected].bytes;
        if (main + window.tail->charge() > main_share_) break;  // full: the contest decides
        s.move_to(window.tail, kProbation, now);
    }
    demote_protected_overflow(s, now);
}

void Admission::on_probation_hit(Shard &s, Entry *e, uint64_t now) noexcept {
    s.move_to(e, kProtected, now);
    demote_protected_overflow(s, now);
}

void Admission::demote_protected_overflow(Shard &s, uint64_t now) noexcept {
    LruList &prot = s.lists[kProtected];
    while (prot.bytes > protected_share_ && prot.tail != prot.head) s.move_to(prot.tail, kProbation, now);
}

Entry *Admission::contest(Shard &s, Entry *cand, Entry *victim, uint64_t now) noexcept {
    if (sketch_.estimate(cand->hash) > sketch_.estimate(victim->hash)) {
        s.move_to(cand, kProbation, now);
        ++s.counters.admitted;
        return victim;
    }
    ++s.counters.rejected_by_admission;
    return cand;
}

}  // namespace cachekit::l1
