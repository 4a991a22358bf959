#include "cltrace/cachesim/coalescer.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_set>

namespace cltrace::cachesim {

LaneSizeError laneTooLarge(const sched::WarpStep& step, const sched::LaneAccess& lane) {
  return LaneSizeError("instruction " + std::to_string(step.instruction) + " accesses " + std::to_string(lane.size) +
                       " bytes at once (local thread " + std::to_string(lane.localThread) + " of workgroup " +
                       std::to_string(step.workgroup) + "); the simulator models accesses of at most " +
                       std::to_string(kMaxLaneAccessBytes) + " bytes");
}

void coalesceLanes(const sched::WarpStep& step, uint32_t lineShift, std::vector<uint64_t>& lines) {
  // A line above every line so far is new (lanes usually run upwards: strided and copied
  // accesses never search). Otherwise duplicates are found by a scan while the list is short (a
  // warp touches at most a few dozen lines), by a hash set once it is long.
  constexpr size_t kScanLimit = 64;
  std::unordered_set<uint64_t> seenSet;  // every line, once a search finds the list long
  uint64_t last = ~0ull, highest = 0;
  const uint64_t offsetMask = (uint64_t{1} << lineShift) - 1;
  for (const sched::LaneAccess& lane : step.lanes) {
    if (lane.size > kMaxLaneAccessBytes) throw laneTooLarge(step, lane);
    uint64_t first = lane.address >> lineShift;
    // Most lanes fall in the line of the lane before them (consecutive addresses).
    if (first == last && (lane.address & offsetMask) + lane.size <= offsetMask + 1) continue;
    uint64_t lastByte = lane.address;
    if (lane.size != 0 && __builtin_add_overflow(lane.address, uint64_t{lane.size} - 1, &lastByte))
      lastByte = ~uint64_t{0};  // stops at the end of the address space
    uint64_t end = lastByte >> lineShift;
    for (uint64_t line = first;; ++line) {
      if (line != last) {
        bool seen = false;
        if (!lines.empty() && line <= highest) {
          if (lines.size() < kScanLimit) {
            seen = std::find(lines.begin(), lines.end(), line) != lines.end();
          } else {
            if (seenSet.empty()) seenSet.insert(lines.begin(), lines.end());
            seen = seenSet.count(line) != 0;
          }
        }
        if (!seen) {
          if (lines.empty() || line > highest) highest = line;
          lines.push_back(line);
          if (!seenSet.empty()) seenSet.insert(line);
        }
        last = line;
      }
      if (line == end) break;
    }
  }
}

}  // namespace cltrace::cachesim
