#include "cltrace/cachesim/cache.h"

#include <algorithm>

namespace cltrace::cachesim {

CacheTags::CacheTags(uint32_t sets, uint32_t ways, Replacement policy, uint64_t seed)
    : sets_(sets),
      assoc_(ways),
      policy_(policy),
      rng_(seed),
      countsUses_(policy == Replacement::LFU || policy == Replacement::MFU),
      ways_(size_t(sets) * ways),
      fillCycles_(size_t(sets) * ways),
      uses_(countsUses_ ? size_t(sets) * ways : 0) {}

int CacheTags::victimByPolicy(const Way* set) {
  if (policy_ == Replacement::Random) {
    uint32_t candidates = 0;
    for (uint32_t w = 0; w < assoc_; ++w)
      if (!(set[w].meta & kPending)) ++candidates;
    if (candidates == 0) return -1;
    uint64_t pick = rng_.below(candidates);
    for (uint32_t w = 0; w < assoc_; ++w) {
      if (set[w].meta & kPending) continue;
      if (pick-- == 0) return static_cast<int>(w);
    }
    return -1;
  }
  const uint32_t* uses = countsUses_ ? &uses_[static_cast<size_t>(set - ways_.data())] : nullptr;
  int best = -1;
  for (uint32_t w = 0; w < assoc_; ++w) {
    const Way& i = set[w];
    if (i.meta & kPending) continue;
    if (best < 0) {
      best = static_cast<int>(w);
      continue;
    }
    const Way& b = set[best];
    bool better = false;
    switch (policy_) {
      case Replacement::LRU: better = lastUse(i) < lastUse(b); break;
      case Replacement::MRU: better = lastUse(i) > lastUse(b); break;
      case Replacement::LFU:
        better = uses[w] < uses[best] || (uses[w] == uses[best] && lastUse(i) < lastUse(b));
        break;
      case Replacement::MFU:
        better = uses[w] > uses[best] || (uses[w] == uses[best] && lastUse(i) < lastUse(b));
        break;
      case Replacement::Random: break;
    }
    if (better) best = static_cast<int>(w);
  }
  return best;
}

uint64_t CacheTags::earliestFill(uint32_t set) const {
  uint64_t best = ~uint64_t(0);
  const Way* s = &ways_[size_t(set) * assoc_];
  for (uint32_t w = 0; w < assoc_; ++w)
    if (s[w].meta & kPending) best = std::min(best, fillCycles_[index(set, static_cast<int>(w))]);
  return best;
}

}  // namespace cltrace::cachesim
