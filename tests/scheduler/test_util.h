// Helpers for the scheduler tests: building traces as small programs, rendering schedules.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "cltrace/record.h"
#include "cltrace/scheduler/scheduler.h"
#include "cltrace/scheduler/source.h"

namespace cltrace::sched::test {

inline NDRange range1(uint64_t global, uint64_t local) { return NDRange::fromSizes({global}, {local}); }
inline NDRange range2(uint64_t gx, uint64_t gy, uint64_t lx, uint64_t ly) {
  return NDRange::fromSizes({gx, gy}, {lx, ly});
}
inline NDRange range3(std::array<uint64_t, 3> global, std::array<uint64_t, 3> local) {
  return NDRange::fromSizes({global.begin(), global.end()}, {local.begin(), local.end()});
}

// Appends one thread's records.
struct Emit {
  std::vector<Record>& out;

  void access(AccessKind kind, uint32_t instruction, uint64_t address,
              std::initializer_list<uint32_t> iters = {}, uint32_t size = 4) {
    Record r{};
    r.kind = static_cast<uint8_t>(kind);
    r.instruction = instruction;
    r.address = address;
    r.size = size;
    r.depth = static_cast<uint8_t>(iters.size());
    uint32_t i = 0;
    for (uint32_t v : iters) r.iterations[i++] = v;
    out.push_back(r);
  }
  void load(uint32_t instruction, uint64_t address, std::initializer_list<uint32_t> iters = {}) {
    access(AccessKind::Load, instruction, address, iters);
  }
  void store(uint32_t instruction, uint64_t address, std::initializer_list<uint32_t> iters = {}) {
    access(AccessKind::Store, instruction, address, iters);
  }
  void barrier(uint32_t instruction, std::initializer_list<uint32_t> iters = {}) {
    access(AccessKind::Barrier, instruction, 0, iters, 0);
    out.back().flags = kFenceLocal;
  }
};

// Where a work-item sits: its workgroup, local linear id and global id.
struct Item {
  uint64_t group;
  uint32_t lid;
  std::array<uint64_t, 3> local;
  std::array<uint64_t, 3> global;
};

using Program = std::function<void(const Item&, Emit&)>;

// Work-items in file order (workgroups x fastest, local ids x fastest).
inline std::vector<std::vector<Record>> buildTrace(const NDRange& range, const Program& program) {
  std::vector<std::vector<Record>> items;
  const auto groups = range.groups();
  for (uint64_t g = 0; g < range.workgroups(); ++g) {
    const std::array<uint64_t, 3> gid{g % groups[0], (g / groups[0]) % groups[1],
                                      g / (groups[0] * groups[1])};
    for (uint64_t l = 0; l < range.workgroupSize(); ++l) {
      Item it;
      it.group = g;
      it.lid = static_cast<uint32_t>(l);
      it.local = {l % range.local[0], (l / range.local[0]) % range.local[1],
                  l / (range.local[0] * range.local[1])};
      for (int d = 0; d < 3; ++d) it.global[d] = gid[d] * range.local[d] + it.local[d];
      items.emplace_back();
      Emit e{items.back()};
      program(it, e);
    }
  }
  return items;
}

// "0-3,5,7-8"
inline std::string lanesText(const WarpStep& s) {
  std::string out;
  size_t i = 0;
  while (i < s.lanes.size()) {
    size_t j = i;
    while (j + 1 < s.lanes.size() && s.lanes[j + 1].localThread == s.lanes[j].localThread + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(s.lanes[i].localThread);
    if (j > i) out += "-" + std::to_string(s.lanes[j].localThread);
    i = j + 1;
  }
  return out;
}

inline std::string stepText(const WarpStep& s, bool addresses = false) {
  std::string line = "c" + std::to_string(s.cycle) + " sm" + std::to_string(s.sm) + " wg" +
                     std::to_string(s.workgroup) + " w" + std::to_string(s.warp) + " s" +
                     std::to_string(s.step) + " i" + std::to_string(s.instruction) + " " +
                     accessKindName(s.kind) + " " + lanesText(s);
  if (addresses) {
    line += " @";
    for (const LaneAccess& l : s.lanes) line += " " + std::to_string(l.address);
  }
  return line + "\n";
}

// Every step of `source`, one line each: "c<cycle> sm<sm> wg<wg> w<warp> s<step> i<instr>
// <kind> <lanes>" (and the lane addresses when asked).
inline std::string render(StepSource& source, bool addresses = false) {
  std::string out;
  WarpStep s;
  size_t guard = 0;
  while (source.next(s)) {
    out += stepText(s, addresses);
    if (++guard > 100000) return out + "... (runaway)\n";
  }
  return out;
}

// Whether a step carries the bounds of exactly its lanes (the scheduler and the schedule file
// reader note them for the simulator's coalescer, which trusts them).
inline bool boundsMatchLanes(const WarpStep& s) {
  LaneBounds b;
  for (const LaneAccess& l : s.lanes) b.add(l.address, l.size);
  return s.hasBounds && s.bounds.addressOr == b.addressOr && s.bounds.addressAnd == b.addressAnd &&
         s.bounds.addressMin == b.addressMin && s.bounds.addressMax == b.addressMax && s.bounds.sizeOr == b.sizeOr;
}

inline SchedulerConfig oneSm(Policy policy = Policy::Warp, uint32_t warpSize = 32) {
  SchedulerConfig c;
  c.policy = policy;
  c.warpSize = warpSize;
  c.smCount = 1;
  return c;
}

inline std::string schedule(const NDRange& range, const Program& program,
                            const SchedulerConfig& config, bool addresses = false) {
  MemoryWorkgroupSource source(range, buildTrace(range, program));
  Scheduler scheduler(source, config);
  return render(scheduler, addresses);
}

}  // namespace cltrace::sched::test
