#include "cltrace/cachesim/cache.h"

#include <algorithm>

namespace cltrace::cachesim {

CacheTags::CacheTags(uint32_t sets, uint32_t ways, Replacement policy, uint64_t seed)
    : sets_(sets), assoc_(ways), policy_(policy), rng_(seed), ways_(size_t(sets) * ways) {}

int CacheTags::victimByPolicy(const Way* set) {
  if (policy_ == Replacement::Random) {
    uint32_t candidates = 0;
    for (uint32_t w = 0; w < assoc_; ++w)
      if (!(set[w].flags & kPending)) ++candidates;
    if (candidates == 0) return -1;
    uint64_t pick = rng_.below(candidates);
    for (uint32_t w = 0; w < assoc_; ++w) {
      if (set[w].flags & kPending) continue;
      if (pick-- == 0) return static_cast<int>(w);
    }
    return -1;
  }
  int best = -1;
  for (uint32_t w = 0; w < assoc_; ++w) {
    const Way& i = set[w];
    if (i.flags & kPending) continue;
    if (best < 0) {
      best = static_cast<int>(w);
      continue;
    }
    const Way& b = set[best];
    bool better = false;
    switch (policy_) {
      case Replacement::LRU: better = i.lastUse < b.lastUse; break;
      case Replacement::MRU: better = i.lastUse > b.lastUse; break;
      case Replacement::LFU: better = i.uses < b.uses || (i.uses == b.uses && i.lastUse < b.lastUse); break;
      case Replacement::MFU: better = i.uses > b.uses || (i.uses == b.uses && i.lastUse < b.lastUse); break;
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
    if (s[w].flags & kPending) best = std::min(best, s[w].fillCycle);
  return best;
}

}  // namespace cltrace::cachesim
