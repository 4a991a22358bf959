// Statistics of the cache simulator as plain structs. Printers live in printers.h.
//
// Units: every count below except requests_before_coalescing is in L1 requests after
// coalescing (one per distinct line a warp step touches), the unit of the Fermi counters
// l1_global_load_hit / l1_global_load_miss.
#pragma once

#include <cstdint>
#include <vector>

namespace cltrace::cachesim {

// Kinds of read misses and stalls. cold + capacity + conflict == Stats::readMisses.
struct MissCounts {
  uint64_t cold = 0;      // first access to the line in this L1 (reuse distance infinite)
  uint64_t capacity = 0;  // a fully associative LRU cache of the same size would miss too
  uint64_t conflict = 0;  // every other miss (associativity, set hash, replacement, timing)
  uint64_t latency = 0;   // the line was allocated by an earlier miss but its data is in flight
  uint64_t mshr = 0;      // stalls: no free MSHR (SM or warp limit) or every way of the set is in flight

  void merge(const MissCounts& o) {
    cold += o.cold;
    capacity += o.capacity;
    conflict += o.conflict;
    latency += o.latency;
    mshr += o.mshr;
  }
};

// Reuse distances at line granularity of the requests the L1 sees (reads, and writes under
// write-back write-allocate). Bucket 0 holds distance 0, bucket k >= 1 holds [2^(k-1), 2^k).
struct ReuseHistogram {
  uint64_t cold = 0;              // infinite distance (first access)
  std::vector<uint64_t> buckets;  // grows as needed

  // Number of significant bits of `distance` (0 for 0).
  static uint32_t bucketOf(uint64_t distance) {
    return distance == 0 ? 0 : 64 - static_cast<uint32_t>(__builtin_clzll(distance));
  }
  static uint64_t bucketMin(uint32_t b) { return b == 0 ? 0 : (uint64_t(1) << (b - 1)); }
  static uint64_t bucketMax(uint32_t b) { return b == 0 ? 0 : (uint64_t(1) << b) - 1; }

  void addDistance(uint64_t distance) {
    uint32_t b = bucketOf(distance);
    if (b >= buckets.size()) buckets.resize(b + 1, 0);
    ++buckets[b];
  }
  uint64_t total() const {
    uint64_t t = cold;
    for (uint64_t c : buckets) t += c;
    return t;
  }
  void merge(const ReuseHistogram& o) {
    cold += o.cold;
    if (o.buckets.size() > buckets.size()) buckets.resize(o.buckets.size(), 0);
    for (size_t i = 0; i < o.buckets.size(); ++i) buckets[i] += o.buckets[i];
  }
};

// Per static instruction (the id the passes assign in program order).
struct InstructionStats {
  uint32_t instruction = 0;
  uint64_t steps = 0;                     // warp steps of this instruction
  uint64_t requestsBeforeCoalescing = 0;  // lane accesses (loads and stores)
  uint64_t requests = 0;                  // reads + writes
  uint64_t reads = 0;
  uint64_t readHits = 0;
  uint64_t readMisses = 0;
  uint64_t writes = 0;
  uint64_t writeMisses = 0;
  uint64_t atomics = 0;
  uint64_t constantLoads = 0;
  MissCounts misses;

  void merge(const InstructionStats& o) {
    steps += o.steps;
    requestsBeforeCoalescing += o.requestsBeforeCoalescing;
    requests += o.requests;
    reads += o.reads;
    readHits += o.readHits;
    readMisses += o.readMisses;
    writes += o.writes;
    writeMisses += o.writeMisses;
    atomics += o.atomics;
    constantLoads += o.constantLoads;
    misses.merge(o.misses);
  }
  double missRate() const { return reads == 0 ? 0.0 : double(readMisses) / double(reads); }
};

// One simulated L1 (or the sum over the simulated L1s).
//   reads == readHits + readMisses + misses.latency
//   requests == reads + writes
struct Stats {
  uint64_t steps = 0;                     // warp steps seen by the simulated SM(s), every kind
  uint64_t requestsBeforeCoalescing = 0;  // lane accesses of loads and stores
  uint64_t requests = 0;                  // L1 requests after coalescing: reads + writes
  uint64_t reads = 0;
  uint64_t readHits = 0;
  uint64_t readMisses = 0;   // requests that went to memory: cold + capacity + conflict
  uint64_t writes = 0;
  uint64_t writeHits = 0;
  uint64_t writeMisses = 0;
  uint64_t writeBacks = 0;   // dirty lines evicted (write-back write-allocate only)
  uint64_t atomics = 0;      // atomic requests after coalescing; bypass L1
  uint64_t constantLoads = 0;  // constant-space requests after coalescing; constant cache, not L1
  uint64_t barriers = 0;     // barrier steps
  uint64_t fences = 0;       // fence steps
  uint64_t cycles = 0;       // last cycle the simulator processed (with timing off: the last issue cycle)
  MissCounts misses;
  ReuseHistogram reuse;
  std::vector<InstructionStats> perInstruction;  // ascending instruction id

  // Read misses over read requests after coalescing (0 when there are no reads).
  double missRate() const { return reads == 0 ? 0.0 : double(readMisses) / double(reads); }
  // Adds `o` (the per-instruction lists are merged by instruction id).
  void merge(const Stats& o);
};

}  // namespace cltrace::cachesim
