// Coalescing of one SIMT step: the distinct cache lines its lanes touch, one L1 request each.
//
// A lane access [address, address + size) touches every line it overlaps (an access that spans
// a line boundary touches both lines); a size of 0 counts as 1 byte. Lines are returned in the
// order the lanes first touch them (lanes are in ascending local thread order).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
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
  // Fast path: every byte of the step within one line (coalesced or broadcast accesses). The
  // addresses agree above lineShift when their OR and AND do; every lane ends inside the line
  // when the OR of the in-line offsets (at least the largest offset) plus the OR of the sizes
  // (at least the largest size) stays within it. Three ORs/ANDs per lane; a step this bound is
  // too loose for (rare) takes the exact path below.
  uint64_t anyBits = 0, allBits = ~uint64_t{0}, sizeBits = 0;
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  // A lane is 16 bytes {localThread, size, address}: one vector OR and AND per lane.
  static_assert(sizeof(sched::LaneAccess) == 16 && offsetof(sched::LaneAccess, size) == 4 &&
                offsetof(sched::LaneAccess, address) == 8);
  using Lane = uint64_t __attribute__((vector_size(16)));
  // Four independent accumulator pairs (a single chain would wait an OR/AND latency per lane),
  // written out: GCC keeps an array of them in memory.
  const Lane ones = {~uint64_t{0}, ~uint64_t{0}};
  Lane any0 = {0, 0}, any1 = any0, any2 = any0, any3 = any0;
  Lane all0 = ones, all1 = ones, all2 = ones, all3 = ones;
  const sched::LaneAccess* lane = step.lanes.data();
  const size_t count = step.lanes.size();
  auto load = [lane](size_t i) {
    Lane v;
    std::memcpy(&v, &lane[i], sizeof v);
    return v;
  };
  size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    const Lane v0 = load(i), v1 = load(i + 1), v2 = load(i + 2), v3 = load(i + 3);
    any0 |= v0;
    all0 &= v0;
    any1 |= v1;
    all1 &= v1;
    any2 |= v2;
    all2 &= v2;
    any3 |= v3;
    all3 &= v3;
  }
  for (; i < count; ++i) {
    const Lane v = load(i);
    any0 |= v;
    all0 &= v;
  }
  const Lane anyAll = (any0 | any1) | (any2 | any3);
  const Lane allAll = (all0 & all1) & (all2 & all3);
  anyBits = anyAll[1];
  allBits = allAll[1];
  sizeBits = anyAll[0] >> 32;
#else
  for (const sched::LaneAccess& lane : step.lanes) {
    anyBits |= lane.address;
    allBits &= lane.address;
    sizeBits |= lane.size;
  }
#endif
  const uint64_t offsetMask = (uint64_t{1} << lineShift) - 1;
  if (((anyBits ^ allBits) >> lineShift) == 0 && (anyBits & offsetMask) + sizeBits <= offsetMask + 1) {
    lines.push_back(allBits >> lineShift);
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
