// Coalescing of one SIMT step: the distinct cache lines its lanes touch, one L1 request each.
//
// A lane access [address, address + size) touches every line it overlaps (an access that spans
// a line boundary touches both lines); a size of 0 counts as 1 byte. Lines are returned in the
// order the lanes first touch them (lanes are in ascending local thread order).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <cstring>
#include <vector>

#include "cltrace/scheduler/warp_step.h"

namespace cltrace::cachesim {

// The largest single lane access the simulator expands into line requests (8192 lines of 128
// bytes). Real accesses are at most a few hundred bytes (double16, struct copies); a larger size
// is a corrupt trace and would otherwise take hours and gigabytes to expand.
inline constexpr uint64_t kMaxLaneAccessBytes = uint64_t{1} << 20;

// A lane access over kMaxLaneAccessBytes (a corrupt or foreign input): its own type, so that a
// caller can name the file the step came from.
class LaneSizeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The error for `lane` of `step`, which is over kMaxLaneAccessBytes (also for other consumers
// of steps that refuse what the simulator would).
LaneSizeError laneTooLarge(const sched::WarpStep& step, const sched::LaneAccess& lane);

// The bounds of `lanes` (sched::LaneBounds), for steps whose source did not note them.
inline sched::LaneBounds laneBounds(const std::vector<sched::LaneAccess>& lanes) {
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
  const sched::LaneAccess* lane = lanes.data();
  const size_t count = lanes.size();
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
  sched::LaneBounds b;
  b.addressOr = anyAll[1];
  b.addressAnd = allAll[1];
  b.sizeOr = static_cast<uint32_t>(anyAll[0] >> 32);
  for (i = 0; i < count; ++i) {
    b.addressMin = std::min(b.addressMin, lane[i].address);
    b.addressMax = std::max(b.addressMax, lane[i].address);
  }
  return b;
#else
  sched::LaneBounds b;
  for (const sched::LaneAccess& lane : lanes) b.add(lane.address, lane.size);
  return b;
#endif
}

// The exact path of coalesce(): appends the distinct lines of every lane to the empty `lines`.
void coalesceLanes(const sched::WarpStep& step, uint32_t lineShift, std::vector<uint64_t>& lines);

// Fermi issues a warp's accesses of more than 4 bytes a lane in parts (CUDA C Programming Guide,
// compute capability 2.x, global memory): one request per half-warp for 8-byte words, one per
// quarter-warp for 16-byte words, each coalesced into its lines on its own; so two parts that
// touch one line each request it. wideAccessPartLanes: the lanes of a warp of `warpSize` in one
// part, by the largest lane access of `step` (over 8 bytes: a quarter, over 4: a half, else the
// whole warp). coalesceWideAccess appends to the empty `lines` the distinct lines of each part
// in turn (a line may come once per part), parts by local id (localThread % warpSize). Lanes of
// more than kWideWordBytes (a double4, a float8, a struct copied whole) are issued as 16-byte
// words one after the other, as the GPU's several vector instructions: word w is bytes
// [16w, 16w + 16) of every lane that long, in parts by its own width (a 32-byte lane: two words,
// each per quarter-warp; a 24-byte one: a 16-byte word per quarter, then an 8-byte one per half).
// Throws LaneSizeError for a lane access over kMaxLaneAccessBytes.
inline constexpr uint32_t kWideWordBytes = 16;
uint32_t wideAccessPartLanes(const sched::WarpStep& step, uint32_t warpSize);
void coalesceWideAccess(const sched::WarpStep& step, uint32_t lineShift, uint32_t warpSize,
                        std::vector<uint64_t>& lines);

// The lines of `step` when its lane bounds settle them, without reading the lanes again
// (sources note the bounds as they fill the lanes; for other steps they are computed here):
//  1: every byte lies in one line, lines[0]. The addresses agree above lineShift when their OR
//     and AND do; every lane ends inside its line when the OR of the in-line offsets (at least
//     the largest offset) plus the OR of the sizes (at least the largest size) stays within one.
//  2: no lane crosses a line end and either the line numbers' OR and AND differ in one bit (two
//     rows of a 2D workgroup; a warp straddling the boundary after an even line) or the lowest
//     and the highest address lie in adjacent lines (a warp straddling any boundary), so each
//     lane is in one of those two lines and both are touched. lines[0] is lane 0's line, the
//     first touched.
//  0: neither: the exact path, coalesceLanes.
inline int linesFromBounds(const sched::WarpStep& step, uint32_t lineShift, uint64_t lines[2]) {
  if (step.lanes.empty()) return 0;
  const sched::LaneBounds b = step.hasBounds ? step.bounds : laneBounds(step.lanes);
  const uint64_t offsetMask = (uint64_t{1} << lineShift) - 1;
  if ((b.addressOr & offsetMask) + b.sizeOr > offsetMask + 1) return 0;  // a lane may cross
  const uint64_t low = b.addressAnd >> lineShift, differ = (b.addressOr >> lineShift) ^ low;
  if (differ == 0) {
    lines[0] = low;
    return 1;
  }
  lines[0] = step.lanes[0].address >> lineShift;
  if ((differ & (differ - 1)) == 0) {
    lines[1] = lines[0] ^ differ;
    return 2;
  }
  const uint64_t lowest = b.addressMin >> lineShift, highest = b.addressMax >> lineShift;
  if (highest != lowest + 1) return 0;
  lines[1] = lines[0] == lowest ? highest : lowest;
  return 2;
}

// Replaces `lines` with the distinct line addresses (byte address >> lineShift) of `step`.
// Throws LaneSizeError for a lane access over kMaxLaneAccessBytes.
inline void coalesce(const sched::WarpStep& step, uint32_t lineShift, std::vector<uint64_t>& lines) {
  uint64_t known[2];
  const int n = linesFromBounds(step, lineShift, known);
  lines.assign(known, known + n);
  if (n == 0) coalesceLanes(step, lineShift, lines);
}

}  // namespace cltrace::cachesim
