// Each instruction's enclosing loops, from a kernel's LoopNest (loop_nest.h), kept as rows of
// kMaxLoopDepth loop numbers (outermost first, as records keep their counters) so that the
// program-order comparison reads two rows to find the loops two instructions share.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "cltrace/loop_nest.h"
#include "cltrace/record.h"

namespace cltrace::sched::detail {

class LoopChains {
 public:
  LoopChains() = default;
  // Throws std::invalid_argument when `nest` names a loop that does not exist or a parent
  // numbered after its loop (a trace file's nest has been checked by its reader already).
  explicit LoopChains(const LoopNest& nest) : instructions_(static_cast<uint32_t>(nest.innermost.size())) {
    // Each loop's row from its parent's (numbered before it): linear in the table, however
    // deep the loops nest.
    const size_t loops = nest.parent.size();
    std::vector<uint32_t> loopRows(loops * kMaxLoopDepth, LoopNest::kNone);
    std::vector<uint32_t> depth(loops, 0);  // levels kept in the row (at most kMaxLoopDepth)
    for (size_t l = 0; l < loops; ++l) {
      const uint32_t p = nest.parent[l];
      if (p != LoopNest::kNone && p >= l)
        throw std::invalid_argument("scheduler: loop " + std::to_string(l) + " of the loop nest names loop " +
                                    std::to_string(p) + " as its parent, which is not numbered before it");
      uint32_t* row = &loopRows[l * kMaxLoopDepth];
      if (p != LoopNest::kNone) {
        std::copy_n(&loopRows[size_t(p) * kMaxLoopDepth], kMaxLoopDepth, row);
        depth[l] = depth[p];
      }
      if (depth[l] < kMaxLoopDepth) row[depth[l]++] = static_cast<uint32_t>(l);  // deeper loops share the row
    }
    rows_.assign(size_t(instructions_) * kMaxLoopDepth, LoopNest::kNone);
    for (uint32_t i = 0; i < instructions_; ++i) {
      const uint32_t innermost = nest.innermost[i];
      if (innermost == LoopNest::kNone) continue;
      if (innermost >= loops)
        throw std::invalid_argument("scheduler: instruction " + std::to_string(i) + " of the loop nest is in loop " +
                                    std::to_string(innermost) + ", but the nest has " + std::to_string(loops) +
                                    (loops == 1 ? " loop" : " loops"));
      std::copy_n(&loopRows[size_t(innermost) * kMaxLoopDepth], kMaxLoopDepth, &rows_[size_t(i) * kMaxLoopDepth]);
    }
  }

  // Both instructions are in the nest (otherwise the caller infers the loops they share).
  bool covers(uint32_t a, uint32_t b) const { return a < instructions_ && b < instructions_; }
  // The levels k < limit, counted from the outermost, at which `a` and `b` (covered) lie in the
  // same loop: where their k-th counters count iterations of one loop.
  uint32_t shared(uint32_t a, uint32_t b, uint32_t limit) const {
    const uint32_t* ra = &rows_[size_t(a) * kMaxLoopDepth];
    const uint32_t* rb = &rows_[size_t(b) * kMaxLoopDepth];
    uint32_t k = 0;
    while (k < limit && k < kMaxLoopDepth && ra[k] == rb[k] && ra[k] != LoopNest::kNone) ++k;
    return k;
  }

 private:
  uint32_t instructions_ = 0;
  std::vector<uint32_t> rows_;
};

}  // namespace cltrace::sched::detail
