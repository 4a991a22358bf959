#include "cltrace/passes/branch_motion.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/PostDominators.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Instructions.h>
#include <llvm/Transforms/Utils/Local.h>

#include <utility>
#include <vector>

#include "cltrace/passes/access_enumeration.h"
#include "cltrace/passes/value_forwarding.h"  // pointerAt, materialize

using namespace llvm;

namespace cltrace::passes {

namespace {

// What may move from the start of both ways to before the branch: anything both ways would run
// first anyway, but for instructions whose place matters beyond that (phis, allocas, calls
// that touch memory or are convergent, such as barriers), stores, and loads that are not plain.
bool hoistable(const Instruction& inst) {
  if (isa<PHINode>(inst) || isa<AllocaInst>(inst) || inst.isTerminator() || inst.isEHPad()) return false;
  if (const auto* load = dyn_cast<LoadInst>(&inst)) return load->isSimple();
  if (const auto* call = dyn_cast<CallBase>(&inst)) return call->doesNotAccessMemory() && !call->isConvergent();
  return !inst.mayReadOrWriteMemory();
}

// The block below `bb` that a sunk `load` would go to: the successor of `bb` entered from `bb`
// alone, in the same loop, that dominates every use; null if there is none.
BasicBlock* sinkTarget(LoadInst& load, BasicBlock& bb, const DominatorTree& dt, const LoopInfo& li) {
  BasicBlock* common = nullptr;
  for (Use& use : load.uses()) {
    auto* user = cast<Instruction>(use.getUser());
    BasicBlock* at = user->getParent();
    if (auto* phi = dyn_cast<PHINode>(user)) at = phi->getIncomingBlock(use);
    if (at == &bb || !dt.isReachableFromEntry(at)) return nullptr;
    common = common ? dt.findNearestCommonDominator(common, at) : at;
  }
  if (!common) return nullptr;  // unused loads are DCE's
  // Up the dominator tree to the child of `bb` on the way (every use is dominated by the load).
  while (common != &bb) {
    const DomTreeNode* node = dt.getNode(common);
    if (!node || !node->getIDom()) return nullptr;
    BasicBlock* up = node->getIDom()->getBlock();
    if (up == &bb) break;
    common = up;
  }
  if (common == &bb || common->getSinglePredecessor() != &bb) return nullptr;
  if (li.getLoopFor(common) != li.getLoopFor(&bb)) return nullptr;
  return common;
}

// The plain __global or __constant store a block ends with, just before its unconditional
// branch; null if there is none.
StoreInst* finalStore(BasicBlock& bb) {
  auto* branch = dyn_cast<BranchInst>(bb.getTerminator());
  if (!branch || branch->isConditional()) return nullptr;
  auto* store = dyn_cast_or_null<StoreInst>(branch->getPrevNonDebugInstruction());
  return store && store->isSimple() && isRecordedSpace(store->getPointerAddressSpace()) ? store : nullptr;
}

// Whether two pointers are one address as LLVM's basic alias analysis proves it (what lets
// MergedLoadStoreMotion merge two stores): one value, or address arithmetic of the same values.
// `c[i]` computed in each way from an index converted in each (`sext i` twice) is not, and the
// GPU compiler leaves such stores apart.
bool oneAddress(const Value* a, const Value* b) {
  if (a == b) return true;
  const auto* x = dyn_cast<GetElementPtrInst>(a);
  const auto* y = dyn_cast<GetElementPtrInst>(b);
  if (!x || !y || !x->isSameOperationAs(y)) return false;
  for (unsigned k = 0; k < x->getNumOperands(); ++k)
    if (x->getOperand(k) != y->getOperand(k)) return false;
  return true;
}

}  // namespace

bool sinkCommonStores(Function& f) {
  DominatorTree dt(f);
  bool changed = false;
  for (BasicBlock& join : f) {
    // The two ways of one branch, meeting here (MergedLoadStoreMotion's diamond; other ways may
    // meet them here too).
    if (!join.hasNPredecessors(2)) continue;
    BasicBlock* one = *pred_begin(&join);
    BasicBlock* other = *std::next(pred_begin(&join));
    if (one == other || !one->getSinglePredecessor() || one->getSinglePredecessor() != other->getSinglePredecessor())
      continue;
    for (;;) {  // the pair the ways end with, then the pair before it, ...
      StoreInst* a = finalStore(*one);
      StoreInst* b = finalStore(*other);
      if (!a || !b || a->getValueOperand()->getType() != b->getValueOperand()->getType() ||
          !oneAddress(a->getPointerOperand(), b->getPointerOperand()))
        break;
      Instruction* at = &*join.getFirstInsertionPt();
      if (!pointerAt(a->getPointerOperand(), at, dt)) break;
      Value* value = a->getValueOperand();
      if (value != b->getValueOperand()) {
        PHINode* phi = PHINode::Create(value->getType(), 2, "cltrace.stored", &join.front());
        phi->addIncoming(a->getValueOperand(), one);
        phi->addIncoming(b->getValueOperand(), other);
        value = phi;
      }
      auto* store = new StoreInst(value, materialize(a->getPointerOperand(), at, dt), false,
                                  std::min(a->getAlign(), b->getAlign()), at);
      store->setAAMetadata(a->getAAMetadata().merge(b->getAAMetadata()));
      store->setDebugLoc(a->getDebugLoc());
      for (StoreInst* old : {a, b}) {
        Value* pointer = old->getPointerOperand();
        old->eraseFromParent();
        RecursivelyDeleteTriviallyDeadInstructions(pointer);  // the way's own address arithmetic
      }
      changed = true;
    }
  }
  return changed;
}

bool hoistCommonStarts(Function& f) {
  bool changed = false;
  for (BasicBlock& bb : f) {
    auto* branch = dyn_cast<BranchInst>(bb.getTerminator());
    if (!branch || !branch->isConditional()) continue;
    BasicBlock* one = branch->getSuccessor(0);
    BasicBlock* other = branch->getSuccessor(1);
    if (one == other || one->getSinglePredecessor() != &bb || other->getSinglePredecessor() != &bb) continue;
    // The run both ways start with.
    std::vector<std::pair<Instruction*, Instruction*>> run;
    Instruction* a = one->getFirstNonPHIOrDbg();
    Instruction* b = other->getFirstNonPHIOrDbg();
    // Identical, taking an earlier instruction of the run as the same as its twin on the other way.
    auto twins = [&](const Value* p, const Value* q) {
      for (auto& [x, y] : run)
        if (p == x) return q == y;
      return p == q;
    };
    auto identical = [&](const Instruction* p, const Instruction* q) {
      if (!p->isSameOperationAs(q) || !p->hasSameSubclassOptionalData(q)) return false;
      for (unsigned k = 0; k < p->getNumOperands(); ++k)
        if (!twins(p->getOperand(k), q->getOperand(k))) return false;
      return true;
    };
    while (a && b && hoistable(*a) && identical(a, b)) {
      run.emplace_back(a, b);
      a = a->getNextNonDebugInstruction();
      b = b->getNextNonDebugInstruction();
    }
    if (run.empty()) continue;
    for (auto& [x, y] : run) {
      x->moveBefore(branch);
      y->replaceAllUsesWith(x);
      y->eraseFromParent();
    }
    changed = true;
  }
  return changed;
}

bool sinkLoadsToUses(Function& f) {
  // A barrier (or other convergent call) that not every run of the kernel passes: PoCL runs the
  // work-items' code after such a barrier its own way, and an access moved into one way of a
  // branch there was counted differently by the count run than by the trace run, so the trace
  // of a kernel traced well before would be refused. Such kernels keep their loads in place.
  PostDominatorTree pdt(f);
  for (BasicBlock& bb : f)
    for (Instruction& inst : bb)
      if (const auto* call = dyn_cast<CallBase>(&inst);
          call && call->isConvergent() && !pdt.dominates(&bb, &f.getEntryBlock()))
        return false;
  DominatorTree dt(f);
  LoopInfo li(dt);
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    for (BasicBlock& bb : f) {
      // From the bottom up, while nothing below may write memory; loads taken lowest first, each
      // put at the top of its target, keep their order.
      std::vector<std::pair<LoadInst*, BasicBlock*>> moves;
      for (Instruction& inst : reverse(bb)) {
        if (inst.mayWriteToMemory()) break;
        auto* load = dyn_cast<LoadInst>(&inst);
        if (!load || !load->isSimple() || !isRecordedSpace(load->getPointerAddressSpace())) continue;
        if (BasicBlock* target = sinkTarget(*load, bb, dt, li)) moves.emplace_back(load, target);
      }
      for (auto& [load, target] : moves) load->moveBefore(&*target->getFirstInsertionPt());
      again = again || !moves.empty();
      changed = changed || !moves.empty();
    }
  }
  return changed;
}

}  // namespace cltrace::passes
