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

// The loads of private variable `a`, through the casts and element pointers derived from it.
void loadsOf(const AllocaInst* a, SmallVectorImpl<const Instruction*>& out) {
  SmallVector<const Value*, 8> pointers{a};
  SmallPtrSet<const Value*, 8> seen{a};
  while (!pointers.empty()) {
    const Value* p = pointers.pop_back_val();
    for (const User* u : p->users()) {
      if (const auto* load = dyn_cast<LoadInst>(u)) {
        out.push_back(load);
      } else if ((isa<BitCastInst>(u) || isa<GetElementPtrInst>(u) || isa<AddrSpaceCastInst>(u)) &&
                 seen.insert(u).second) {
        pointers.push_back(u);
      }
    }
  }
}

// Every value computed from `atomic`'s result.
SmallPtrSet<const Value*, 32> valuesFrom(const Instruction* atomic) {
  SmallPtrSet<const Value*, 32> tainted{atomic};
  SmallPtrSet<const AllocaInst*, 4> variables;
  SmallVector<const Value*, 16> work{atomic};
  while (!work.empty()) {
    const Value* v = work.pop_back_val();
    for (const User* u : v->users()) {
      const auto* inst = dyn_cast<Instruction>(u);
      if (!inst) continue;
      if (const auto* store = dyn_cast<StoreInst>(inst)) {
        // Kept in a private variable (a union, say, which mem2reg leaves in memory).
        if (store->getValueOperand() != v) continue;
        const auto* variable = dyn_cast<AllocaInst>(getUnderlyingObject(store->getPointerOperand()));
        if (!variable || !variables.insert(variable).second) continue;
        SmallVector<const Instruction*, 8> loads;
        loadsOf(variable, loads);
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
