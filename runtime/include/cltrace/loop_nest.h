// The loops of a kernel as the trace pass numbered them: which loop encloses which, and the
// innermost loop of each instruction. Records carry iteration counters but not which loop each
// counter counts; with this table the scheduler compares two instructions' counters over exactly
// the loops that enclose both (docs/scheduler.md), instead of inferring them from the records.
// Trace files hold it in their header (docs/trace-format.md, flag bit 2).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cltrace {

struct LoopNest {
  static constexpr uint32_t kNone = ~uint32_t(0);

  // Per loop: the loop directly enclosing it, or kNone. A parent is numbered before its
  // children (the pass numbers loops in preorder).
  std::vector<uint32_t> parent;
  // Per instruction id: its innermost enclosing loop, or kNone.
  std::vector<uint32_t> innermost;

  // The loops enclosing `instruction`, outermost first (empty for an unknown instruction).
  // The nest must be valid (loopNestProblem).
  std::vector<uint32_t> chain(uint32_t instruction) const;

  bool operator==(const LoopNest& o) const { return parent == o.parent && innermost == o.innermost; }
};

// Why `nest` cannot describe instructions of loop depths `depths` (indexed by instruction id),
// or an empty string: a parent numbered after its loop, a loop or instruction naming a loop that
// does not exist, an instruction count that differs from depths', or an instruction whose
// enclosing loops are not `depths[i]` many. Linear in the table sizes whatever the depths.
std::string loopNestProblem(const LoopNest& nest, const std::vector<uint32_t>& depths);

}  // namespace cltrace
