#include "cltrace/passes/count_slicing.h"

#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/Transforms/Utils/Local.h>

#include <set>

#include "cltrace/passes/access_enumeration.h"

using namespace llvm;

namespace cltrace::passes {

namespace {

bool isBarrierOrFence(const CallBase& call) {
  const Function* callee = call.getCalledFunction();
  return callee && fenceBuiltin(callee->getName());
}

// Values derived from data the count run would no longer see as the program does once its
// global stores are gone, and whether any of them steers control flow or an address.
class TaintAnalysis {
 public:
  explicit TaintAnalysis(Function& f) : f_(f) {}

  bool storesAreUnobservable() {
    // Which memory may be written, and how; calls that read memory give tainted results.
    for (Instruction& i : instructions(f_)) {
      if (auto* s = dyn_cast<StoreInst>(&i)) {
        // Only private, local and global stores: a store through any other space (generic), or
        // through a private pointer made from an integer (`*(float*)(ulong)&a[x]`), might write
        // a buffer and would stay, so the count run would write buffers.
        const unsigned space = s->getPointerAddressSpace();
        if (!s->isSimple() || (space != 0 && space != kLocalAddressSpace && space != kGlobalAddressSpace) ||
            (space == 0 && mayReachGlobal(s->getPointerOperand())))
          return false;
        if (space == kGlobalAddressSpace) globalStores_.push_back(s);
        continue;
      }
      if (auto* call = dyn_cast<CallBase>(&i)) {
        if (call->doesNotAccessMemory() || isa<DbgInfoIntrinsic>(call)) continue;
        if (auto* ii = dyn_cast<IntrinsicInst>(call); ii && ii->isAssumeLikeIntrinsic()) continue;
        if (isBarrierOrFence(*call)) continue;
        if (!call->onlyReadsMemory()) return false;  // atomics, memcpy, vstore, unknown functions
        addSource(call);
        continue;
      }
      if (i.mayWriteToMemory()) return false;  // atomicrmw, cmpxchg, fence instructions
      if (auto* l = dyn_cast<LoadInst>(&i); l && l->getPointerAddressSpace() != kConstantAddressSpace &&
                                          l->getPointerAddressSpace() != kLocalAddressSpace &&
                                          (l->getPointerAddressSpace() != 0 || mayReachGlobal(l->getPointerOperand())))
        addSource(l);  // global (or any other space that may alias a global buffer)
    }
    return propagate();
  }

  // The kernel's global stores (complete once storesAreUnobservable() returned true).
  std::vector<StoreInst*>& globalStores() { return globalStores_; }

 private:
  void addSource(Value* v) {
    if (tainted_.insert(v).second) work_.push_back(v);
  }

  // Taints every load from `space` (a private or local memory a tainted value was stored to).
  void taintLoadsFrom(unsigned space) {
    if (!taintedSpaces_.insert(space).second) return;
    for (Instruction& i : instructions(f_))
      if (auto* l = dyn_cast<LoadInst>(&i); l && l->getPointerAddressSpace() == space) addSource(l);
  }

  // False as soon as a tainted value reaches a condition or a pointer.
  bool propagate() {
    while (!work_.empty()) {
      Value* v = work_.back();
      work_.pop_back();
      if (v->getType()->isPtrOrPtrVectorTy()) return false;
      for (User* u : v->users()) {
        auto* i = dyn_cast<Instruction>(u);
        if (!i) return false;
        if (isa<BranchInst>(i) || isa<SwitchInst>(i) || isa<IndirectBrInst>(i) || isa<CallBrInst>(i) ||
            isa<ReturnInst>(i))
          return false;
        if (auto* s = dyn_cast<StoreInst>(i)) {
          if (s->getPointerOperand() == v) return false;
          unsigned space = s->getPointerAddressSpace();
          if (space == kGlobalAddressSpace) continue;  // the store goes away
          if (space != 0 && space != kLocalAddressSpace) return false;
          taintLoadsFrom(space);
          continue;
        }
        if (auto* call = dyn_cast<CallBase>(i); call && !call->doesNotAccessMemory() && !call->onlyReadsMemory() &&
                                                 !isa<DbgInfoIntrinsic>(call))
          return false;  // barrier or fence flags, an assume: keep it simple
        addSource(i);
      }
    }
    return true;
  }

  Function& f_;
  SmallPtrSet<Value*, 32> tainted_;
  std::vector<Value*> work_;
  std::set<unsigned> taintedSpaces_;
  std::vector<StoreInst*> globalStores_;
};

}  // namespace

std::optional<std::vector<StoreInst*>> countRunRemovableStores(Function& kernel) {
  TaintAnalysis analysis(kernel);
  if (!analysis.storesAreUnobservable()) return std::nullopt;
  return std::move(analysis.globalStores());
}

void eraseStoresAndDeadOperands(const std::vector<StoreInst*>& stores) {
  if (stores.empty()) return;
  Function& f = *stores.front()->getFunction();
  for (StoreInst* s : stores) s->eraseFromParent();
  // What no longer reaches a side effect or a branch goes, phis that only feed each other
  // included (a value carried round a loop for a store that is gone: invariant_loads.h).
  SmallPtrSet<Instruction*, 32> live;
  std::vector<Instruction*> work;
  for (Instruction& i : instructions(f))
    if (i.isTerminator() || i.mayHaveSideEffects() || i.isEHPad()) {
      live.insert(&i);
      work.push_back(&i);
    }
  while (!work.empty()) {
    Instruction* i = work.back();
    work.pop_back();
    for (Value* operand : i->operands())
      if (auto* o = dyn_cast<Instruction>(operand); o && live.insert(o).second) work.push_back(o);
  }
  std::vector<Instruction*> dead;
  for (Instruction& i : instructions(f))
    if (!live.count(&i)) dead.push_back(&i);
  for (Instruction* i : dead) i->dropAllReferences();
  for (Instruction* i : dead) i->eraseFromParent();
}

}  // namespace cltrace::passes
