// One SM's L1 data cache: tags and replacement, write policy, MSHRs, miss latency and the
// reuse-distance classification of misses. It takes coalesced line requests; the Simulator
// (simulator.h) turns warp steps into such requests and drives the scheduler.
//
// Timing model (Config::timing):
//  - A read miss allocates its line at once (evicting a victim) and marks it pending; the data
//    arrives minLatency + |N(0, latencySigma^2)| cycles later, the jitter rounded to whole
//    cycles (latency.h).
//  - A read of a pending line is a latency miss: no new memory request; it merges into the
//    line's MSHR and the warp waits for that line's fill.
//  - A read miss needs a free MSHR: at most `mshrs` in flight per SM and `mshrsPerWarp` per warp
//    (entries are owned by the warp whose miss allocated them; merging takes no entry). It also
//    needs a way that is not pending. Otherwise the request stalls (counted in misses.mshr),
//    nothing changes, and RequestResult::readyCycle says when to retry: the earliest fill that can
//    free what was missing.
//  - Stores never use MSHRs and never delay a warp.
// With timing off every miss fills at once: no latency misses, no MSHR stalls.
//
// Miss classification (classify on): the request's reuse distance d is computed over every
// request this L1 accepted that touches its state (reads; writes too under write-back
// write-allocate, but for a store that goes around a set whose ways are all in flight). A read miss is cold when d is infinite, capacity when d >= the cache's
// number of lines (a fully associative LRU cache of the same size would miss), otherwise
// conflict. Latency misses and MSHR stalls are counted apart and are not read misses.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cltrace/cachesim/cache.h"
#include "cltrace/cachesim/config.h"
#include "cltrace/cachesim/latency.h"
#include "cltrace/cachesim/reuse_distance.h"
#include "cltrace/cachesim/rng.h"
#include "cltrace/cachesim/set_index.h"
#include "cltrace/cachesim/stats.h"

namespace cltrace::cachesim {

enum class Outcome : uint8_t {
  Hit,           // read hit
  Miss,          // read miss when classification is off
  ColdMiss,      // read misses (go to memory)
  CapacityMiss,
  ConflictMiss,
  LatencyMiss,   // read of a line whose data is still in flight
  MshrStall,     // read could not be accepted; retry at readyCycle
  WriteHit,
  WriteMiss,
  Bypass,        // atomics and constant loads (reported by the Simulator's callback only)
};
const char* toString(Outcome o);
inline bool isReadMiss(Outcome o) {
  return o == Outcome::Miss || o == Outcome::ColdMiss || o == Outcome::CapacityMiss || o == Outcome::ConflictMiss;
}

struct RequestResult {
  Outcome outcome = Outcome::Hit;
  // Reads: the cycle from which the warp has this line's data (hit: cycle + hitLatency; miss
  // and latency miss: the line's fill cycle). MshrStall: the cycle to retry at. Writes: cycle.
  uint64_t readyCycle = 0;
  uint64_t reuseDistance = ReuseDistanceTracker::kInfinite;  // kInfinite also when not tracked
  uint32_t set = 0;
};

// Counts per key with no allocation per update (MSHRs held per warp): open addressing with
// linear probing. A key whose count drops to 0 keeps its slot (no deletion work on the hot
// path); such slots are dropped when the table fills up, so its size follows the keys with a
// nonzero count, not every key ever seen.
class FlatCounter {
 public:
  // 256 slots from the start: an SM of the presets holds up to 48 warps, and with new warps
  // arriving all the time (stencil) a table sized to them kept probing past colliding and
  // finished keys and was rebuilt thousands of times a run.
  FlatCounter() : slots_(256) {}
  uint32_t get(uint64_t key) const {
    const Slot& s = slots_[find(key)];
    return s.used ? s.count : 0;
  }
  void increment(uint64_t key) {
    size_t i = find(key);
    if (!slots_[i].used) {
      if ((size_ + 1) * 2 > slots_.size()) {
        rebuild();
        i = find(key);
      }
      slots_[i] = Slot{key, 0, 1};
      ++size_;
    }
    ++slots_[i].count;
  }
  void decrement(uint64_t key) {
    Slot& s = slots_[find(key)];
    if (s.used && s.count != 0) --s.count;
  }
  size_t slots() const { return slots_.size(); }  // table size (for tests)

