// Each instruction's enclosing loops, from a kernel's LoopNest (loop_nest.h), kept as rows of
// kMaxLoopDepth loop numbers (outermost first, as records keep their counters) so that the
// program-order comparison reads two rows to find the loops two instructions share.
#pragma once

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
    for (size_t l = 0; l < nest.parent.size(); ++l)
      if (nest.parent[l] != LoopNest::kNone && nest.parent[l] >= l)
        throw std::invalid_argument("scheduler: loop " + std::to_string(l) + " of the loop nest names loop " +
                                    std::to_string(nest.parent[l]) + " as its parent, which is not numbered before it");
    rows_.assign(size_t(instructions_) * kMaxLoopDepth, LoopNest::kNone);
    std::vector<uint32_t> chain;
    for (uint32_t i = 0; i < instructions_; ++i) {
      const uint32_t innermost = nest.innermost[i];
      if (innermost != LoopNest::kNone && innermost >= nest.parent.size())
        throw std::invalid_argument("scheduler: instruction " + std::to_string(i) + " of the loop nest is in loop " +
                                    std::to_string(innermost) + ", but the nest has " +
                                    std::to_string(nest.parent.size()) + (nest.parent.size() == 1 ? " loop" : " loops"));
      chain.clear();
      for (uint32_t l = innermost; l != LoopNest::kNone; l = nest.parent[l]) chain.push_back(l);
      for (size_t k = 0; k < chain.size() && k < kMaxLoopDepth; ++k) rows_[size_t(i) * kMaxLoopDepth + k] = chain[chain.size() - 1 - k];
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
