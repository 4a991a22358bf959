// The tag store of one set-associative cache with its replacement policy.
//
// Each way holds a line address (tag), valid/dirty/pending flags, and replacement data (time
// of last use, use count). A pending way has been allocated by a miss whose data has not
// arrived yet; it is never chosen as a victim.
//
// Victim choice: the lowest-numbered invalid way if there is one; otherwise, among the ways
// that are not pending:
//   LRU     least recently used          MRU  most recently used
//   LFU     fewest uses (ties: LRU)      MFU  most uses (ties: LRU)
//   random  uniform (seeded generator)
// A fill counts as one use; every later hit adds one.
#pragma once

#include <cstdint>
#include <vector>

#include "cltrace/cachesim/config.h"
#include "cltrace/cachesim/rng.h"

namespace cltrace::cachesim {

class CacheTags {
 public:
  static constexpr uint64_t kNoLine = ~uint64_t(0);

  CacheTags(uint32_t sets, uint32_t ways, Replacement policy, uint64_t seed);

  uint32_t sets() const { return sets_; }
  uint32_t ways() const { return ways_; }

  // Way holding `line` in `set` (valid or pending), or -1.
  int find(uint32_t set, uint64_t line) const {
    const uint64_t* t = &tags_[size_t(set) * ways_];
    if (ways_ <= 64) {  // branch-free scan: a line is in at most one way
      uint64_t match = 0;
      for (uint32_t w = 0; w < ways_; ++w) match |= uint64_t(t[w] == line) << w;
      return match == 0 ? -1 : __builtin_ctzll(match);
    }
    for (uint32_t w = 0; w < ways_; ++w)
      if (t[w] == line) return static_cast<int>(w);
    return -1;
  }

  // Records a use of a way (hit) for the replacement policy.
  void touch(uint32_t set, int way) {
    size_t i = index(set, way);
    lastUse_[i] = ++clock_;
    ++uses_[i];
  }

  // Way to allocate for a new line in `set`, or -1 when every way is pending.
  int victim(uint32_t set) {
    const size_t base = size_t(set) * ways_;
    for (uint32_t w = 0; w < ways_; ++w)
      if (tags_[base + w] == kNoLine) return static_cast<int>(w);
    if (policy_ != Replacement::LRU) return victimByPolicy(base);
    int best = -1;
    uint64_t oldest = ~uint64_t(0);
    for (uint32_t w = 0; w < ways_; ++w) {
      if (!(flags_[base + w] & kPending) && lastUse_[base + w] < oldest) {
        oldest = lastUse_[base + w];
        best = static_cast<int>(w);
      }
    }
    return best;
  }

  struct Evicted {
    bool valid = false;
    bool dirty = false;
    uint64_t line = kNoLine;
  };
  // Puts `line` into `way` (counts as a use) and returns what was there.
  Evicted install(uint32_t set, int way, uint64_t line, bool pending, bool dirty) {
    size_t i = index(set, way);
    Evicted e;
    e.valid = tags_[i] != kNoLine;
    e.dirty = e.valid && (flags_[i] & kDirty);
    e.line = tags_[i];
    tags_[i] = line;
    lastUse_[i] = ++clock_;
    uses_[i] = 1;
    flags_[i] = static_cast<uint8_t>((pending ? kPending : 0) | (dirty ? kDirty : 0));
    fillCycle_[i] = 0;
    return e;
  }

  bool pending(uint32_t set, int way) const { return flags_[index(set, way)] & kPending; }
  bool dirty(uint32_t set, int way) const { return flags_[index(set, way)] & kDirty; }
  void setDirty(uint32_t set, int way) { flags_[index(set, way)] |= kDirty; }
  // Data arrived: the way becomes an ordinary valid line.
  void fill(uint32_t set, int way) { flags_[index(set, way)] &= static_cast<uint8_t>(~kPending); }
  uint64_t fillCycle(uint32_t set, int way) const { return fillCycle_[index(set, way)]; }
  void setFillCycle(uint32_t set, int way, uint64_t cycle) { fillCycle_[index(set, way)] = cycle; }
  // Earliest fill cycle among the pending ways of `set` (for retries when the set is full).
  uint64_t earliestFill(uint32_t set) const;
  uint64_t line(uint32_t set, int way) const { return tags_[index(set, way)]; }

 private:
  static constexpr uint8_t kPending = 1;
  static constexpr uint8_t kDirty = 2;
  size_t index(uint32_t set, int way) const { return size_t(set) * ways_ + size_t(way); }
  int victimByPolicy(size_t base);  // every policy but LRU, all ways valid

  uint32_t sets_;
  uint32_t ways_;
  Replacement policy_;
  Rng rng_;
  uint64_t clock_ = 0;
  std::vector<uint64_t> tags_;  // kNoLine = invalid
  std::vector<uint64_t> lastUse_;
  std::vector<uint32_t> uses_;
  std::vector<uint8_t> flags_;
  std::vector<uint64_t> fillCycle_;
};

}  // namespace cltrace::cachesim
