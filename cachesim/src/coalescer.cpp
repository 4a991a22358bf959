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

namespace {

// Appends to `lines` the distinct lines of lanes [begin, end) of `step` that this call has not
// appended yet (lines already in the list before the call do not count).
void appendDistinctLines(const sched::WarpStep& step, size_t begin, size_t end, uint32_t lineShift,
                         std::vector<uint64_t>& lines) {
  // A line above every line so far is new (lanes usually run upwards: strided and copied
  // accesses never search). Otherwise duplicates are found by a scan while the list is short (a
  // warp touches at most a few dozen lines), by a hash set once it is long.
  constexpr size_t kScanLimit = 64;
  const size_t start = lines.size();
  std::unordered_set<uint64_t> seenSet;  // every line, once a search finds the list long
  uint64_t last = ~0ull, highest = 0;
  const uint64_t offsetMask = (uint64_t{1} << lineShift) - 1;
  for (size_t i = begin; i < end; ++i) {
    const sched::LaneAccess& lane = step.lanes[i];
    if (lane.size > kMaxLaneAccessBytes) throw laneTooLarge(step, lane);
    uint64_t first = lane.address >> lineShift;
    // Most lanes fall in the line of the lane before them (consecutive addresses).
    if (first == last && (lane.address & offsetMask) + lane.size <= offsetMask + 1) continue;
    uint64_t lastByte = lane.address;
    if (lane.size != 0 && __builtin_add_overflow(lane.address, uint64_t{lane.size} - 1, &lastByte))
      lastByte = ~uint64_t{0};  // stops at the end of the address space
    const uint64_t lastLine = lastByte >> lineShift;
    for (uint64_t line = first;; ++line) {
      if (line != last) {
        bool seen = false;
        const bool any = lines.size() > start;
        if (any && line <= highest) {
          if (lines.size() - start < kScanLimit) {
            seen = std::find(lines.begin() + static_cast<std::ptrdiff_t>(start), lines.end(), line) != lines.end();
          } else {
            if (seenSet.empty()) seenSet.insert(lines.begin() + static_cast<std::ptrdiff_t>(start), lines.end());
            seen = seenSet.count(line) != 0;
          }
        }
        if (!seen) {
          if (!any || line > highest) highest = line;
          lines.push_back(line);
          if (!seenSet.empty()) seenSet.insert(line);
        }
        last = line;
      }
      if (line == lastLine) break;
    }
  }
}

}  // namespace

void coalesceLanes(const sched::WarpStep& step, uint32_t lineShift, std::vector<uint64_t>& lines) {
  appendDistinctLines(step, 0, step.lanes.size(), lineShift, lines);
}

uint32_t wideAccessPartLanes(const sched::WarpStep& step, uint32_t warpSize) {
  uint32_t largest = 0;
  for (const sched::LaneAccess& lane : step.lanes) largest = std::max(largest, lane.size);
  if (largest > 8) return std::max(warpSize / 4, 1u);
  if (largest > 4) return std::max(warpSize / 2, 1u);
  return warpSize;
}

namespace {

// One access of at most 16 bytes a lane: each part's distinct lines in turn.
void appendPartLines(const sched::WarpStep& step, uint32_t lineShift, uint32_t warpSize, std::vector<uint64_t>& lines) {
  const uint32_t part = wideAccessPartLanes(step, warpSize);
  // Lanes are in ascending local id and a warp's threads are consecutive local ids from a
  // multiple of the warp size, so each part's lanes are consecutive in the list.
  size_t begin = 0;
  while (begin < step.lanes.size()) {
    const uint32_t which = (step.lanes[begin].localThread % warpSize) / part;
    size_t end = begin + 1;
    while (end < step.lanes.size() && (step.lanes[end].localThread % warpSize) / part == which) ++end;
    appendDistinctLines(step, begin, end, lineShift, lines);
    begin = end;
  }
}

}  // namespace

void coalesceWideAccess(const sched::WarpStep& step, uint32_t lineShift, uint32_t warpSize,
                        std::vector<uint64_t>& lines) {
  uint32_t largest = 0;
  for (const sched::LaneAccess& lane : step.lanes) {
    if (lane.size > kMaxLaneAccessBytes) throw laneTooLarge(step, lane);
    largest = std::max(largest, lane.size);
  }
  if (largest <= kWideWordBytes) {
    appendPartLines(step, lineShift, warpSize, lines);
    return;
  }
  // Wider lanes (a double4, a float8, a struct copied whole) are issued as 16-byte words, one
  // after the other, as the GPU's several vector loads or stores: word w is bytes [16w, 16w + 16)
  // of every lane that long, split into parts by its own width.
  sched::WarpStep word = step;
  for (uint64_t offset = 0; offset < largest; offset += kWideWordBytes) {
    word.lanes.clear();
    for (const sched::LaneAccess& lane : step.lanes) {
      uint64_t address = 0;
      // (A word that would start past the end of the address space is left out: an earlier word
      // of the lane reached its last line, where bytes past the end count, as for any lane.)
      if ((lane.size <= offset && offset != 0) || __builtin_add_overflow(lane.address, offset, &address)) continue;
      const auto size = static_cast<uint32_t>(std::min<uint64_t>(kWideWordBytes, lane.size - std::min<uint64_t>(lane.size, offset)));
      word.lanes.push_back(sched::LaneAccess{lane.localThread, size, address});
    }
    appendPartLines(word, lineShift, warpSize, lines);
  }
}

}  // namespace cltrace::cachesim
