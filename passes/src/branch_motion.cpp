#include "cltrace/passes/branch_motion.h"

#include <llvm/ADT/STLExtras.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/PostDominators.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/Transforms/Utils/Local.h>
#include <llvm/Transforms/Utils/ValueMapper.h>

#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include "cltrace/passes/access_enumeration.h"
#include "cltrace/passes/value_forwarding.h"  // pointerAt, materialize

using namespace llvm;

namespace cltrace::passes {

namespace {

// An instruction that only computes, and may be done elsewhere as long as its operands are
// there: not a phi, alloca or terminator, touching no memory, and no call that does or is
// convergent (a barrier).
bool onlyComputes(const Instruction& inst) {
  if (isa<PHINode>(inst) || isa<AllocaInst>(inst) || inst.isTerminator() || inst.isEHPad()) return false;
  if (const auto* call = dyn_cast<CallBase>(&inst)) return call->doesNotAccessMemory() && !call->isConvergent();
  return !inst.mayReadOrWriteMemory();
}

// What may move from the start of both ways to before the branch: anything both ways would run
// first anyway, but for instructions whose place matters beyond that (onlyComputes), and loads
// that are not plain.
bool hoistable(const Instruction& inst) {
  if (const auto* load = dyn_cast<LoadInst>(&inst)) return load->isSimple();
  return onlyComputes(inst);
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

// Instructions that may be sunk from the ends of blocks into the block they all go on to (as
// SimplifyCFG's sinking of common code): plain loads and stores (not of private variables) and
// the arithmetic of their addresses and values.
bool sinkable(const Instruction& inst) {
  if (const auto* load = dyn_cast<LoadInst>(&inst))
    return load->isSimple() && !isa<AllocaInst>(load->getPointerOperand()->stripPointerCasts());
  if (const auto* store = dyn_cast<StoreInst>(&inst))
    return store->isSimple() && !isa<AllocaInst>(store->getPointerOperand()->stripPointerCasts());
  return isa<GetElementPtrInst>(inst) || isa<CastInst>(inst) || isa<BinaryOperator>(inst) || isa<CmpInst>(inst) ||
         isa<SelectInst>(inst);
}

// Whether `v` is the same in every iteration of `l`: defined outside it, or arithmetic in it on
// such values.
bool invariantIn(const Value* v, const Loop& l, unsigned depth = 0) {
  const auto* inst = dyn_cast<Instruction>(v);
  if (!inst || !l.contains(inst)) return true;
  if (depth > 8 || inst->mayReadOrWriteMemory() || isa<PHINode>(inst) || inst->isTerminator() ||
      isa<CallBase>(inst))
    return false;
  return all_of(inst->operands(), [&](const Value* op) { return invariantIn(op, l, depth + 1); });
}

// Arithmetic in a loop that is the same in every iteration (`&a[i]` in a block that leaves the
// loop): a GPU compiler has moved it before the loop (LICM) by the time it sinks common code, so
// it is not at the end of its block there.
bool hoistedFromItsLoop(const Instruction& inst, const LoopInfo& li) {
  const Loop* l = li.getLoopFor(inst.getParent());
  return l && !inst.mayReadOrWriteMemory() && invariantIn(&inst, *l);
}

// Whether `tuple` (one instruction from the end of each block going on to `join`, all in the same
// place from the end) may be one instruction in `join` (SimplifyCFG's canSinkInstructions): the
// same operation, each but a store used once, by a phi of `join` or by what follows it in its
// block (already taken); where operands differ (`differing`), a phi may take them.
bool sinksTogether(const std::vector<Instruction*>& tuple, const BasicBlock& join, const LoopInfo& li,
                   std::vector<unsigned>& differing) {
  const Instruction* first = tuple.front();
  const auto* firstUse = first->hasOneUse() ? dyn_cast<PHINode>(*first->user_begin()) : nullptr;
  for (const Instruction* inst : tuple) {
    if (!sinkable(*inst) || !inst->isSameOperationAs(first) || hoistedFromItsLoop(*inst, li)) return false;
    if (isa<StoreInst>(inst)) continue;
    if (!inst->hasOneUse()) return false;
    const auto* user = cast<Instruction>(*inst->user_begin());
    const bool intoJoin = firstUse && firstUse->getParent() == &join &&
                          firstUse->getIncomingValueForBlock(inst->getParent()) == inst;
    if (!intoJoin && user->getParent() != inst->getParent()) return false;
  }
  differing.clear();
  for (unsigned k = 0; k < first->getNumOperands(); ++k) {
    if (all_of(tuple, [&](const Instruction* inst) { return inst->getOperand(k) == first->getOperand(k); })) continue;
    // A divisor that is a constant is cheap (replacingOperandWithVariableIsCheap).
    if ((isa<Constant>(first->getOperand(k)) && first->isIntDivRem() && k == 1) ||
        !canReplaceOperandWithVariable(first, k))
      return false;
    differing.push_back(k);
  }
  return true;
}

// Makes `tuple` one instruction at the top of `join`: phis of the operands that differ, the
// first of them moved there in place of the phi that took their values. False, with nothing
// changed, when their users are not one phi (sinksTogether, looking before the sinking, takes
// `x + t` and `t + y` for one: each instruction's use is then a phi of its own; SimplifyCFG's
// sinkLastInstruction checks the same).
bool sinkTuple(const std::vector<Instruction*>& tuple, const std::vector<unsigned>& differing, BasicBlock& join) {
  Instruction* first = tuple.front();
  if (!isa<StoreInst>(first) && !all_of(tuple, [&](const Instruction* inst) {
        return *inst->user_begin() == *first->user_begin() && isa<PHINode>(*first->user_begin());
      }))
    return false;
  for (unsigned k : differing) {
    PHINode* phi = PHINode::Create(first->getOperand(k)->getType(), tuple.size(),
                                   first->getOperand(k)->getName() + ".sunk", &join.front());
    for (Instruction* inst : tuple) phi->addIncoming(inst->getOperand(k), inst->getParent());
    first->setOperand(k, phi);
  }
  first->moveBefore(&*join.getFirstInsertionPt());
  for (Instruction* inst : tuple)
    if (inst != first) {
      combineMetadataForCSE(first, inst, true);
      first->andIRFlags(inst);
    }
  if (!isa<StoreInst>(first)) {  // its one user is a phi of `join` taking each of them
    auto* phi = cast<PHINode>(*first->user_begin());
    phi->replaceAllUsesWith(first);
    phi->eraseFromParent();
  }
  for (Instruction* inst : tuple)
    if (inst != first) inst->eraseFromParent();
  return true;
}

// A barrier (or other convergent call that touches memory) that not every run of the kernel
// passes: PoCL runs the work-items' code after such a barrier its own way, and an access moved
// into one way of a branch there was counted differently by the count run than by the trace run,
// so the trace of a kernel traced well before would be refused. Such kernels keep their loads in
// place. (OpenCL C makes every call convergent: builtins that only compute, native_cos or
// get_local_id, are no barriers.)
bool barrierInBranch(Function& f) {
  std::optional<PostDominatorTree> pdt;  // built only for a kernel with a barrier: most have none
  for (BasicBlock& bb : f)
    for (Instruction& inst : bb)
      if (const auto* call = dyn_cast<CallBase>(&inst); call && call->isConvergent() &&
                                                        !call->doesNotAccessMemory()) {
        if (!pdt) pdt.emplace(f);
        if (!pdt->dominates(&bb, &f.getEntryBlock())) return true;
      }
  return false;
}

// Whether the test at the top of loop `l` decides alone whether an iteration runs: its header
// ends with a branch into the loop or out of it, after instructions that touch no memory (they
// can be redone before the loop for its first test), and the loop is entered from one block
// that only goes on to it.
bool testedAtTop(const Loop& l) {
  const BasicBlock* header = l.getHeader();
  const BasicBlock* before = l.getLoopPreheader();
  const auto* entry = before ? dyn_cast<BranchInst>(before->getTerminator()) : nullptr;
  const auto* test = dyn_cast<BranchInst>(header->getTerminator());
  if (!entry || entry->isConditional() || !test || !test->isConditional() ||
      l.contains(test->getSuccessor(0)) == l.contains(test->getSuccessor(1)))
    return false;
  return all_of(*header, [](const Instruction& inst) {
    return isa<PHINode>(inst) || inst.isTerminator() || isa<DbgInfoIntrinsic>(inst) || onlyComputes(inst);
  });
}

// Whether every use of `inst` is in loop `l` past its test (run only in iterations) or in `also`.
bool usedOnlyInIterations(const Instruction& inst, const Loop& l, const SmallPtrSetImpl<const Instruction*>& also) {
  return all_of(inst.uses(), [&](const Use& use) {
    const auto* user = cast<Instruction>(use.getUser());
    if (also.count(user)) return true;
    const BasicBlock* at = user->getParent();
    if (const auto* phi = dyn_cast<PHINode>(user)) at = phi->getIncomingBlock(use);
    return l.contains(at) && at != l.getHeader();
  });
}

// The plain __global or __constant loads at the end of the block before loop `l`, after which
// nothing in it may write memory, whose values only the loop's iterations use, directly or
// through arithmetic there used so too: those loads and that arithmetic, in their order.
std::vector<Instruction*> loadsForIterations(const Loop& l) {
  SmallPtrSet<const Instruction*, 8> marked;
  for (Instruction& inst : reverse(*l.getLoopPreheader())) {
    if (inst.mayWriteToMemory()) break;
    if (inst.isTerminator() || isa<PHINode>(inst) || inst.use_empty()) continue;
    const auto* load = dyn_cast<LoadInst>(&inst);
    const bool movable =
        load ? load->isSimple() && isRecordedSpace(load->getPointerAddressSpace()) : onlyComputes(inst);
    if (movable && usedOnlyInIterations(inst, l, marked)) marked.insert(&inst);
  }
  // Of the arithmetic, what works on a load moved.
  std::vector<Instruction*> moves;
  SmallPtrSet<const Value*, 8> moved;
  bool loads = false;
  for (Instruction& inst : *l.getLoopPreheader()) {
    if (!marked.count(&inst)) continue;
    const bool load = isa<LoadInst>(inst);
    if (!load && none_of(inst.operands(), [&](const Value* v) { return moved.count(v) != 0; })) continue;
    loads = loads || load;
    moves.push_back(&inst);
    moved.insert(&inst);
  }
  if (!loads) moves.clear();
  return moves;
}

// Puts `moves` (loadsForIterations) into a block of their own that runs only when the first
// test of loop `l` lets an iteration run: the test is redone before the loop on the values it
// starts with (as LoopRotate's guard), and a new block before the header, where both ways meet,
// gives the loop the values.
void guardLoads(Loop& l, const std::vector<Instruction*>& moves) {
  BasicBlock* header = l.getHeader();
  BasicBlock* before = l.getLoopPreheader();
  LLVMContext& context = header->getContext();
  Function& f = *header->getParent();
  auto* test = cast<BranchInst>(header->getTerminator());
  Instruction* entry = before->getTerminator();
  ValueToValueMapTy first;  // the header's values on entry
  for (PHINode& phi : header->phis()) first[&phi] = phi.getIncomingValueForBlock(before);
  for (Instruction& inst : *header) {
    if (isa<PHINode>(inst) || inst.isTerminator() || isa<DbgInfoIntrinsic>(inst)) continue;
    Instruction* copy = inst.clone();
    copy->insertBefore(entry);
    RemapInstruction(copy, first, RF_IgnoreMissingLocals | RF_NoModuleLevelChanges);
    first[&inst] = copy;
  }
  Value* runs = first.lookup(test->getCondition());
  if (!runs) runs = test->getCondition();  // decided before the loop
  BasicBlock* loading = BasicBlock::Create(context, "cltrace.first.iteration", &f, header);
  BasicBlock* join = BasicBlock::Create(context, "cltrace.loop.entry", &f, header);
  const bool intoOnTrue = l.contains(test->getSuccessor(0));
  BranchInst::Create(intoOnTrue ? loading : join, intoOnTrue ? join : loading, runs, entry);
  entry->eraseFromParent();
  BranchInst* toJoin = BranchInst::Create(join, loading);
  BranchInst::Create(header, join);
  for (Instruction* inst : moves) inst->moveBefore(toJoin);
  for (Instruction* inst : moves) {
    if (all_of(inst->users(), [&](const User* u) { return cast<Instruction>(u)->getParent() == loading; })) continue;
    PHINode* value = PHINode::Create(inst->getType(), 2, inst->getName(), &join->front());
    inst->replaceUsesWithIf(value, [&](const Use& u) { return cast<Instruction>(u.getUser())->getParent() != loading; });
    value->addIncoming(inst, loading);
    value->addIncoming(PoisonValue::get(inst->getType()), before);  // the loop does not run
  }
  for (PHINode& phi : header->phis()) phi.replaceIncomingBlockWith(before, join);
}

// SimplifyCFG's limits for folding a two-entry phi (LLVM 15 defaults): the instructions taken out
// of the ways may cost 4 basic instructions together (but one alone may cost more), looked
// through at most 10 operands deep, for at most three phis.
constexpr int kFoldBudget = 4;
constexpr unsigned kFoldDepth = 10;
constexpr unsigned kFoldPhis = 3;

// Whether `v`, flowing into a phi of `join`, can be had before the branch (SimplifyCFG's
// dominatesMergePoint): it is not made in a way into `join`, or it is made there by an
// instruction safe to run either way whose operands can be had before the branch too, within
// the budget. Such instructions are gathered in `taken`, their cost in `cost`.
bool availableBeforeBranch(Value* v, const BasicBlock& join, SmallPtrSetImpl<Instruction*>& taken,
                           InstructionCost& cost, const TargetTransformInfo& tti, unsigned depth = 0) {
  if (depth == kFoldDepth) return false;
  auto* inst = dyn_cast<Instruction>(v);
  if (!inst) {
    const auto* c = dyn_cast<ConstantExpr>(v);  // a constant division may trap
    return !c || !Instruction::isIntDivRem(c->getOpcode());
  }
  const BasicBlock* at = inst->getParent();
  if (at == &join) return false;
  const auto* branch = dyn_cast<BranchInst>(at->getTerminator());
  if (!branch || branch->isConditional() || branch->getSuccessor(0) != &join) return true;  // before the branch
  if (taken.count(inst)) return true;
  if (!isSafeToSpeculativelyExecute(inst)) return false;
  cost += tti.getUserCost(inst, TargetTransformInfo::TCK_SizeAndLatency);
  if (cost > kFoldBudget && (!taken.empty() || depth > 0 || !cost.isValid())) return false;
  for (Use& op : inst->operands())
    if (!availableBeforeBranch(op.get(), join, taken, cost, tti, depth + 1)) return false;
  taken.insert(inst);
  return true;
}

// An i1 `and`/`or` or the select form of one: SimplifyCFG leaves a phi of such values alone (it
// turns chains of them into switches instead).
bool logicOfConditions(const Value* v) {
  if (isa<BinaryOperator>(v)) return true;
  const auto* select = dyn_cast<SelectInst>(v);
  return select && (isa<Constant>(select->getTrueValue()) || isa<Constant>(select->getFalseValue()));
}

// Folds the if-region that ends at `join` into selects (foldCheapBranchesToSelects).
bool foldIntoSelects(BasicBlock& join, const TargetTransformInfo& tti) {
  auto* first = dyn_cast<PHINode>(&join.front());
  if (!first || first->getNumIncomingValues() != 2) return false;
  BasicBlock* ifTrue = nullptr;
  BasicBlock* ifFalse = nullptr;
  BranchInst* decision = GetIfCondition(&join, ifTrue, ifFalse);
  if (!decision || isa<ConstantInt>(decision->getCondition())) return false;
  BasicBlock* head = decision->getParent();
  if (head == &join) return false;
  if (std::distance(join.phis().begin(), join.phis().end()) > kFoldPhis) return false;
  SmallPtrSet<Instruction*, 8> taken;
  InstructionCost cost = 0;
  for (PHINode& phi : join.phis()) {
    if (phi.getType()->isIntegerTy(1) && (logicOfConditions(phi.getIncomingValue(0)) ||
                                          logicOfConditions(phi.getIncomingValue(1)) ||
                                          logicOfConditions(decision->getCondition())))
      return false;
    for (Value* v : phi.incoming_values())
      if (!availableBeforeBranch(v, join, taken, cost, tti)) return false;
  }
  // The ways (a triangle has one): everything in them must go before the branch.
  SmallVector<BasicBlock*, 2> ways;
  for (BasicBlock* way : {ifTrue, ifFalse})
    if (way != head) ways.push_back(way);
  for (BasicBlock* way : ways)
    for (Instruction& inst : *way)
      if (!inst.isTerminator() && !inst.isDebugOrPseudoInst() && !taken.count(&inst)) return false;

  for (BasicBlock* way : ways)
    head->getInstList().splice(decision->getIterator(), way->getInstList(), way->begin(),
                               way->getTerminator()->getIterator());
  IRBuilder<> b(decision);
  for (PHINode& phi : make_early_inc_range(join.phis())) {
    Value* select = b.CreateSelect(decision->getCondition(), phi.getIncomingValueForBlock(ifTrue),
                                   phi.getIncomingValueForBlock(ifFalse));
    select->takeName(&phi);
    phi.replaceAllUsesWith(select);
    phi.eraseFromParent();
  }
  b.CreateBr(&join)->setDebugLoc(decision->getDebugLoc());
  decision->eraseFromParent();
  DeleteDeadBlocks(ways);
  MergeBlockIntoPredecessor(&join);
  return true;
}

// The block `from` goes on from, up through blocks that only branch on to `join` (their one
// predecessor not a predecessor of `join` already), which SimplifyCFG removes before InstCombine
// looks at `join`'s phis again.
const BasicBlock* throughEmptyBlocks(const BasicBlock* from, const BasicBlock& join) {
  while (from->size() == 1 && !from->isEntryBlock()) {
    const BasicBlock* before = from->getSinglePredecessor();
    if (!before || before == from || is_contained(predecessors(&join), before)) break;
    from = before;
  }
  return from;
}

// Whether an instruction from `first` to the end of its block may write memory a load reads.
bool writesFrom(const Instruction* first) {
  for (const Instruction* at = first; at; at = at->getNextNode())
    if (at->mayWriteToMemory()) {
      const auto* call = dyn_cast<CallBase>(at);
      if (!call || !call->onlyAccessesInaccessibleMemory()) return true;
    }
  return false;
}

// A load InstCombine may move to the phi that takes it (isSafeAndProfitableToSinkLoad): plain,
// recorded, used by that phi alone, made in the block the phi takes it from (or above it, through
// empty blocks), and nothing after it there may write memory.
bool loadSinksToPhi(const Value* v, const BasicBlock* from, const BasicBlock& join) {
  const auto* load = dyn_cast<LoadInst>(v);
  if (!load || !load->isSimple() || !isRecordedSpace(load->getPointerAddressSpace()) || !load->hasOneUser() ||
      (load->getParent() != from && load->getParent() != throughEmptyBlocks(from, join)))
    return false;
  return !writesFrom(load->getNextNode());
}

// One load through a phi of the addresses of the loads `phi` takes (loadThroughPhiOfAddresses).
bool foldPhiOfLoads(PHINode& phi) {
  if (phi.getNumIncomingValues() < 2) return false;
  auto* first = dyn_cast<LoadInst>(phi.getIncomingValue(0));
  if (!first) return false;
  for (unsigned k = 0; k < phi.getNumIncomingValues(); ++k) {
    if (!loadSinksToPhi(phi.getIncomingValue(k), phi.getIncomingBlock(k), *phi.getParent())) return false;
    if (cast<LoadInst>(phi.getIncomingValue(k))->getPointerAddressSpace() != first->getPointerAddressSpace())
      return false;
  }
  Value* address = first->getPointerOperand();
  bool sameAddress = true;
  Align align = first->getAlign();
  for (Value* v : phi.incoming_values()) {
    sameAddress = sameAddress && cast<LoadInst>(v)->getPointerOperand() == address;
    align = std::min(align, cast<LoadInst>(v)->getAlign());
  }
  BasicBlock& join = *phi.getParent();
  if (!sameAddress) {
    PHINode* addresses = PHINode::Create(address->getType(), phi.getNumIncomingValues(), "", &join.front());
    for (unsigned k = 0; k < phi.getNumIncomingValues(); ++k)
      addresses->addIncoming(cast<LoadInst>(phi.getIncomingValue(k))->getPointerOperand(), phi.getIncomingBlock(k));
    address = addresses;
  }
  auto* load = new LoadInst(first->getType(), address, "", false, align, &*join.getFirstInsertionPt());
  load->setDebugLoc(first->getDebugLoc());
  // The metadata all of them carry (alias tags among them), as InstCombine keeps it.
  const unsigned kinds[] = {LLVMContext::MD_tbaa,          LLVMContext::MD_range,
                            LLVMContext::MD_invariant_load, LLVMContext::MD_alias_scope,
                            LLVMContext::MD_noalias,        LLVMContext::MD_nonnull,
                            LLVMContext::MD_align,          LLVMContext::MD_dereferenceable,
                            LLVMContext::MD_dereferenceable_or_null,
                            LLVMContext::MD_access_group,   LLVMContext::MD_noundef};
  for (unsigned kind : kinds) load->setMetadata(kind, first->getMetadata(kind));
  for (unsigned k = 1; k < phi.getNumIncomingValues(); ++k)
    combineMetadata(load, cast<LoadInst>(phi.getIncomingValue(k)), kinds, true);
  SmallPtrSet<Instruction*, 4> loads;
  for (Value* v : phi.incoming_values()) loads.insert(cast<Instruction>(v));
  phi.replaceAllUsesWith(load);
  phi.eraseFromParent();
  for (Instruction* old : loads) old->eraseFromParent();
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

bool loadThroughPhiOfAddresses(Function& f) {
  bool changed = false;
  for (BasicBlock& bb : f)
    for (PHINode& phi : make_early_inc_range(bb.phis())) changed |= foldPhiOfLoads(phi);
  return changed;
}

PreservedAnalyses LoadThroughPhiOfAddressesPass::run(Function& f, FunctionAnalysisManager&) {
  return keptWhenBlocksStay(loadThroughPhiOfAddresses(f));
}

bool foldCheapBranchesToSelects(Function& f, const TargetTransformInfo& tti) {
  bool changed = false;
  // Until nothing folds: a nested conditional's fold leaves its enclosing one foldable.
  for (bool again = true; again;) {
    again = false;
    for (BasicBlock& bb : make_early_inc_range(f)) {
      if (!foldIntoSelects(bb, tti)) continue;
      again = changed = true;
      break;  // blocks were deleted and merged
    }
  }
  return changed;
}

PreservedAnalyses FoldCheapBranchesPass::run(Function& f, FunctionAnalysisManager& am) {
  return foldCheapBranchesToSelects(f, am.getResult<TargetIRAnalysis>(f)) ? PreservedAnalyses::none()
                                                                           : PreservedAnalyses::all();
}

bool sinkSingleBlockLoads(Function& f) {
  if (barrierInBranch(f)) return false;
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    for (BasicBlock& bb : f)
      for (Instruction& inst : make_early_inc_range(reverse(bb))) {
        auto* load = dyn_cast<LoadInst>(&inst);
        if (!load || !load->isSimple() || !isRecordedSpace(load->getPointerAddressSpace()) || load->use_empty())
          continue;
        BasicBlock* to = nullptr;
        bool one = true;
        for (Use& use : load->uses()) {
          auto* user = cast<Instruction>(use.getUser());
          BasicBlock* at = user->getParent();
          if (auto* phi = dyn_cast<PHINode>(user)) at = phi->getIncomingBlock(use);
          one = one && (!to || to == at);
          to = at;
        }
        if (!one || to == &bb || to->getUniquePredecessor() != &bb || writesFrom(load->getNextNode())) continue;
        load->moveBefore(&*to->getFirstInsertionPt());
        again = changed = true;
      }
  }
  return changed;
}

PreservedAnalyses SinkSingleBlockLoadsPass::run(Function& f, FunctionAnalysisManager&) {
  return keptWhenBlocksStay(sinkSingleBlockLoads(f));
}

bool sinkLoadsToUses(Function& f) {
  if (barrierInBranch(f)) return false;
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

bool loadBeforeLoopsWhenTheyRun(Function& f) {
  if (barrierInBranch(f)) return false;
  DominatorTree dt(f);
  LoopInfo li(dt);
  // Planned first, done after: each loop has its own block before it.
  std::vector<std::pair<Loop*, std::vector<Instruction*>>> plans;
  for (Loop* l : li.getLoopsInPreorder()) {
    if (!testedAtTop(*l)) continue;
    std::vector<Instruction*> moves = loadsForIterations(*l);
    if (!moves.empty()) plans.emplace_back(l, std::move(moves));
  }
  for (auto& [l, moves] : plans) guardLoads(*l, moves);
  return !plans.empty();
}

bool sinkCommonTails(Function& f) {
  DominatorTree dt(f);
  LoopInfo li(dt);
  bool changed = false;
  for (BasicBlock& join : f) {
    // The ways in by an unconditional branch from a block of their own with something in it, and
    // no loop entered. Where other ways come in too (a conditional branch, or an empty block,
    // which SimplifyCFG removes first), SimplifyCFG gives those ways a block of their own to
    // sink into (`.sink.split`) when it sinks a load or a store.
    const std::vector<BasicBlock*> in(pred_begin(&join), pred_end(&join));
    if (in.size() < 2 || li.isLoopHeader(&join)) continue;
    std::vector<BasicBlock*> ways;
    for (BasicBlock* way : in) {
      const auto* branch = dyn_cast<BranchInst>(way->getTerminator());
      if (way != &join && branch && !branch->isConditional() && count(in, way) == 1 && way->size() > 1)
        ways.push_back(way);
    }
    if (ways.size() < 2) continue;
    // A way that leaves two or more loops at once (a `return` from an inner loop): there clang
    // -O2 goes through the loops' scope cleanups, and the GPU's code keeps the way's accesses in
    // the loop, apart (a way out of one loop is merged, as NVPTX merges it).
    const unsigned depth = li.getLoopDepth(&join);
    if (any_of(ways, [&](BasicBlock* way) {
          return any_of(predecessors(way), [&](BasicBlock* from) { return li.getLoopDepth(from) >= depth + 2; });
        }))
      continue;
    // The instructions the ways end with, in step from the end, while they may be one.
    std::vector<std::vector<Instruction*>> tuples;
    std::vector<std::vector<unsigned>> differing;
    SmallPtrSet<const Value*, 16> taken;
    std::vector<Instruction*> at;
    for (BasicBlock* way : ways) at.push_back(way->getTerminator()->getPrevNonDebugInstruction());
    for (std::vector<unsigned> d; all_of(at, [](const Instruction* i) { return i != nullptr; }) &&
                                  sinksTogether(at, join, li, d);) {
      tuples.push_back(at);
      differing.push_back(d);
      taken.insert(at.begin(), at.end());
      for (Instruction*& i : at) i = i->getPrevNonDebugInstruction();
    }
    // From the end, while each needs at most one phi for values not sunk with it (SimplifyCFG's
    // profitability, taking every instruction found above as sunk).
    size_t sunk = 0;
    for (; sunk < tuples.size(); ++sunk) {
      size_t values = 0;
      for (unsigned k : differing[sunk])
        for (const Instruction* inst : tuples[sunk]) values += !taken.count(inst->getOperand(k));
      if ((values + ways.size() - 1) / ways.size() > 1) break;
    }
    // Only where a recorded access is among them: the rest changes no trace.
    const bool accesses = any_of(make_range(tuples.begin(), tuples.begin() + sunk), [](const auto& tuple) {
      Instruction* inst = tuple.front();
      return isa<LoadInst, StoreInst>(inst) && isRecordedSpace(getLoadStoreAddressSpace(inst));
    });
    if (!accesses) continue;
    BasicBlock* into = &join;
    if (ways.size() < in.size()) {
      into = SplitBlockPredecessors(&join, ways, ".sink.split", &dt, &li);
      if (!into) continue;
      changed = true;
    }
    for (size_t i = 0; i < sunk && sinkTuple(tuples[i], differing[i], *into); ++i) changed = true;
  }
  return changed;
}

}  // namespace cltrace::passes
