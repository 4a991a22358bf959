// Reuse distance (stack distance) at line granularity in O(log n) per access.
//
// The distance of an access is the number of distinct lines touched since the previous access
// to the same line (infinite for the first access). Method (Bennett-Kruskal style): every line
// keeps the timestamp of its latest access; a bitmap over timestamps marks the latest access of
// each line, and the distance is the number of marks after the line's previous timestamp.
// Counting uses popcounts for nearby timestamps and a Fenwick tree over 64-bit bitmap words
// for distant ones. When the timestamps run out, the live marks are renumbered 0..n-1
// (compaction), so memory is proportional to the number of distinct lines, not to the length
// of the trace.
//
// The latest timestamps live in blocks of 16 consecutive lines, one 64-byte block per cache
// line of the host, found through a hash table keyed by line / 16. Kernels touch buffers
// densely, so a footprint of n lines costs ~4.5 bytes per line (it stays in the host's L2 for
// footprints of a few hundred thousand lines, where a table keyed by line would not); a
// fully sparse footprint costs ~120 bytes per line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cltrace::cachesim {

// Portable popcount (the x86-64 baseline has no POPCNT instruction; the builtin then calls
// a slow library routine).
inline uint32_t popcount64(uint64_t x) {
  x = x - ((x >> 1) & 0x5555555555555555ull);
  x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
  return static_cast<uint32_t>((x * 0x0101010101010101ull) >> 56);
}

class ReuseDistanceTracker {
 public:
  static constexpr uint64_t kInfinite = ~uint64_t(0);

  // `initialTimestamps`: size of the timestamp window before the first compaction (rounded up
  // to a multiple of 64, at least 64).
  explicit ReuseDistanceTracker(uint32_t initialTimestamps = 1u << 16);

  // Records an access to `line` and returns its reuse distance (kInfinite on first access).
  uint64_t access(uint64_t line) {
    if (now_ == capacity_) compact();
    uint32_t& latest = stampOf(line);
    uint64_t distance;
    if (latest != 0) {
      uint32_t p = latest - 1;
      distance = marksAfter(p);
      words_[p >> 6] &= ~(uint64_t(1) << (p & 63));
      if ((p >> 6) < (now_ >> 6)) treeAdd(p >> 6, -1);
    } else {
      distance = kInfinite;
      ++live_;
    }
    latest = now_ + 1;
    words_[now_ >> 6] |= uint64_t(1) << (now_ & 63);
    ++now_;
    if ((now_ & 63) == 0) {  // the word just completed joins the tree
      uint32_t w = (now_ >> 6) - 1;
      treeAdd(w, popcount64(words_[w]));
    }
    return distance;
  }

  // Hint: `line` will be accessed soon. Starts loading its hash slot and stamp block so that
  // the wait overlaps other work (it usually sits in its home slot).
  void prefetch(uint64_t line) const {
    size_t slot = homeSlot((line >> kGroupBits) + 1);
    __builtin_prefetch(&keys_[slot]);
    __builtin_prefetch(&blocks_[slot]);
  }

  // Distinct lines seen so far.
  uint64_t distinctLines() const { return live_; }
  // Bytes held by the tracker's tables.
  size_t memoryBytes() const;
  // Number of compactions so far (for tests).
  uint64_t compactions() const { return compactions_; }
  void clear();

 private:
  static constexpr uint32_t kGroupBits = 4;  // 16 lines per block
  struct alignas(64) Block {
    uint32_t stamp[1u << kGroupBits];  // latest timestamp + 1 of each line; 0 = never seen
  };

  // The stamp slot of `line`, creating its block when needed.
  uint32_t& stampOf(uint64_t line) {
    const uint64_t key = (line >> kGroupBits) + 1;
    size_t slot = findSlot(key);
    if (keys_[slot] != key) {
      keys_[slot] = key;
      if (++groups_ * 5 > keys_.size() * 3) {  // load factor 0.6
        growTable();
        slot = findSlot(key);
      }
    }
    return blocks_[slot].stamp[line & ((1u << kGroupBits) - 1)];
  }

  // Where the probe for `key` (group + 1) starts.
  size_t homeSlot(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> hashShift_) & (keys_.size() - 1);
  }
  // Slot holding `key`, or the empty slot where it goes (linear probing).
  size_t findSlot(uint64_t key) const {
    const size_t mask = keys_.size() - 1;
    size_t i = homeSlot(key);
    while (keys_[i] != 0 && keys_[i] != key) i = (i + 1) & mask;
    return i;
  }

  void treeAdd(uint32_t word, int64_t delta) {
    const size_t n = tree_.size();
    for (size_t i = size_t(word) + 1; i < n; i += i & (~i + 1))
      tree_[i] = static_cast<uint32_t>(int64_t(tree_[i]) + delta);
  }

  uint64_t treePrefix(uint32_t words) const {  // marks in words [0, words)
    uint64_t sum = 0;
    for (size_t i = words; i > 0; i -= i & (~i + 1)) sum += tree_[i];
    return sum;
  }

  // Marks in (stamp, now): the distinct lines touched since `stamp`.
  uint64_t marksAfter(uint32_t stamp) const {
    const uint32_t wp = stamp >> 6;
    const uint32_t wn = now_ >> 6;  // current (incomplete) word; its bits >= now_ are clear
    const uint64_t upToStamp = ~uint64_t(0) >> (63 - (stamp & 63));  // bits 0..stamp&63
    if (wn - wp <= 4) {
      uint64_t n = popcount64(words_[wp] & ~upToStamp);
      for (uint32_t w = wp + 1; w <= wn; ++w) n += popcount64(words_[w]);
      return n;
    }
    // Every mark is older than now_: marks after `stamp` = all marks - marks at or before it.
    return live_ - (treePrefix(wp) + popcount64(words_[wp] & upToStamp));
  }

  void growTable();
  void compact();

  std::vector<uint64_t> keys_;  // group + 1 per slot, 0 = empty; power-of-two size
  std::vector<Block> blocks_;   // parallel to keys_
  uint32_t hashShift_ = 0;      // 64 - log2(table size)
  uint64_t groups_ = 0;         // occupied slots
  uint64_t live_ = 0;           // distinct lines

  // Timeline.
  uint32_t initial_;
  uint32_t capacity_ = 0;        // timestamps available (multiple of 64)
  uint32_t now_ = 0;             // next timestamp
  std::vector<uint64_t> words_;  // bit t set: t is the latest access of some line; one spare word
  std::vector<uint32_t> tree_;   // Fenwick tree (1-based) over popcounts of completed words
  uint64_t compactions_ = 0;
};

}  // namespace cltrace::cachesim
