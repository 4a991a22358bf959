#include "cltrace/cachesim/cache.h"

#include <algorithm>

namespace cltrace::cachesim {

CacheTags::CacheTags(uint32_t sets, uint32_t ways, Replacement policy, uint64_t seed)
    : sets_(sets),
      ways_(ways),
      policy_(policy),
      rng_(seed),
      tags_(size_t(sets) * ways, kNoLine),
      lastUse_(tags_.size(), 0),
      uses_(tags_.size(), 0),
      flags_(tags_.size(), 0),
      fillCycle_(tags_.size(), 0) {}

int CacheTags::victimByPolicy(size_t base) {
  if (policy_ == Replacement::Random) {
    uint32_t candidates = 0;
    for (uint32_t w = 0; w < ways_; ++w)
      if (!(flags_[base + w] & kPending)) ++candidates;
    if (candidates == 0) return -1;
    uint64_t pick = rng_.below(candidates);
    for (uint32_t w = 0; w < ways_; ++w) {
      if (flags_[base + w] & kPending) continue;
      if (pick-- == 0) return static_cast<int>(w);
    }
    return -1;
  }
  int best = -1;
  for (uint32_t w = 0; w < ways_; ++w) {
    size_t i = base + w;
    if (flags_[i] & kPending) continue;
    if (best < 0) {
      best = static_cast<int>(w);
      continue;
    }
    size_t b = base + size_t(best);
    bool better = false;
    switch (policy_) {
      case Replacement::LRU: better = lastUse_[i] < lastUse_[b]; break;
      case Replacement::MRU: better = lastUse_[i] > lastUse_[b]; break;
      case Replacement::LFU:
        better = uses_[i] < uses_[b] || (uses_[i] == uses_[b] && lastUse_[i] < lastUse_[b]);
        break;
      case Replacement::MFU:
        better = uses_[i] > uses_[b] || (uses_[i] == uses_[b] && lastUse_[i] < lastUse_[b]);
        break;
      case Replacement::Random: break;
    }
    if (better) best = static_cast<int>(w);
  }
  return best;
}

uint64_t CacheTags::earliestFill(uint32_t set) const {
  uint64_t best = ~uint64_t(0);
  const size_t base = size_t(set) * ways_;
  for (uint32_t w = 0; w < ways_; ++w)
    if (flags_[base + w] & kPending) best = std::min(best, fillCycle_[base + w]);
  return best;
}

}  // namespace cltrace::cachesim
