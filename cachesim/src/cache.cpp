#include "cltrace/cachesim/cache.h"

#include <algorithm>

namespace cltrace::cachesim {

CacheTags::CacheTags(uint32_t sets, uint32_t ways, Replacement policy, uint64_t seed)
    : sets_(sets),
      assoc_(ways),
      policy_(policy),
      countsUses_(policy == Replacement::LFU || policy == Replacement::MFU),
      rng_(seed),
      blockWords_((size_t(2) * ways + 7) / 8 * 8),
      blocks_(size_t(sets) * blockWords_ / 8),
      cold_(size_t(sets) * ways) {
  for (uint32_t set = 0; set < sets; ++set) std::fill(tags(set), tags(set) + ways, kNoLine);
}

int CacheTags::victimByPolicy(uint32_t set) {
  const uint64_t* s = stamps(set);
  auto isPending = [s](uint32_t w) { return (s[w] >> 63) != 0; };
  auto lastUse = [s](uint32_t w) { return s[w] & ~kPendingBit; };
  if (policy_ == Replacement::Random) {
    uint32_t candidates = 0;
    for (uint32_t w = 0; w < assoc_; ++w)
      if (!isPending(w)) ++candidates;
    if (candidates == 0) return -1;
    uint64_t pick = rng_.below(candidates);
    for (uint32_t w = 0; w < assoc_; ++w) {
      if (isPending(w)) continue;
      if (pick-- == 0) return static_cast<int>(w);
    }
    return -1;
  }
  int best = -1;
  for (uint32_t w = 0; w < assoc_; ++w) {
    if (isPending(w)) continue;
    if (best < 0) {
      best = static_cast<int>(w);
      continue;
    }
    const uint32_t b = static_cast<uint32_t>(best);
    const uint32_t iu = cold(set, static_cast<int>(w)).uses, bu = cold(set, best).uses;
    bool better = false;
    switch (policy_) {
      case Replacement::LRU: better = lastUse(w) < lastUse(b); break;
      case Replacement::MRU: better = lastUse(w) > lastUse(b); break;
      case Replacement::LFU: better = iu < bu || (iu == bu && lastUse(w) < lastUse(b)); break;
      case Replacement::MFU: better = iu > bu || (iu == bu && lastUse(w) < lastUse(b)); break;
      case Replacement::Random: break;
    }
    if (better) best = static_cast<int>(w);
  }
  return best;
}

uint64_t CacheTags::earliestFill(uint32_t set) const {
  uint64_t best = ~uint64_t(0);
  const uint64_t* s = stamps(set);
  for (uint32_t w = 0; w < assoc_; ++w)
    if (s[w] >> 63) best = std::min(best, cold(set, static_cast<int>(w)).fillCycle);
  return best;
}

}  // namespace cltrace::cachesim