  // Slot access for callers that update one key repeatedly (SmModel keeps the slot of each
  // miss in flight, so retiring it needs no lookup). lookup() gives the slot holding `key` or
  // the empty slot where it would go; countAt() is 0 for an empty slot. incrementAt(slot, key)
  // adds one there, creating the key in an empty slot. Slot numbers stay valid until a key is
  // created: that may rebuild the table (moving every key), which bumps rebuilds().
  size_t lookup(uint64_t key) const { return find(key); }
  uint32_t countAt(size_t slot) const { return slots_[slot].count; }  // empty slots hold 0
  size_t incrementAt(size_t slot, uint64_t key) {
    if (slots_[slot].used) {
      ++slots_[slot].count;
      return slot;
    }
    increment(key);
    return find(key);
  }
  void decrementAt(size_t slot) { --slots_[slot].count; }  // slot holds a nonzero count
  uint64_t rebuilds() const { return rebuilds_; }

 private:
  struct Slot {
    uint64_t key = 0;
    uint32_t count = 0;
    uint32_t used = 0;  // 0 = empty
  };
  size_t home(uint64_t key) const {
    return static_cast<size_t>((key * 0x9E3779B97F4A7C15ull) >> 32) & (slots_.size() - 1);
  }
  // Slot holding `key`, or the empty slot where it goes.
  size_t find(uint64_t key) const {
    const size_t mask = slots_.size() - 1;
    size_t i = home(key);
    while (slots_[i].used && slots_[i].key != key) i = (i + 1) & mask;
    return i;
  }
  // Drops the keys whose count is 0; doubles the table when over a quarter stays full.
  void rebuild() {
    ++rebuilds_;
    std::vector<Slot> old = std::move(slots_);
    size_t live = 0;
    for (const Slot& s : old) live += s.used && s.count != 0;
    slots_.assign(live * 4 > old.size() ? old.size() * 2 : old.size(), Slot{});
    size_ = 0;
    for (const Slot& s : old)
      if (s.used && s.count != 0) {
        slots_[find(s.key)] = s;
        ++size_;
      }
  }
  std::vector<Slot> slots_;
  size_t size_ = 0;  // used slots
  uint64_t rebuilds_ = 0;
};

// Misses in flight, ordered by fill cycle (stable: equal fills stay in issue order): a ring
// buffer that grows by doubling. Fills are issue cycle + latency, so a new entry almost always
// goes at or near the back; the few later entries are shifted up by one.
class FillQueue {
 public:
  struct Entry {
    uint64_t fill;
    uint64_t warpKey;
    uint32_t set;
    int32_t way;
    uint32_t warpSlot;  // the warp's slot in SmModel's FlatCounter
  };
  FillQueue() : ring_(16) {}
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const Entry& operator[](size_t i) const { return ring_[(head_ + i) & (ring_.size() - 1)]; }
  const Entry& front() const { return ring_[head_]; }
  Entry& at(size_t i) { return ring_[(head_ + i) & (ring_.size() - 1)]; }
  void popFront() {
    head_ = (head_ + 1) & (ring_.size() - 1);
    --size_;
  }
  void insert(const Entry& e) {
    if (size_ == ring_.size()) grow();
    const size_t mask = ring_.size() - 1;
    size_t pos = size_;  // index (from the front) where `e` goes
    while (pos > 0 && ring_[(head_ + pos - 1) & mask].fill > e.fill) {
      ring_[(head_ + pos) & mask] = ring_[(head_ + pos - 1) & mask];
      --pos;
    }
    ring_[(head_ + pos) & mask] = e;
    ++size_;
  }

 private:
  void grow() {
    std::vector<Entry> bigger(ring_.size() * 2);
    for (size_t i = 0; i < size_; ++i) bigger[i] = (*this)[i];
    ring_ = std::move(bigger);
    head_ = 0;
  }
  std::vector<Entry> ring_;  // power-of-two size
  size_t head_ = 0;
  size_t size_ = 0;
};

class SmModel {
 public:
  // `config` must be valid (Config::validate). `seed` drives latency jitter and random replacement.
  SmModel(const Config& config, uint64_t seed);

  // Retires every in-flight line whose data arrived at or before `cycle`. read() and write()
  // call it themselves; cycles must not go backwards (an older cycle is treated as the newest).
  void advanceTo(uint64_t cycle) {
    if (cycle > now_) now_ = cycle;
    if (stats_.cycles < now_) stats_.cycles = now_;
    if (nextFill_ <= now_) retireFilled();
  }

