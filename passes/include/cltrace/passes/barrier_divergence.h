#pragma once
// Barriers that the work-items of one workgroup may not all reach: OpenCL leaves such a barrier
// undefined (every work-item must reach it, or none), and a device may hang on it (PoCL's trace
// run does on an early return before a barrier). Found statically, as barriers inside the
// region a branch on the work-item's id controls.

#include <llvm/IR/Function.h>
#include <llvm/IR/Instruction.h>

#include <vector>

namespace cltrace::passes {

struct DivergentBarrier {
  const llvm::Instruction* barrier;  // one of the barriers asked about
  const llvm::Instruction* branch;   // the first branch on an id that leads to it or around it
};

// The `barriers` of `kernel` that lie between a branch whose condition depends on
// get_local_id/get_global_id (or their linear forms) and the point where the branch's ways
// meet again (its immediate post-dominator): work-items that branch differently there may pass
// the barrier different numbers of times. Dependence is followed through values, not through
// memory; conditions on other values (arguments, group ids, loaded data) count as uniform.
std::vector<DivergentBarrier> divergentBarriers(const llvm::Function& kernel,
                                                const std::vector<const llvm::Instruction*>& barriers);

}  // namespace cltrace::passes
