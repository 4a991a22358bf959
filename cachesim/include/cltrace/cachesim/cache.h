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
    return wayWhere(&ways_[size_t(set) * assoc_], [line](const Way& x) { return x.tag == line; });
  }

  // Records a use of a way (hit) for the replacement policy.
  void touch(uint32_t set, int way) {
    Way& x = at(set, way);
    x.lastUse = ++clock_;
    ++x.uses;
  }

  // Way to allocate for a new line in `set`, or -1 when every way is pending.
  int victim(uint32_t set) {
    const Way* s = &ways_[size_t(set) * assoc_];
    if (policy_ == Replacement::LRU && assoc_ <= 64 && clock_ < kPackedClockLimit) {
      // One pass over the keys (lastUse << 6 | way), a pending way's key being ~0. Nothing
      // invalidates a way, so an invalid way still has lastUse 0 while valid ways have distinct
      // lastUse >= 1: the smallest key is the lowest-numbered invalid way if there is one, else
      // the least recently used way that is not pending. No branch on the data (which way wins
      // is unpredictable).
      uint64_t best = ~uint64_t(0);
      for (uint32_t w = 0; w < assoc_; ++w) best = std::min(best, (s[w].lastUse << 6 | w) | pendingMask(s[w]));
      return best == ~uint64_t(0) ? -1 : static_cast<int>(best & 63);
    }
    int free = wayWhere(s, [](const Way& x) { return x.tag == kNoLine; });
    if (free >= 0) return free;
    if (policy_ != Replacement::LRU) return victimByPolicy(s);
    // Least recently used way that is not pending. Valid ways have distinct lastUse values
    // below ~0, and a pending way's key is ~0, so it is never taken. Written without branches
    // on the data: which way is oldest, or pending, is unpredictable.
    uint64_t oldest = ~uint64_t(0);
    for (uint32_t w = 0; w < assoc_; ++w) oldest = std::min(oldest, s[w].lastUse | pendingMask(s[w]));
    if (oldest == ~uint64_t(0)) return -1;
    return wayWhere(s, [oldest](const Way& x) { return x.lastUse == oldest; });
  }

  struct Evicted {
    bool valid = false;
    bool dirty = false;
    uint64_t line = kNoLine;
  };
  // Puts `line` into `way` (counts as a use) and returns what was there.
  Evicted install(uint32_t set, int way, uint64_t line, bool pending, bool dirty) {
    Way& x = at(set, way);
    Evicted e;
    e.valid = x.tag != kNoLine;
    e.dirty = e.valid && (x.flags & kDirty);
    e.line = x.tag;
    x.tag = line;
    x.lastUse = ++clock_;
    x.uses = 1;
    x.flags = static_cast<uint8_t>((pending ? kPending : 0) | (dirty ? kDirty : 0));
    x.fillCycle = 0;
    return e;
  }

  bool pending(uint32_t set, int way) const { return at(set, way).flags & kPending; }
  bool dirty(uint32_t set, int way) const { return at(set, way).flags & kDirty; }
  void setDirty(uint32_t set, int way) { at(set, way).flags |= kDirty; }
  // Data arrived: the way becomes an ordinary valid line.
  void fill(uint32_t set, int way) { at(set, way).flags &= static_cast<uint8_t>(~kPending); }
  uint64_t fillCycle(uint32_t set, int way) const { return at(set, way).fillCycle; }
  void setFillCycle(uint32_t set, int way, uint64_t cycle) { at(set, way).fillCycle = cycle; }
  // Earliest fill cycle among the pending ways of `set` (for retries when the set is full).
  uint64_t earliestFill(uint32_t set) const;
  uint64_t line(uint32_t set, int way) const { return at(set, way).tag; }

 private:
  static constexpr uint64_t kPackedClockLimit = uint64_t{1} << 57;  // lastUse << 6 stays below ~0
  static constexpr uint8_t kPending = 1;
  static constexpr uint8_t kDirty = 2;
  // Everything about one way side by side (32 bytes): a request touches one set, so its ways'
  // tags, replacement data and flags share a few host cache lines.
  struct Way {
    uint64_t tag = kNoLine;  // kNoLine = invalid
    uint64_t lastUse = 0;
    uint64_t fillCycle = 0;
    uint32_t uses = 0;
    uint8_t flags = 0;
  };
  static uint64_t pendingMask(const Way& x) { return uint64_t(0) - uint64_t(x.flags & kPending); }
  // Lowest-numbered way of `set` satisfying `pred`, or -1. Up to 64 ways the scan has no
  // data-dependent branch (which way matches is unpredictable).
  template <typename Pred>
  int wayWhere(const Way* set, Pred pred) const {
    if (assoc_ <= 64) {
      uint64_t match = 0;
      for (uint32_t w = 0; w < assoc_; ++w) match |= uint64_t(pred(set[w])) << w;
      return match == 0 ? -1 : __builtin_ctzll(match);
    }
    for (uint32_t w = 0; w < assoc_; ++w)
      if (pred(set[w])) return static_cast<int>(w);
    return -1;
  }
  Way& at(uint32_t set, int way) { return ways_[size_t(set) * assoc_ + size_t(way)]; }
  const Way& at(uint32_t set, int way) const { return ways_[size_t(set) * assoc_ + size_t(way)]; }
  int victimByPolicy(const Way* set);  // every policy but LRU, all ways valid

  uint32_t sets_;
  uint32_t assoc_;
  Replacement policy_;
  Rng rng_;
  uint64_t clock_ = 0;
  std::vector<Way> ways_;  // set-major: the ways of set s are [s * assoc_, (s + 1) * assoc_)
};

}  // namespace cltrace::cachesim
