// The tag store of one set-associative cache with its replacement policy.
//
// Each way holds a line address (tag), valid/dirty/pending flags, and replacement data (time
// of last use, use count for LFU/MFU). A pending way has been allocated by a miss whose data has not
// arrived yet; it is never chosen as a victim.
//
// Victim choice: the lowest-numbered invalid way if there is one; otherwise, among the ways
// that are not pending:
//   LRU     least recently used          MRU  most recently used
//   LFU     fewest uses (ties: LRU)      MFU  most uses (ties: LRU)
//   random  uniform (seeded generator)
// A fill counts as one use; every later hit adds one.
#pragma once

#include <algorithm>
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
  uint32_t ways() const { return assoc_; }

  // Way holding `line` in `set` (valid or pending), or -1.
  int find(uint32_t set, uint64_t line) const {
    const uint64_t* t = tags(set);
    if (assoc_ == 4) {  // the 16 KiB presets: four compares, no loop
      const uint64_t match = uint64_t(t[0] == line) | uint64_t(t[1] == line) << 1 | uint64_t(t[2] == line) << 2 |
                             uint64_t(t[3] == line) << 3;
      return match == 0 ? -1 : __builtin_ctzll(match);
    }
    return wayWhere(assoc_, [t, line](uint32_t w) { return t[w] == line; });
  }

  // Records a use of a way (hit) for the replacement policy.
  void touch(uint32_t set, int way) {
    uint64_t& s = stamps(set)[way];
    s = (s & kPendingBit) | ++clock_;
    if (countsUses_) ++cold(set, way).uses;
  }

  // Way to allocate for a new line in `set`, or -1 when every way is pending.
  int victim(uint32_t set) {
    const uint64_t* t = tags(set);
    const uint64_t* s = stamps(set);
    if (policy_ == Replacement::LRU && assoc_ <= 64 && clock_ < kPackedClockLimit) {
      // One pass over the keys (lastUse << 6 | way), a pending way's key being ~0. Nothing
      // invalidates a way, so an invalid way still has lastUse 0 while valid ways have distinct
      // lastUse >= 1: the smallest key is the lowest-numbered invalid way if there is one, else
      // the least recently used way that is not pending. No branch on the data (which way wins
      // is unpredictable). (The pending bit, bit 63, is shifted out of the key.)
      uint64_t best = ~uint64_t(0);
      for (uint32_t w = 0; w < assoc_; ++w) best = std::min(best, (s[w] << 6 | w) | pendingMask(s[w]));
      return best == ~uint64_t(0) ? -1 : static_cast<int>(best & 63);
    }
    int free = wayWhere(assoc_, [t](uint32_t w) { return t[w] == kNoLine; });
    if (free >= 0) return free;
    if (policy_ != Replacement::LRU) return victimByPolicy(set);
    // Least recently used way that is not pending. Valid ways have distinct lastUse values
    // below ~0, and a pending way's key is ~0, so it is never taken. Written without branches
    // on the data: which way is oldest, or pending, is unpredictable.
    uint64_t oldest = ~uint64_t(0);
    for (uint32_t w = 0; w < assoc_; ++w) oldest = std::min(oldest, s[w] | pendingMask(s[w]));
    if (oldest == ~uint64_t(0)) return -1;
    return wayWhere(assoc_, [s, oldest](uint32_t w) { return s[w] == oldest; });
  }

  struct Evicted {
    bool valid = false;
    bool dirty = false;
    uint64_t line = kNoLine;
  };
  // Puts `line` into `way` (counts as a use) and returns what was there.
  Evicted install(uint32_t set, int way, uint64_t line, bool pending, bool dirty) {
    uint64_t& t = tags(set)[way];
    Cold& c = cold(set, way);
    Evicted e;
    e.valid = t != kNoLine;
    e.dirty = e.valid && c.dirty;
    e.line = t;
    t = line;
    stamps(set)[way] = ++clock_ | (pending ? kPendingBit : 0);
    c = Cold{0, 1, dirty};
    return e;
  }

  bool pending(uint32_t set, int way) const { return stamps(set)[way] >> 63; }
  bool dirty(uint32_t set, int way) const { return cold(set, way).dirty; }
  void setDirty(uint32_t set, int way) { cold(set, way).dirty = true; }
  // Data arrived: the way becomes an ordinary valid line.
  void fill(uint32_t set, int way) { stamps(set)[way] &= ~kPendingBit; }
  uint64_t fillCycle(uint32_t set, int way) const { return cold(set, way).fillCycle; }
  void setFillCycle(uint32_t set, int way, uint64_t cycle) { cold(set, way).fillCycle = cycle; }
  // Earliest fill cycle among the pending ways of `set` (for retries when the set is full).
  uint64_t earliestFill(uint32_t set) const;
  uint64_t line(uint32_t set, int way) const { return tags(set)[way]; }

 private:
  static constexpr uint64_t kPackedClockLimit = uint64_t{1} << 57;  // lastUse << 6 stays below ~0
  static constexpr uint64_t kPendingBit = uint64_t{1} << 63;
  // What a hit needs sits in one block per set, aligned to host cache lines: the set's tags,
  // then its stamps (time of last use, with the pending flag in bit 63). With 4 ways a block
  // is one 64-byte host line, so a request touches one line of tag state. The rest of a way
  // (fill cycle, use count, dirty flag) is read on misses and fills only.
  struct alignas(64) HostLine {
    uint64_t word[8];
  };
  struct Cold {
    uint64_t fillCycle = 0;
    uint32_t uses = 0;  // LFU and MFU only
    bool dirty = false;
  };
  static uint64_t pendingMask(uint64_t stamp) { return uint64_t(0) - (stamp >> 63); }
  // Lowest-numbered way w < ways satisfying `pred(w)`, or -1. Up to 64 ways the scan has no
  // data-dependent branch (which way matches is unpredictable).
  template <typename Pred>
  static int wayWhere(uint32_t ways, Pred pred) {
    if (ways <= 64) {
      uint64_t match = 0;
      for (uint32_t w = 0; w < ways; ++w) match |= uint64_t(pred(w)) << w;
      return match == 0 ? -1 : __builtin_ctzll(match);
    }
    for (uint32_t w = 0; w < ways; ++w)
      if (pred(w)) return static_cast<int>(w);
    return -1;
  }
  uint64_t* tags(uint32_t set) { return blocks_[0].word + size_t(set) * blockWords_; }
  const uint64_t* tags(uint32_t set) const { return blocks_[0].word + size_t(set) * blockWords_; }
  uint64_t* stamps(uint32_t set) { return tags(set) + assoc_; }
  const uint64_t* stamps(uint32_t set) const { return tags(set) + assoc_; }
  Cold& cold(uint32_t set, int way) { return cold_[size_t(set) * assoc_ + size_t(way)]; }
  const Cold& cold(uint32_t set, int way) const { return cold_[size_t(set) * assoc_ + size_t(way)]; }
  int victimByPolicy(uint32_t set);  // every policy but LRU, all ways valid

  uint32_t sets_;
  uint32_t assoc_;
  Replacement policy_;
  bool countsUses_;  // LFU or MFU
  Rng rng_;
  uint64_t clock_ = 0;
  size_t blockWords_;             // 2 * assoc_ rounded up to whole host lines
  std::vector<HostLine> blocks_;  // set s's block starts at word s * blockWords_
  std::vector<Cold> cold_;        // set-major: the ways of set s are [s * assoc_, (s + 1) * assoc_)
};

}  // namespace cltrace::cachesim
