#include "cltrace/scheduler/config.h"

#include <cctype>
#include <stdexcept>
#include <string>

namespace cltrace::sched {

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("scheduler: " + what);
}

// Names are read in any case ("WARP"), as the cache configuration's named values are.
bool sameName(std::string_view given, std::string_view name) {
  if (given.size() != name.size()) return false;
  for (size_t i = 0; i < name.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(given[i])) != name[i]) return false;
  return true;
}

}  // namespace

void SchedulerConfig::validate() const {
  if (static_cast<uint8_t>(policy) > static_cast<uint8_t>(Policy::Warp))
    fail("policy must be one of sequential, round-robin, random, warp");
  if (static_cast<uint8_t>(interWarp) > static_cast<uint8_t>(InterWarpOrder::TwoLevel))
    fail("inter_warp must be one of loose-round-robin, greedy-then-oldest, two-level");
  if (warpSize == 0) fail("warp_size must be > 0");
  if (warpSize > kMaxWarpSize)
    fail("warp_size must be <= " + std::to_string(kMaxWarpSize) + " (got " + std::to_string(warpSize) + ")");
  if (smCount == 0) fail("sm_count must be > 0");
  if (smCount > kMaxSmCount)
    fail("sm_count must be <= " + std::to_string(kMaxSmCount) + " (got " + std::to_string(smCount) + ")");
  if (maxWorkgroupsPerSm == 0) fail("max_workgroups_per_sm must be > 0");
  if (maxThreadsPerSm == 0) fail("max_threads_per_sm must be > 0");
  // An SM holds whole warps (the cache simulator's configuration has the same rule).
  if (maxThreadsPerSm < warpSize)
    fail("max_threads_per_sm (" + std::to_string(maxThreadsPerSm) + ") must be at least warp_size (" +
         std::to_string(warpSize) + ")");
  if (twoLevelActiveWarps == 0) fail("two_level_active_warps must be > 0");
}

const char* policyName(Policy p) {
  switch (p) {
    case Policy::Sequential:
      return "sequential";
    case Policy::RoundRobin:
      return "round-robin";
    case Policy::Random:
      return "random";
    case Policy::Warp:
      return "warp";
  }
  return "unknown";
}

const char* interWarpOrderName(InterWarpOrder o) {
  switch (o) {
    case InterWarpOrder::LooseRoundRobin:
      return "loose-round-robin";
    case InterWarpOrder::GreedyThenOldest:
      return "greedy-then-oldest";
    case InterWarpOrder::TwoLevel:
      return "two-level";
  }
  return "unknown";
}

Policy parsePolicy(std::string_view name) {
  for (Policy p : {Policy::Sequential, Policy::RoundRobin, Policy::Random, Policy::Warp})
    if (sameName(name, policyName(p))) return p;
  fail("policy must be one of sequential, round-robin, random, warp (got '" + std::string(name) +
       "')");
}

InterWarpOrder parseInterWarpOrder(std::string_view name) {
  for (InterWarpOrder o : {InterWarpOrder::LooseRoundRobin, InterWarpOrder::GreedyThenOldest,
                           InterWarpOrder::TwoLevel})
    if (sameName(name, interWarpOrderName(o))) return o;
  fail("inter_warp must be one of loose-round-robin, greedy-then-oldest, two-level (got '" +
       std::string(name) + "')");
}

}  // namespace cltrace::sched
