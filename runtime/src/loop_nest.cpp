#include "cltrace/loop_nest.h"

#include <algorithm>

namespace cltrace {

std::vector<uint32_t> LoopNest::chain(uint32_t instruction) const {
  std::vector<uint32_t> loops;
  if (instruction >= innermost.size()) return loops;
  for (uint32_t l = innermost[instruction]; l != kNone; l = parent[l]) loops.push_back(l);
  std::reverse(loops.begin(), loops.end());
  return loops;
}

std::string loopNestProblem(const LoopNest& nest, const std::vector<uint32_t>& depths) {
  using std::to_string;
  // Depth of each loop from its parent's, which comes first: no walk up the chain per
  // instruction (a corrupt file could make that quadratic).
  std::vector<uint32_t> depth(nest.parent.size());
  for (size_t l = 0; l < nest.parent.size(); ++l) {
    const uint32_t p = nest.parent[l];
    if (p == LoopNest::kNone) {
      depth[l] = 1;
    } else if (p >= l) {
      return "loop " + to_string(l) + " names loop " + to_string(p) + " as its parent, which is not numbered before it";
    } else {
      depth[l] = depth[p] + 1;
    }
  }
  if (nest.innermost.size() != depths.size())
    return "the loop table names the loops of " + to_string(nest.innermost.size()) + " instructions, not of " +
           to_string(depths.size());
  for (size_t i = 0; i < nest.innermost.size(); ++i) {
    const uint32_t l = nest.innermost[i];
    if (l != LoopNest::kNone && l >= nest.parent.size())
      return "instruction " + to_string(i) + " is in loop " + to_string(l) + ", but the table has " +
             to_string(nest.parent.size()) + (nest.parent.size() == 1 ? " loop" : " loops");
    const uint32_t d = l == LoopNest::kNone ? 0 : depth[l];
    if (d != depths[i])
      return "instruction " + to_string(i) + " has loop depth " + to_string(depths[i]) + ", but the loop table puts it in " +
             to_string(d) + (d == 1 ? " loop" : " loops");
  }
  return {};
}

}  // namespace cltrace