  // A coalesced read request of `line` (byte address >> log2(lineSize)) by warp `warpKey`.
  RequestResult read(uint64_t line, uint64_t cycle, uint64_t warpKey, InstructionStats* ins = nullptr);
  // Stalled reads retried in bulk (the Simulator's herds of warps waiting for a full SM's next
  // fill). mshrsFullAt retires the fills due by `cycle`, as read() does first, and says whether
  // every MSHR is still taken (never with timing off or unlimited MSHRs): then a read of a line
  // the cache does not hold stalls, changing nothing but the stall count, and retries at
  // fullRetryCycle(). countStalls counts n such stalls in the SM's statistics (the caller counts
  // them per instruction).
  bool mshrsFullAt(uint64_t cycle) {
    advanceTo(cycle);
    return mshrsFull();
  }
  bool mshrsFull() const { return timing_ && mshrsTaken(); }  // at the SM's current cycle
  uint64_t fullRetryCycle() const { return std::max(inflight_.front().fill, now_ + 1); }
  void countStalls(uint64_t n) { stats_.misses.mshr += n; }

  // Lines enter the cache only when installed (a read miss; a store under write-back
  // write-allocate), so a line that was absent when installs() was n is still absent unless one
  // of the installs since was of it. installedLine(i) is the line of install i (counted from 0),
  // kept for the last kInstallLog installs: i in [installs() - kInstallLog, installs()).
  // Counted with timing on only (nothing stalls with timing off; the request path stays as it was).
  static constexpr uint32_t kInstallLog = 16;  // a power of two
  uint64_t installs() const { return installs_; }
  uint64_t installedLine(uint64_t i) const { return installLog_[i & (kInstallLog - 1)]; }

  // A coalesced write request.
  RequestResult write(uint64_t line, uint64_t cycle, InstructionStats* ins = nullptr);

  bool contains(uint64_t line) const { return tags_.find(index_(line), line) >= 0; }  // valid or pending
  bool inFlight(uint64_t line) const;  // pending
  uint32_t setOf(uint64_t line) const { return index_(line); }
  uint32_t mshrsInUse() const { return static_cast<uint32_t>(inflight_.size()); }
  uint32_t mshrsInUse(uint64_t warpKey) const;

  Stats& stats() { return stats_; }
  const Stats& stats() const { return stats_; }
  size_t trackerBytes() const { return tracker_.memoryBytes(); }
  uint64_t distinctLines() const { return tracker_.distinctLines(); }  // 0 with classify=off

 private:
  // The reuse distance of a request to `line` (kInfinite with classify off), counted in the
  // histogram.
  uint64_t track(uint64_t line) {
    if (!classify_) return ReuseDistanceTracker::kInfinite;
    const uint64_t d = tracker_.access(line);
    if (d == ReuseDistanceTracker::kInfinite)
      ++stats_.reuse.cold;
    else
      stats_.reuse.addDistance(d);
    return d;
  }
  // Latency of a new miss.
  uint64_t sampleLatency() { return minLatency_ + jitter_.sample(latencyRng_); }
  void countStall(InstructionStats* ins) {
    ++stats_.misses.mshr;
    if (ins) ++ins->misses.mshr;
  }
  // Counts a stall; the result says to retry at `retry`, and never before the next cycle.
  RequestResult stall(uint64_t retry, uint64_t cycle, InstructionStats* ins) {
    countStall(ins);
    RequestResult r;
    r.outcome = Outcome::MshrStall;
    r.readyCycle = std::max(retry, cycle + 1);
    return r;
  }
  // Every MSHR of the SM holds a line in flight (never with unlimited MSHRs).
  bool mshrsTaken() const { return mshrs_ != 0 && inflight_.size() >= mshrs_; }

  bool timing_;
  bool classify_;
  bool writeAllocate_;
  uint32_t mshrs_;
  uint32_t mshrsPerWarp_;
  uint64_t minLatency_;
  uint64_t hitLatency_;
  uint64_t lines_;
  uint64_t now_ = 0;
  SetIndexer index_;
  CacheTags tags_;
  ReuseDistanceTracker tracker_;
  Rng latencyRng_;
  LatencyJitter jitter_;
  void retireFilled();
  uint64_t earliestFillOfWarp(uint64_t warpKey) const;
  FillQueue inflight_;  // lines in flight
  uint64_t nextFill_ = ~uint64_t(0);  // inflight_.front().fill, ~0 when empty (one compare per request)
  FlatCounter warpMshrs_;
  Stats stats_;
  uint64_t installs_ = 0;
  uint64_t installLog_[kInstallLog] = {};
  void noteInstall(uint64_t line) {
    if (timing_) installLog_[installs_++ & (kInstallLog - 1)] = line;
  }
};

}  // namespace cltrace::cachesim
