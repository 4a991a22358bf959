#include "cltrace/cachesim/reuse_distance.h"

#include <algorithm>
#include <stdexcept>

namespace cltrace::cachesim {

namespace {

constexpr uint32_t kInitialTableBits = 8;

inline uint32_t roundUp64(uint64_t v) {
  uint64_t r = (v + 63) & ~uint64_t(63);
  if (r > 0x80000000ull) throw std::length_error("reuse distance tracker: too many distinct lines");
  return static_cast<uint32_t>(r);
}

bool cpuHasPopcnt() {
#if CLTRACE_POPCNT_DISPATCH
  __builtin_cpu_init();
  return __builtin_cpu_supports("popcnt");
#else
  return false;
#endif
}

}  // namespace

ReuseDistanceTracker::ReuseDistanceTracker(uint32_t initialTimestamps)
    : initial_(std::max<uint32_t>(64, roundUp64(initialTimestamps))), hasPopcnt_(cpuHasPopcnt()) {
  clear();
}

void ReuseDistanceTracker::clear() {
  keys_.assign(size_t(1) << kInitialTableBits, 0);
  blocks_.assign(keys_.size(), Block{});
  hashShift_ = 64 - kInitialTableBits;
  groups_ = 0;
  live_ = 0;
  capacity_ = initial_;
  now_ = 0;
  words_.assign(capacity_ / 64 + 4, 0);  // + 4: marksAfterWith reads up to 4 words past now_ / 64
  resetCounts();
  compactions_ = 0;
}

size_t ReuseDistanceTracker::memoryBytes() const {
  return keys_.capacity() * sizeof(uint64_t) + blocks_.capacity() * sizeof(Block) +
         words_.capacity() * sizeof(uint64_t) +
         wordCounts_.capacity() * sizeof(WordCounts) + counts_.capacity() * sizeof(CountGroup);
}

void ReuseDistanceTracker::growTable() {
  std::vector<uint64_t> oldKeys = std::move(keys_);
  std::vector<Block> oldBlocks = std::move(blocks_);
  keys_.assign(oldKeys.size() * 2, 0);
  blocks_.assign(keys_.size(), Block{});
  --hashShift_;
  for (size_t i = 0; i < oldKeys.size(); ++i) {
    if (oldKeys[i] == 0) continue;
    size_t slot = findSlot(oldKeys[i]);
    keys_[slot] = oldKeys[i];
    blocks_[slot] = oldBlocks[i];
  }
}

void ReuseDistanceTracker::resetCounts() {
  // Level sizes for capacity_ / 64 words.
  const uint32_t nwords = capacity_ / 64;
  wordCounts_.assign((nwords + 63) / 64, WordCounts{});
  wordCounts_.shrink_to_fit();
  uint32_t groups = 0;
  levels_ = 0;
  for (uint32_t entries = (nwords + 63) / 64;; entries = (entries + 15) / 16) {
    levelBase_[levels_++] = groups;
    groups += (entries + 15) / 16;
    if (entries <= 16) break;
  }
  counts_.assign(groups, CountGroup{});
  counts_.shrink_to_fit();
  // The words old enough are counted; the recent ones join as they age (accessWith).
  for (uint32_t w = 0; inTree(w); ++w) countAdd(w, static_cast<int32_t>(popcount64(words_[w])));
}

void ReuseDistanceTracker::compact() {
  // Rank of each live mark = its new timestamp; order is preserved.
  const uint32_t nwords = capacity_ / 64;
  std::vector<uint32_t> before(nwords);
  uint32_t running = 0;
  for (uint32_t w = 0; w < nwords; ++w) {
    before[w] = running;
    running += popcount64(words_[w]);
  }
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (keys_[i] == 0) continue;
    for (uint32_t& stamp : blocks_[i].stamp) {
      if (stamp == 0) continue;
      uint32_t p = stamp - 1;
      uint64_t below = words_[p >> 6] & ((uint64_t(1) << (p & 63)) - 1);
      stamp = before[p >> 6] + popcount64(below) + 1;
    }
  }
  // New window: 8x the live marks, so the next compaction is >= 7 * live_ accesses away (the
  // bitmap costs 1 byte and the count tree ~0.13 byte per live line, against ~4.5 for the dense
  // table).
  const uint64_t wanted = live_ * 8 + 64 <= 0x80000000ull ? live_ * 8 + 64 : live_ * 2 + 64;
  capacity_ = std::max(initial_, roundUp64(wanted));
  now_ = static_cast<uint32_t>(live_);
  words_.assign(capacity_ / 64 + 4, 0);
  words_.shrink_to_fit();
  for (uint32_t t = 0; t < now_ / 64; ++t) words_[t] = ~uint64_t(0);
  if (now_ & 63) words_[now_ / 64] = (uint64_t(1) << (now_ & 63)) - 1;
  resetCounts();
  ++compactions_;
}

}  // namespace cltrace::cachesim
