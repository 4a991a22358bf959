#include "cltrace/passes/atomic_dependence.h"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/ADT/SmallVector.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>

#include "cltrace/passes/access_enumeration.h"

using namespace llvm;

namespace cltrace::passes {

namespace {

// The loads in `f` of memory whose underlying object is `object` (a private variable, a
// __local variable, a pointer argument), through the casts and element pointers derived from it.
void loadsFrom(const Value* object, const Function& f, SmallVectorImpl<const Instruction*>& out) {
  for (const BasicBlock& block : f)
    for (const Instruction& inst : block)
      if (const auto* load = dyn_cast<LoadInst>(&inst); load && getUnderlyingObject(load->getPointerOperand()) == object)
        out.push_back(load);
}

// Every value computed from `atomic`'s result.
SmallPtrSet<const Value*, 32> valuesFrom(const Instruction* atomic) {
  SmallPtrSet<const Value*, 32> tainted{atomic};
  SmallPtrSet<const Value*, 4> objects;
  SmallVector<const Value*, 16> work{atomic};
  while (!work.empty()) {
    const Value* v = work.pop_back_val();
    for (const User* u : v->users()) {
      const auto* inst = dyn_cast<Instruction>(u);
      if (!inst) continue;
      if (const auto* store = dyn_cast<StoreInst>(inst)) {
        // Kept in memory and read back: a private variable (a union, say, which SROA may leave
        // in memory), or __local or __global memory that work-items read after a barrier (a
        // workgroup's base slot taken by one atomic_add and shared through a __local variable).
        if (store->getValueOperand() != v) continue;
        const Value* object = getUnderlyingObject(store->getPointerOperand());
        if (!isa<AllocaInst>(object) && !isa<GlobalVariable>(object) && !isa<Argument>(object)) continue;
        if (!objects.insert(object).second) continue;
        SmallVector<const Instruction*, 8> loads;
        loadsFrom(object, *atomic->getFunction(), loads);
        for (const Instruction* load : loads)
          if (tainted.insert(load).second) work.push_back(load);
        continue;
      }
      if (inst->getType()->isVoidTy()) continue;  // branches are looked at below
      if (tainted.insert(inst).second) work.push_back(inst);
    }
  }
  return tainted;
}

}  // namespace

std::vector<AtomicSteering> atomicSteering(
    const std::vector<const Instruction*>& atomics,
    const std::vector<std::pair<const Instruction*, std::vector<const Value*>>>& accesses) {
  std::vector<AtomicSteering> out;
  for (const Instruction* atomic : atomics) {
    const SmallPtrSet<const Value*, 32> tainted = valuesFrom(atomic);
    AtomicSteering s{atomic, nullptr, nullptr};
    for (const BasicBlock& block : *atomic->getFunction()) {
      const Value* condition = block.getTerminator() ? branchCondition(block.getTerminator()) : nullptr;
      if (condition && tainted.count(condition)) {
        s.branch = block.getTerminator();
        break;
      }
    }
    for (const auto& [inst, values] : accesses) {
      for (const Value* v : values)
        if (v && tainted.count(v)) s.access = inst;
      if (s.access) break;
    }
    if (s.branch || s.access) out.push_back(s);
  }
  return out;
}

}  // namespace cltrace::passes
