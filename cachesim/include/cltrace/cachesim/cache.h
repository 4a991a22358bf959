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
#include <cstddef>
#include <cstdint>
#include <new>
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
    x.meta = (x.meta & kFlagBits) | ++clock_;
    if (countsUses_) ++uses_[index(set, way)];
  }

  // Way to allocate for a new line in `set`, or -1 when every way is pending.
  [[gnu::always_inline]] int victim(uint32_t set) {
    const Way* s = &ways_[size_t(set) * assoc_];
    if (policy_ == Replacement::LRU && assoc_ <= 64 && clock_ < kPackedClockLimit) {
      // One pass over the keys (lastUse << 6 | way), a pending way's key being ~0. Nothing
      // invalidates a way, so an invalid way still has lastUse 0 while valid ways have distinct
      // lastUse >= 1: the smallest key is the lowest-numbered invalid way if there is one, else
      // the least recently used way that is not pending. No branch on the data (which way wins
      // is unpredictable).
      uint64_t best = ~uint64_t(0);
      for (uint32_t w = 0; w < assoc_; ++w) best = std::min(best, (lastUse(s[w]) << 6 | w) | pendingMask(s[w]));
      return best == ~uint64_t(0) ? -1 : static_cast<int>(best & 63);
    }
    return victimOtherwise(s);
  }

  struct Evicted {
    bool valid = false;
    bool dirty = false;
    uint64_t line = kNoLine;
  };
  // Puts `line` into `way` (counts as a use) and returns what was there. A pending line's fill
  // cycle is the caller's to set (setFillCycle).
  Evicted install(uint32_t set, int way, uint64_t line, bool pending, bool dirty) {
    Way& x = at(set, way);
    Evicted e;
    e.valid = x.tag != kNoLine;
    e.dirty = e.valid && (x.meta & kDirty);
    e.line = x.tag;
    x.tag = line;
    x.meta = ++clock_ | (pending ? kPending : 0) | (dirty ? kDirty : 0);
    if (countsUses_) uses_[index(set, way)] = 1;
    return e;
  }

  bool pending(uint32_t set, int way) const { return at(set, way).meta & kPending; }
  bool dirty(uint32_t set, int way) const { return at(set, way).meta & kDirty; }
  void setDirty(uint32_t set, int way) { at(set, way).meta |= kDirty; }
  // Data arrived: the way becomes an ordinary valid line.
  void fill(uint32_t set, int way) { at(set, way).meta &= ~kPending; }
  uint64_t fillCycle(uint32_t set, int way) const { return fillCycles_[index(set, way)]; }  // pending ways
  void setFillCycle(uint32_t set, int way, uint64_t cycle) { fillCycles_[index(set, way)] = cycle; }
  // Earliest fill cycle among the pending ways of `set` (for retries when the set is full).
  uint64_t earliestFill(uint32_t set) const;
  uint64_t line(uint32_t set, int way) const { return at(set, way).tag; }

 private:
  static constexpr uint64_t kPackedClockLimit = uint64_t{1} << 57;  // lastUse << 6 stays below ~0
  static constexpr uint64_t kPending = uint64_t{1} << 62;
  static constexpr uint64_t kDirty = uint64_t{1} << 61;
  static constexpr uint64_t kFlagBits = kPending | kDirty;
  // What every request reads, in 16 bytes: the tag, and the time of last use with the flags in
  // its top bits (the clock stays far below them). A 4-way set is one 64-byte host cache line
  // (the array is aligned to 64), so a lookup, a victim choice and an install touch one line.
  // What only some requests need lies apart, by way: the fill cycle of a pending line (latency
  // misses), the use count (LFU and MFU only).
  struct Way {
    uint64_t tag = kNoLine;  // kNoLine = invalid
    uint64_t meta = 0;       // lastUse | kPending | kDirty
  };
  static uint64_t lastUse(const Way& x) { return x.meta & ~kFlagBits; }
  static uint64_t pendingMask(const Way& x) { return uint64_t(0) - ((x.meta >> 62) & 1); }
  // Allocates 64-byte aligned storage, so that sets start on host cache lines.
  template <typename T>
  struct LineAligned {
    using value_type = T;
    LineAligned() = default;
    template <typename U>
    LineAligned(const LineAligned<U>&) {}
    T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{64})); }
    void deallocate(T* p, size_t) { ::operator delete(p, std::align_val_t{64}); }
    template <typename U>
    bool operator==(const LineAligned<U>&) const { return true; }
    template <typename U>
    bool operator!=(const LineAligned<U>&) const { return false; }
  };
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
  size_t index(uint32_t set, int way) const { return size_t(set) * assoc_ + size_t(way); }
  Way& at(uint32_t set, int way) { return ways_[index(set, way)]; }
  const Way& at(uint32_t set, int way) const { return ways_[index(set, way)]; }
  int victimByPolicy(const Way* set);  // every policy but LRU, all ways valid
  // victim() for every case but its one-pass LRU (kept out of line so that the usual case is
  // inlined into the request path).
  [[gnu::noinline]] int victimOtherwise(const Way* s) {
    int free = wayWhere(s, [](const Way& x) { return x.tag == kNoLine; });
    if (free >= 0) return free;
    if (policy_ != Replacement::LRU) return victimByPolicy(s);
    // Least recently used way that is not pending. Valid ways have distinct lastUse values
    // below ~0, and a pending way's key is ~0, so it is never taken. Written without branches
    // on the data: which way is oldest, or pending, is unpredictable.
    uint64_t oldest = ~uint64_t(0);
    for (uint32_t w = 0; w < assoc_; ++w) oldest = std::min(oldest, lastUse(s[w]) | pendingMask(s[w]));
    if (oldest == ~uint64_t(0)) return -1;
    return wayWhere(s, [oldest](const Way& x) { return lastUse(x) == oldest; });
  }

  uint32_t sets_;
  uint32_t assoc_;
  Replacement policy_;
  Rng rng_;
  bool countsUses_;  // LFU and MFU
  uint64_t clock_ = 0;
  // Set-major: the ways of set s are [s * assoc_, (s + 1) * assoc_), in each of these.
  std::vector<Way, LineAligned<Way>> ways_;
  std::vector<uint64_t> fillCycles_;
  std::vector<uint32_t> uses_;  // LFU and MFU only (empty otherwise)
};

}  // namespace cltrace::cachesim
