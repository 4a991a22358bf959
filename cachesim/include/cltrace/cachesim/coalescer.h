// Coalescing of one SIMT step: the distinct cache lines its lanes touch, one L1 request each.
//
// A lane access [address, address + size) touches every line it overlaps (an access that spans
// a line boundary touches both lines); a size of 0 counts as 1 byte. Lines are returned in the
// order the lanes first touch them (lanes are in ascending local thread order).
#pragma once

#include <cstdint>
#include <vector>

#include "cltrace/scheduler/warp_step.h"

namespace cltrace::cachesim {

// Replaces `lines` with the distinct line addresses (byte address >> lineShift) of `step`.
inline void coalesce(const sched::WarpStep& step, uint32_t lineShift, std::vector<uint64_t>& lines) {
  lines.clear();
  if (step.lanes.empty()) return;
  // Fast path: every byte of the step within one line (coalesced or broadcast accesses).
  uint64_t lo = ~0ull, hi = 0;
  for (const sched::LaneAccess& lane : step.lanes) {
    uint64_t end = lane.address + (lane.size == 0 ? 0 : lane.size - 1);
    lo = lane.address < lo ? lane.address : lo;
    hi = end > hi ? end : hi;
  }
  if ((lo >> lineShift) == (hi >> lineShift)) {
    lines.push_back(lo >> lineShift);
    return;
  }
  uint64_t last = ~0ull;
  for (const sched::LaneAccess& lane : step.lanes) {
    uint64_t first = lane.address >> lineShift;
    uint64_t end = (lane.address + (lane.size == 0 ? 0 : lane.size - 1)) >> lineShift;
    for (uint64_t line = first;; ++line) {
      if (line != last) {
        bool seen = false;
        for (uint64_t l : lines) {
          if (l == line) {
            seen = true;
            break;
          }
        }
        if (!seen) lines.push_back(line);
        last = line;
      }
      if (line == end) break;
    }
  }
}

}  // namespace cltrace::cachesim
