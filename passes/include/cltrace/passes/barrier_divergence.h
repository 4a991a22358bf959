#pragma once
// Barriers that the work-items of one workgroup may not all reach: OpenCL leaves such a barrier
// undefined (every work-item must reach it, or none), and a device may hang or crash on it
// (PoCL's trace run hangs on an early return before a barrier; PoCL crashes on some such kernels,
// instrumented or not). Found statically, as barriers inside the
// region a branch on the work-item's id controls.

#include <llvm/IR/Function.h>
#include <llvm/IR/Instruction.h>

#include <vector>

namespace cltrace::passes {

struct DivergentBarrier {
  const llvm::Instruction* barrier;  // one of the barriers asked about
  const llvm::Instruction* branch;   // the first branch on an id that leads to it or around it
  const llvm::Value* condition;      // what that branch tests
};

// The `barriers` of `kernel` that lie between a branch whose condition depends on
// get_local_id/get_global_id (their linear and sub-group forms, or a work-group scan) and the
// point where the branch's ways meet again (its immediate post-dominator, over the ways that
// reach a return: one ending in `unreachable` is not taken): work-items that branch differently
// there may pass the barrier different numbers of times. Dependence is followed through values
// and through the phis where such a branch's ways meet, not through memory; conditions on other
// values (arguments, group ids, loaded data, work-group reductions, get_global_id -
// get_local_id) count as uniform. A value every work-item of a group computes alike from its
// id otherwise (the tile of (gx / 16) * 16 when the local size is 16) still counts as
// dependent.
std::vector<DivergentBarrier> divergentBarriers(const llvm::Function& kernel,
                                                const std::vector<const llvm::Instruction*>& barriers);

}  // namespace cltrace::passes
