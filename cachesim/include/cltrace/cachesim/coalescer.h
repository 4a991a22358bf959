// Coalescing of one SIMT step: the distinct cache lines its lanes touch, one L1 request each.
//
// A lane access [address, address + size) touches every line it overlaps (an access that spans
// a line boundary touches both lines); a size of 0 counts as 1 byte. Lines are returned in the
// order the lanes first touch them (lanes are in ascending local thread order).
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include "cltrace/scheduler/warp_step.h"

namespace cltrace::cachesim {

// The largest single lane access the simulator expands into line requests (8192 lines of 128
// bytes). Real accesses are at most a few hundred bytes (double16, struct copies); a larger size
// is a corrupt trace and would otherwise take hours and gigabytes to expand.
inline constexpr uint64_t kMaxLaneAccessBytes = uint64_t{1} << 20;

// Replaces `lines` with the distinct line addresses (byte address >> lineShift) of `step`.
// Throws std::runtime_error for a lane access over kMaxLaneAccessBytes.
inline void coalesce(const sched::WarpStep& step, uint32_t lineShift, std::vector<uint64_t>& lines) {
  lines.clear();
  if (step.lanes.empty()) return;
  // Fast path: every byte of the step within one line (coalesced or broadcast accesses), i.e.
  // the first and last byte of every lane agree with the first lane's address above lineShift.
  const uint64_t first = step.lanes.front().address;
  uint64_t differ = 0;
  for (const sched::LaneAccess& lane : step.lanes) {
    uint64_t last = lane.address + lane.size - (lane.size != 0 ? 1 : 0);
    differ |= (lane.address ^ first) | (last ^ first);
  }
  if ((differ >> lineShift) == 0) {
    lines.push_back(first >> lineShift);
    return;
  }
  // Duplicates are found by a scan while the list is short (a warp touches at most a few
  // dozen lines), by a hash set once large copies (memcpy of many lines) make it long.
  constexpr size_t kScanLimit = 64;
  std::unordered_set<uint64_t> seenSet;  // filled once the list reaches kScanLimit
  uint64_t last = ~0ull;
  for (const sched::LaneAccess& lane : step.lanes) {
    if (lane.size > kMaxLaneAccessBytes)
      throw std::runtime_error("instruction " + std::to_string(step.instruction) + " accesses " +
                               std::to_string(lane.size) + " bytes at once (local thread " +
                               std::to_string(lane.localThread) + " of workgroup " + std::to_string(step.workgroup) +
                               "); the simulator models accesses of at most " +
                               std::to_string(kMaxLaneAccessBytes) + " bytes");
    uint64_t first = lane.address >> lineShift;
    uint64_t lastByte = lane.address;
    if (lane.size != 0 && __builtin_add_overflow(lane.address, uint64_t{lane.size} - 1, &lastByte))
      lastByte = ~uint64_t{0};  // stops at the end of the address space
    uint64_t end = lastByte >> lineShift;
    for (uint64_t line = first;; ++line) {
      if (line != last) {
        bool seen;
        if (lines.size() < kScanLimit) {
          seen = std::find(lines.begin(), lines.end(), line) != lines.end();
        } else {
          if (seenSet.empty()) seenSet.insert(lines.begin(), lines.end());
          seen = !seenSet.insert(line).second;
        }
        if (!seen) lines.push_back(line);
        last = line;
      }
      if (line == end) break;
    }
  }
}

}  // namespace cltrace::cachesim
