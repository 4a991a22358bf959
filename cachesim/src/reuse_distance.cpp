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

}  // namespace

ReuseDistanceTracker::ReuseDistanceTracker(uint32_t initialTimestamps)
    : initial_(std::max<uint32_t>(64, roundUp64(initialTimestamps))) {
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
  words_.assign(capacity_ / 64 + 1, 0);  // + 1: marksAfter may read the word at now_
  tree_.assign(capacity_ / 64 + 1, 0);
  compactions_ = 0;
}

size_t ReuseDistanceTracker::memoryBytes() const {
  return keys_.capacity() * sizeof(uint64_t) + blocks_.capacity() * sizeof(Block) +
         words_.capacity() * sizeof(uint64_t) +
         tree_.capacity() * sizeof(uint32_t);
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
  // bitmap costs 1 byte and the tree half a byte per live line, against ~4.5 for the dense table).
  const uint64_t wanted = live_ * 8 + 64 <= 0x80000000ull ? live_ * 8 + 64 : live_ * 2 + 64;
  capacity_ = std::max(initial_, roundUp64(wanted));
  now_ = static_cast<uint32_t>(live_);
  words_.assign(capacity_ / 64 + 1, 0);
  words_.shrink_to_fit();
  for (uint32_t t = 0; t < now_ / 64; ++t) words_[t] = ~uint64_t(0);
  if (now_ & 63) words_[now_ / 64] = (uint64_t(1) << (now_ & 63)) - 1;
  // Fenwick tree over the completed words, built in linear time.
  tree_.assign(capacity_ / 64 + 1, 0);
  tree_.shrink_to_fit();
  for (uint32_t w = 0; w < now_ / 64; ++w) tree_[w + 1] = 64;
  for (size_t i = 1; i < tree_.size(); ++i) {
    size_t j = i + (i & (~i + 1));
    if (j < tree_.size()) tree_[j] += tree_[i];
  }
  ++compactions_;
}

}  // namespace cltrace::cachesim
