#include "cltrace/passes/barrier_divergence.h"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Analysis/PostDominators.h>
#include <llvm/IR/Instructions.h>

#include <map>

#include "cltrace/passes/access_enumeration.h"

using namespace llvm;

namespace cltrace::passes {

namespace {

bool isWorkItemId(const Instruction& inst) {
  const auto* call = dyn_cast<CallInst>(&inst);
  const Function* callee = call ? call->getCalledFunction() : nullptr;
  if (!callee) return false;
  const StringRef stem = demangledStem(callee->getName());
  return stem == "get_local_id" || stem == "get_global_id" || stem == "get_local_linear_id" ||
         stem == "get_global_linear_id";
}

// Values computed from a work-item id (through arithmetic, comparisons, phis, selects, calls
// and loads through an address made from one).
SmallPtrSet<const Value*, 32> idDependentValues(const Function& f) {
  SmallPtrSet<const Value*, 32> dependent;
  std::vector<const Value*> work;
  for (const BasicBlock& block : f)
    for (const Instruction& inst : block)
      if (isWorkItemId(inst) && dependent.insert(&inst).second) work.push_back(&inst);
  while (!work.empty()) {
    const Value* v = work.back();
    work.pop_back();
    for (const User* user : v->users()) {
      const auto* inst = dyn_cast<Instruction>(user);
      if (!inst || inst->getType()->isVoidTy()) continue;
      if (dependent.insert(inst).second) work.push_back(inst);
    }
  }
  return dependent;
}

const Value* conditionOf(const Instruction* terminator) {
  if (const auto* br = dyn_cast<BranchInst>(terminator)) return br->isConditional() ? br->getCondition() : nullptr;
  if (const auto* sw = dyn_cast<SwitchInst>(terminator)) return sw->getCondition();
  return nullptr;
}

}  // namespace

std::vector<DivergentBarrier> divergentBarriers(const Function& kernel, const std::vector<const Instruction*>& barriers) {
  std::vector<DivergentBarrier> found;
  if (barriers.empty()) return found;
  const SmallPtrSet<const Value*, 32> dependent = idDependentValues(kernel);
  PostDominatorTree postDominators(const_cast<Function&>(kernel));
  std::map<const BasicBlock*, std::vector<const Instruction*>> barriersIn;
  for (const Instruction* b : barriers) barriersIn[b->getParent()].push_back(b);
  SmallPtrSet<const Instruction*, 8> reported;
  for (const BasicBlock& block : kernel) {
    const Instruction* terminator = block.getTerminator();
    const Value* condition = terminator ? conditionOf(terminator) : nullptr;
    if (!condition || !dependent.count(condition)) continue;
    // The branch's region: blocks reachable from it before its ways meet again.
    const DomTreeNode* node = postDominators.getNode(&block);
    const DomTreeNode* meet = node ? node->getIDom() : nullptr;
    const BasicBlock* join = meet ? meet->getBlock() : nullptr;  // null: the ways meet only at the exits
    SmallPtrSet<const BasicBlock*, 32> seen;
    std::vector<const BasicBlock*> work(succ_begin(&block), succ_end(&block));
    while (!work.empty()) {
      const BasicBlock* b = work.back();
      work.pop_back();
      if (b == join || !seen.insert(b).second) continue;
      auto it = barriersIn.find(b);
      if (it != barriersIn.end())
        for (const Instruction* barrier : it->second)
          if (reported.insert(barrier).second) found.push_back({barrier, terminator});
      for (const BasicBlock* next : successors(b)) work.push_back(next);
    }
  }
  return found;
}

}  // namespace cltrace::passes
