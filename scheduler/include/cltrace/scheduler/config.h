// Scheduler configuration: policy, warp size, SM residency limits, inter-warp order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cltrace::sched {

// How threads are turned into an issue order (see docs/scheduler.md).
enum class Policy : uint8_t {
  Sequential = 0,  // naive: one thread runs until it finishes or blocks, then the next thread
  RoundRobin = 1,  // naive: every resident thread issues one record in turn
  Random = 2,      // naive: a seeded random resident thread issues one record
  Warp = 3,        // SIMT: warps issue groups of threads at the same instruction instance
};

// Order among the resident warps of one SM (warp policy only; the naive policies define
// their own order among resident threads).
enum class InterWarpOrder : uint8_t {
  // Rotate over warps ordered (warp index, workgroup): consecutive warps alternate workgroups.
  LooseRoundRobin = 0,
  // Keep issuing the last warp while it can; otherwise the oldest ready warp.
  GreedyThenOldest = 1,
  // Round-robin inside a small active set; stalled warps swap with pending ones.
  TwoLevel = 2,
};

// Upper bounds of validate(): far above any GPU (Fermi: warps of 32, 16 SMs), so that a typo is
// an error rather than a scheduler sized for it.
inline constexpr uint32_t kMaxWarpSize = 1024;
inline constexpr uint32_t kMaxSmCount = 4096;

struct SchedulerConfig {
  Policy policy = Policy::Warp;
  uint32_t warpSize = 32;           // threads per warp (Fermi: 32)
  uint32_t smCount = 15;            // streaming multiprocessors (GTX480: 15, GTX470: 14)
  uint32_t maxWorkgroupsPerSm = 8;  // resident workgroups per SM (compute capability 2.x: 8)
  uint32_t maxThreadsPerSm = 1536;  // resident threads per SM (compute capability 2.x: 1536)
  InterWarpOrder interWarp = InterWarpOrder::LooseRoundRobin;
  uint32_t twoLevelActiveWarps = 8;  // size of the active set of the two-level order
  uint64_t seed = 1;                 // random policy
  size_t maxDiagnostics = 100;       // diagnostics kept as messages; the rest are only counted

  // Throws std::invalid_argument naming the field, e.g. "scheduler: warp_size must be > 0".
  void validate() const;
};

// Names used on the command line and in files: "sequential", "round-robin", "random", "warp".
const char* policyName(Policy p);
// "loose-round-robin", "greedy-then-oldest", "two-level".
const char* interWarpOrderName(InterWarpOrder o);
// Read names in any case ("WARP"); throw std::invalid_argument listing the accepted names.
Policy parsePolicy(std::string_view name);
InterWarpOrder parseInterWarpOrder(std::string_view name);

}  // namespace cltrace::sched
