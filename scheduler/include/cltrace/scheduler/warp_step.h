// The unit the scheduler hands to the cache simulator: one SIMT step of one warp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "cltrace/record.h"

namespace cltrace::sched {

// One thread's access within a SIMT step.
// 16 bytes (the two 32-bit fields share a word): a warp step's 32 lanes fill 8 host cache lines.
struct LaneAccess {
  uint32_t localThread = 0;  // linear local id within the workgroup (x fastest)
  uint32_t size = 0;
  uint64_t address = 0;
};
static_assert(sizeof(LaneAccess) == 16);

// What a source can note about a step's lanes while it fills them, so that the simulator's
// coalescer need not read the lanes again to find that they lie within one cache line or two
// (most steps do): the OR, the AND, the lowest and the highest of the lane addresses and the
// OR of the lane sizes.
struct LaneBounds {
  uint64_t addressOr = 0;
  uint64_t addressAnd = ~uint64_t{0};
  uint64_t addressMin = ~uint64_t{0};
  uint64_t addressMax = 0;
  uint32_t sizeOr = 0;

  LaneBounds() = default;  // of no lanes
  LaneBounds(uint64_t addressOr_, uint64_t addressAnd_, uint64_t addressMin_, uint64_t addressMax_, uint32_t sizeOr_)
      : addressOr(addressOr_), addressAnd(addressAnd_), addressMin(addressMin_), addressMax(addressMax_), sizeOr(sizeOr_) {}
  void add(uint64_t address, uint32_t size) {
    addressOr |= address;
    addressAnd &= address;
    addressMin = address < addressMin ? address : addressMin;
    addressMax = address > addressMax ? address : addressMax;
    sizeOr |= size;
  }
};

// All threads of a warp that issue the same instruction (same static id and same loop
// iteration vector) together. Barrier steps are emitted too (kind Barrier, no lanes needed
// for the cache, but lanes list the threads that arrived) so consumers can see them.
struct WarpStep {
  uint32_t sm = 0;
  uint64_t workgroup = 0;    // linear workgroup id (x fastest)
  uint32_t warp = 0;         // warp index within the workgroup
  uint64_t step = 0;         // SIMT step counter of this warp (0, 1, 2, ...)
  uint64_t warpKey = 0;      // unique id of this warp in the whole launch (for delayWarp)
  uint64_t cycle = 0;        // SM cycle at which the step issues (one step per SM per cycle;
                             // without delayWarp calls it counts the SM's issue slots)
  uint32_t instruction = 0;
  AccessKind kind = AccessKind::Load;
  uint8_t flags = 0;
  std::vector<LaneAccess> lanes;  // ascending localThread
  // Bounds of exactly `lanes` when hasBounds (set by the source that filled them; a caller
  // that reuses a step clears hasBounds before asking a source for the next one).
  LaneBounds bounds;
  bool hasBounds = false;
};

// Issue order: ascending cycle, ties by SM index. Whether a step at (cycle, sm) comes before
// one at (otherCycle, otherSm).
inline bool issuesBefore(uint64_t cycle, uint32_t sm, uint64_t otherCycle, uint32_t otherSm) {
  return cycle < otherCycle || (cycle == otherCycle && sm < otherSm);
}

// What nextBefore() did.
enum class NextStep : uint8_t {
  Issued,     // `out` holds the next step
  NotBefore,  // the next step would issue at or after the limit: nothing was issued
  Finished,   // every warp has finished
};

// What the cache simulator drives: the scheduler, step by step.
class StepSource {
 public:
  virtual ~StepSource() = default;
  // Produces the next step in issue order (ordered by cycle across SMs, ties by SM index).
  // Returns false when every warp has finished.
  virtual bool next(WarpStep& out) = 0;
  // As next(), but only a step that issues before (cycle, sm) in issue order; otherwise
  // returns NotBefore having issued nothing. A caller with work due at (cycle, sm) that may
  // delay warps (a retry of a stalled request) asks this way, does that work, then asks again,
  // so that the delays it makes apply before those warps issue again. A source that cannot
  // hold a step back (a recorded order) issues it anyway, as next() does: the caller then does
  // its work due before that step first, but delays come too late for it.
  virtual NextStep nextBefore(WarpStep& out, uint64_t cycle, uint32_t sm) {
    (void)cycle;
    (void)sm;
    return next(out) ? NextStep::Issued : NextStep::Finished;
  }
  // The warp `warpKey` may not issue its next step before `readyCycle` (a miss latency or an
  // MSHR stall). Called after next() returned a step of that warp.
  virtual void delayWarp(uint64_t warpKey, uint64_t readyCycle) = 0;
  // delayWarp(warpKeys[i], readyCycle) for i = 0 .. count - 1, in that order: warps that find
  // an SM's MSHRs taken all wait for its next fill, so the simulator delays them together.
  virtual void delayWarps(const uint64_t* warpKeys, size_t count, uint64_t readyCycle) {
    for (size_t i = 0; i < count; ++i) delayWarp(warpKeys[i], readyCycle);
  }
  // The SMs, ascending, that receive a workgroup with accesses: the other SMs' L1s see nothing
  // (a launch with fewer workgroups than SMs, or whose workgroups on some SMs make no access).
  // Sources that do not know return nullopt. May cost a pass over the input (a scheduled file).
  virtual std::optional<std::vector<uint32_t>> busySms() const { return std::nullopt; }
  // Those of busySms() whose workgroups make global loads: only their L1s can have a read miss
  // rate (an SM whose workgroups only store has none). Defaults to busySms().
  virtual std::optional<std::vector<uint32_t>> readingSms() const { return busySms(); }
};

}  // namespace cltrace::sched
