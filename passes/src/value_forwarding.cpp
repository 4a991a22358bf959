#include "cltrace/passes/value_forwarding.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/MapVector.h>
#include <llvm/Analysis/AliasAnalysis.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/MemoryLocation.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/Local.h>
#include <llvm/Transforms/Utils/SSAUpdater.h>

#include <vector>

#include "cltrace/passes/access_enumeration.h"

using namespace llvm;

namespace cltrace::passes {

namespace {

// Arithmetic, a cast, a comparison, address arithmetic or a call that touches no memory.
bool pureOperation(const Instruction& i) {
  if (const auto* call = dyn_cast<CallInst>(&i))
    return call->doesNotAccessMemory() && call->getCalledFunction() && !call->getCalledFunction()->isConvergent();
  return !i.mayReadOrWriteMemory() && (isa<CastInst>(i) || isa<BinaryOperator>(i) || isa<CmpInst>(i) ||
                                       isa<GetElementPtrInst>(i) || isa<SelectInst>(i));
}

}  // namespace

Value* pointerAt(Value* pointer, Instruction* end, const DominatorTree& dt, unsigned depth) {
  auto* inst = dyn_cast<Instruction>(pointer);
  if (!inst || dt.dominates(inst, end)) return pointer;
  if (depth > 6 || isa<PHINode>(inst) || !pureOperation(*inst)) return nullptr;
  for (Value* operand : inst->operands())
    if (!pointerAt(operand, end, dt, depth + 1)) return nullptr;
  return pointer;
}

Value* materialize(Value* pointer, Instruction* end, const DominatorTree& dt) {
  auto* inst = dyn_cast<Instruction>(pointer);
  if (!inst || dt.dominates(inst, end)) return pointer;
  Instruction* copy = inst->clone();
  for (unsigned k = 0; k < copy->getNumOperands(); ++k)
    copy->setOperand(k, materialize(copy->getOperand(k), end, dt));
  copy->insertBefore(end);
  return copy;
}

namespace {

// A block that only goes on to another: SimplifyCFG folds it away, its predecessors going there.
bool forwardsOnly(const BasicBlock& bb) {
  const auto* branch = dyn_cast<BranchInst>(bb.getTerminator());
  return branch && branch->isUnconditional() && &bb.front() == branch && branch->getSuccessor(0) != &bb;
}

// The predecessors of `bb` once blocks that only go on are folded away, each counted through.
unsigned predecessorsThrough(const BasicBlock& bb, unsigned depth) {
  unsigned n = 0;
  for (const BasicBlock* p : predecessors(&bb))
    n += forwardsOnly(*p) && depth < 16 ? predecessorsThrough(*p, depth + 1) : 1;
  return n;
}

}  // namespace

unsigned mergedPredecessors(const BasicBlock& join) {
  const BasicBlock* at = &join;
  for (unsigned depth = 0; forwardsOnly(*at) && depth < 16; ++depth) at = at->getSingleSuccessor();
  return predecessorsThrough(*at, 0);
}

bool sameComputation(const Value* a, const Value* b, unsigned depth) {
  if (a == b) return true;
  const auto* x = dyn_cast<Instruction>(a);
  const auto* y = dyn_cast<Instruction>(b);
  if (!x || !y || depth > 8 || x->getOpcode() != y->getOpcode() || x->getType() != y->getType() ||
      x->getNumOperands() != y->getNumOperands() || isa<PHINode>(x))
    return false;
  if (!pureOperation(*x)) return false;
  if (const auto* gx = dyn_cast<GetElementPtrInst>(x))
    if (gx->getSourceElementType() != cast<GetElementPtrInst>(y)->getSourceElementType()) return false;
  if (const auto* cx = dyn_cast<CmpInst>(x))
    if (cx->getPredicate() != cast<CmpInst>(y)->getPredicate()) return false;
  for (unsigned k = 0; k < x->getNumOperands(); ++k)
    if (!sameComputation(x->getOperand(k), y->getOperand(k), depth + 1)) return false;
  return true;
}


namespace {

// The loads and stores of recorded memory by address: each pointer mapped to the first pointer
// computed the same way (sameComputation).
class Addresses {
 public:
  explicit Addresses(Function& f) {
    for (BasicBlock& bb : f)
      for (Instruction& inst : bb) {
        Value* pointer = nullptr;
        if (auto* l = dyn_cast<LoadInst>(&inst); l && l->isSimple() && isRecordedSpace(l->getPointerAddressSpace()))
          pointer = l->getPointerOperand();
        else if (auto* s = dyn_cast<StoreInst>(&inst);
                 s && s->isSimple() && s->getPointerAddressSpace() == kGlobalAddressSpace)
          pointer = s->getPointerOperand();
        if (pointer) of_[&inst] = canonical(pointer);
      }
  }
  // The address of a plain load or store of recorded memory, or null.
  Value* of(const Instruction* inst) const { return of_.lookup(inst); }

 private:
  Value* canonical(Value* pointer) {
    for (Value* seen : seen_)
      if (sameComputation(seen, pointer)) return seen;
    seen_.push_back(pointer);
    return pointer;
  }
  std::vector<Value*> seen_;
  DenseMap<const Instruction*, Value*> of_;
};

// What an instruction does to one address's value: nothing, gives it (a store's value, a load),
// or may write the address (forgets what was known).
enum class Effect { None, Gives, Forgets };

// One address's loads and what is known of its value through the function.
class AddressValues {
 public:
  AddressValues(Function& f, AAResults& aa, const Addresses& addresses, Value* address, Type* type,
                const MemoryLocation& where)
      : f_(f), type_(type) {
    for (BasicBlock& bb : f)
      for (Instruction& inst : bb) {
        if (addresses.of(&inst) == address) {
          Value* value = nullptr;
          if (auto* s = dyn_cast<StoreInst>(&inst); s && s->getValueOperand()->getType() == type)
            value = s->getValueOperand();
          else if (auto* l = dyn_cast<LoadInst>(&inst); l && l->getType() == type)
            value = l;
          if (value) {
            effects_[&bb].push_back({&inst, Effect::Gives, value});
            continue;
          }
        }
        if (inst.mayWriteToMemory() && !isa<DbgInfoIntrinsic>(inst) && isModSet(aa.getModRefInfo(&inst, where)))
          effects_[&bb].push_back({&inst, Effect::Forgets, nullptr});
      }
  }

  // Replaces the uses of every load among `loads` whose value is available, and adds the load
  // to `replaced` (erased by the caller once every address is done: the other addresses'
  // books still name it). A load whose value is available on some ways in but not others is
  // first made available by loads at the ends of the ways that lack it (readAlongMissingWays).
  void forward(const std::vector<LoadInst*>& loads, std::vector<LoadInst*>& replacedLoads, const DominatorTree& dt) {
    findAvailability();
    for (LoadInst* load : loads)
      if (!availableAt(load) && readAlongMissingWays(load, dt)) findAvailability();
    std::vector<LoadInst*> chosen;
    for (LoadInst* load : loads)
      if (availableAt(load)) chosen.push_back(load);
    if (chosen.empty()) return;
    SmallPtrSet<const Instruction*, 16> replaced(chosen.begin(), chosen.end());
    // The value at the end of each block that gives one of its own (the last one after the last
    // write that may change the address); the loads being replaced give none: each is given
    // the value before it.
    SSAUpdater ssa;
    ssa.Initialize(type_, "cltrace.forwarded");
    for (auto& [block, effects] : effects_)
      if (Value* last = valueBefore(effects, nullptr, replaced)) ssa.AddAvailableValue(block, last);
    std::vector<std::pair<LoadInst*, Value*>> values;
    for (LoadInst* load : chosen) {
      Value* before = valueBefore(effects_[load->getParent()], load, replaced);
      values.push_back({load, before ? before : ssa.GetValueInMiddleOfBlock(load->getParent())});
    }
    for (auto [load, value] : values) {
      load->replaceAllUsesWith(value);
      replacedLoads.push_back(load);
    }
  }

 private:
  struct Step {
    Instruction* inst;
    Effect effect;
    Value* value;  // Gives: the value the address then holds
  };

  // The value a block's steps up to `stop` (all: null) leave at the address, null when they
  // leave none of their own (what came in, or forgotten).
  static Value* valueBefore(const std::vector<Step>& steps, const Instruction* stop,
                            const SmallPtrSetImpl<const Instruction*>& replaced) {
    Value* value = nullptr;
    for (const Step& s : steps) {
      if (s.inst == stop) break;
      if (s.effect == Effect::Forgets)
        value = nullptr;
      else if (!replaced.count(s.inst))
        value = s.value;
    }
    return value;
  }

  // What the steps up to `stop` (all: null) leave known: what came in, nothing, or a value.
  Effect effectBefore(BasicBlock* bb, const Instruction* stop) const {
    Effect e = Effect::None;
    auto it = effects_.find(bb);
    if (it == effects_.end()) return e;
    for (const Step& s : it->second) {
      if (s.inst == stop) break;
      e = s.effect;
    }
    return e;
  }

  // Whether the value is known on entry to each block: on every way in (not for the entry
  // block or blocks no way reaches); the greatest solution, so that a value that comes round a
  // loop's back edge counts.
  void findAvailability() {
    DenseMap<BasicBlock*, Effect> effect;
    for (BasicBlock& bb : f_) {
      effect[&bb] = effectBefore(&bb, nullptr);
      in_[&bb] = &bb != &f_.getEntryBlock() && pred_begin(&bb) != pred_end(&bb);
    }
    auto out = [&](BasicBlock* bb) { return effect[bb] == Effect::Gives || (effect[bb] == Effect::None && in_[bb]); };
    for (bool changed = true; changed;) {
      changed = false;
      for (BasicBlock& bb : f_) {
        if (!in_[&bb]) continue;
        for (BasicBlock* pred : predecessors(&bb))
          if (!out(pred)) {
            in_[&bb] = false;
            changed = true;
            break;
          }
      }
    }
  }

  // Partial redundancy, as a GPU compiler's GVN removes it (on the loop its LoopRotate has
  // turned so that the test reads at the bottom): `for (j = 0; j < lim[i]; j++) if (v[j]) out[j]
  // = i;` reads lim[i] once before the loop and again only after the store (out may be lim), not
  // on every iteration. When `load` takes the value that comes into its block, and that value
  // is known on some ways in, it is read instead at the end of each block where a way that
  // lacks it starts lacking it (after the write that may change it, or where it was never read),
  // every such block going on to the load's block through blocks of one successor: each such
  // read runs exactly when the load would have on that way, so no way reads more, and the ways
  // that have the value read nothing. The address must be computable there (from values that
  // are defined there). Returns whether it added loads.
  bool readAlongMissingWays(LoadInst* load, const DominatorTree& dt) {
    BasicBlock* home = load->getParent();
    if (effectBefore(home, load) != Effect::None || home == &f_.getEntryBlock()) return false;
    std::vector<BasicBlock*> at;
    SmallPtrSet<BasicBlock*, 16> onWay;
    bool reachesValue = false;
    for (BasicBlock* pred : predecessors(home))
      if (!cover(pred, at, onWay, reachesValue, 0)) return false;
    if (!reachesValue || at.empty() || at.size() > kMostReads) return false;
    std::vector<Value*> pointers;
    for (BasicBlock* block : at) {
      Value* pointer = pointerAt(load->getPointerOperand(), block->getTerminator(), dt);
      if (!pointer) return false;
      pointers.push_back(pointer);
    }
    for (size_t k = 0; k < at.size(); ++k) {
      Instruction* end = at[k]->getTerminator();
      auto* read = new LoadInst(load->getType(), materialize(pointers[k], end, dt), load->getName() + ".pre",
                                false, load->getAlign(), end);
      read->setDebugLoc(load->getDebugLoc());
      read->setAAMetadata(load->getAAMetadata());  // the same address and type: its alias tags hold
      effects_[at[k]].push_back({read, Effect::Gives, read});
    }
    return true;
  }

  // Whether every way into the end of `block` has the value or passes through a block that can
  // read it at its end (collected in `at`). `reachesValue` is set when some way has it.
  bool cover(BasicBlock* block, std::vector<BasicBlock*>& at, SmallPtrSetImpl<BasicBlock*>& onWay,
             bool& reachesValue, unsigned depth) {
    const Effect e = effectBefore(block, nullptr);
    if (e == Effect::Gives || (e == Effect::None && in_.lookup(block))) {
      reachesValue = true;
      return true;
    }
    if (block->getTerminator()->getNumSuccessors() != 1) return false;
    if (std::find(at.begin(), at.end(), block) != at.end()) return true;
    const bool origin = e == Effect::Forgets || block == &f_.getEntryBlock() || pred_empty(block);
    if (!origin && depth < kMostDepth && !onWay.count(block)) {
      // Through a block that passes on what comes in: its ways in, or else its own end.
      onWay.insert(block);
      const size_t atBefore = at.size();
      const bool reachedBefore = reachesValue;
      bool covered = true;
      for (BasicBlock* pred : predecessors(block))
        if (!cover(pred, at, onWay, reachesValue, depth + 1)) {
          covered = false;
          break;
        }
      onWay.erase(block);
      if (covered) return true;
      at.resize(atBefore);
      reachesValue = reachedBefore;
    }
    at.push_back(block);
    return true;
  }

  static constexpr size_t kMostReads = 4;    // loads one load may become
  static constexpr unsigned kMostDepth = 16;  // blocks walked back on one way

  bool availableAt(LoadInst* load) const {
    const Effect e = effectBefore(load->getParent(), load);
    return e == Effect::Gives || (e == Effect::None && in_.lookup(load->getParent()));
  }

  Function& f_;
  Type* type_;
  MapVector<BasicBlock*, std::vector<Step>> effects_;  // a block's steps, in order
  DenseMap<BasicBlock*, bool> in_;
};

}  // namespace

bool forwardAvailableValues(Function& f, AAResults& aa) {
  const Addresses addresses(f);
  // The loads by address and type, in program order; only an address with a store or a second
  // load can have a load to replace.
  MapVector<std::pair<Value*, Type*>, std::vector<LoadInst*>> loads;
  DenseMap<Value*, unsigned> accesses;
  for (BasicBlock& bb : f)
    for (Instruction& inst : bb)
      if (Value* address = addresses.of(&inst)) {
        ++accesses[address];
        if (auto* l = dyn_cast<LoadInst>(&inst)) loads[{address, l->getType()}].push_back(l);
      }
  std::vector<LoadInst*> replaced;
  const DominatorTree dt(f);  // loads are added and replaced, but no block
  const LoopInfo li(dt);
  for (auto& [key, group] : loads) {
    // One access can only meet its own value round a loop.
    if (accesses[key.first] < 2 && !li.getLoopFor(group.front()->getParent())) continue;
    // What may write the address is asked once for the group: with the alias tags every load of
    // it has in common (a load of a may_alias type, or an element of an expanded vload4, has
    // none: an int store may then change what a float-tagged load of the same address read).
    MemoryLocation where = MemoryLocation::get(group.front());
    for (const LoadInst* load : group) where.AATags = where.AATags.merge(load->getAAMetadata());
    AddressValues values(f, aa, addresses, key.first, key.second, where);
    values.forward(group, replaced, dt);
  }
  for (LoadInst* load : replaced) load->eraseFromParent();
  return !replaced.empty();
}

namespace {

// The store a block ends with, once nothing that touches memory follows it, or null.
StoreInst* lastStoreOf(BasicBlock& bb) {
  for (auto it = bb.getTerminator()->getReverseIterator(); ++it != bb.rend();) {
    if (auto* s = dyn_cast<StoreInst>(&*it)) return s->isSimple() ? s : nullptr;
    if (it->mayReadOrWriteMemory()) return nullptr;
  }
  return nullptr;
}

// `then`'s store over its predecessor's, when `then` is an if's branch that only stores to the
// address the predecessor stored to last, from at most two cheap instructions that are safe to
// run either way, and the two ways meet with nothing else (InstCombine's merge into the
// successor needs its two predecessors alone: an enclosing if's other way meeting them there,
// `if (j < m) { s[j] = v; if (s[j] <= eps) s[j] = 1; }`, keeps the stores apart). Returns
// whether it merged them.
bool mergeOverwrite(BasicBlock& then) {
  BasicBlock* from = then.getSinglePredecessor();
  auto* branch = from ? dyn_cast<BranchInst>(from->getTerminator()) : nullptr;
  auto* on = dyn_cast<BranchInst>(then.getTerminator());
  if (!branch || !branch->isConditional() || !on || on->isConditional() || from == &then) return false;
  BasicBlock* join = on->getSuccessor(0);
  if (branch->getSuccessor(0) != join && branch->getSuccessor(1) != join) return false;
  if (mergedPredecessors(*join) != 2) return false;
  StoreInst* second = nullptr;
  std::vector<Instruction*> computed;
  for (Instruction& i : then) {
    if (&i == on) break;
    if (auto* s = dyn_cast<StoreInst>(&i); s && !second && s->isSimple()) {
      second = s;
    } else if (!second && !i.mayReadOrWriteMemory() && !isa<PHINode>(i) && isSafeToSpeculativelyExecute(&i)) {
      computed.push_back(&i);
    } else {
      return false;
    }
  }
  StoreInst* first = lastStoreOf(*from);
  if (!second || !first || computed.size() > 2 || first->getPointerAddressSpace() != kGlobalAddressSpace ||
      first->getValueOperand()->getType() != second->getValueOperand()->getType() ||
      !sameComputation(first->getPointerOperand(), second->getPointerOperand()))
    return false;
  for (Instruction* i : computed) i->moveBefore(branch);
  IRBuilder<> b(branch);
  b.SetCurrentDebugLocation(first->getDebugLoc());
  const bool whenTrue = branch->getSuccessor(0) == &then;
  Value* value = b.CreateSelect(branch->getCondition(), whenTrue ? second->getValueOperand() : first->getValueOperand(),
                                whenTrue ? first->getValueOperand() : second->getValueOperand());
  StoreInst* merged = b.CreateStore(value, first->getPointerOperand());
  merged->setAlignment(std::min(first->getAlign(), second->getAlign()));
  // What both stores' alias tags say (their type's), so that later loads of other types still
  // tell it apart.
  merged->setAAMetadata(first->getAAMetadata().merge(second->getAAMetadata()));
  first->eraseFromParent();
  second->eraseFromParent();
  return true;
}

}  // namespace

bool mergeConditionalOverwrites(Function& f) {
  bool changed = false;
  for (BasicBlock& bb : f) changed |= mergeOverwrite(bb);
  return changed;
}

namespace {

constexpr const char* kEdgeBlockName = "cltrace.edge";

// GVN reads a value a load's block lacks on one way in on that edge, splitting it when it leaves
// a block of two ways (its load PRE: `x = 0; if (f[i]) x = a[i]; o[i] = x + a[i];` reads a[i]
// on the way that skips the if, and SimplifyCFG then makes the two reads one before the branch).
// readAlongMissingWays reads only at the ends of blocks of one successor, so the edges from a
// block of several ways into one with a recorded load within one loop (not a back edge, which
// GVN keeps; nor a loop's exit, which GVN meets rotated, its address not yet computed there)
// get a block of their own first; those left empty go again after (removeEmptyBlocks).
std::vector<BasicBlock*> splitEdgesIntoLoads(Function& f) {
  const DominatorTree dt(f);
  const LoopInfo li(dt);
  std::vector<std::pair<BasicBlock*, BasicBlock*>> edges;
  // GVN finds such a load's address on the edge when it is computed before the block, or in it
  // by a getelementptr of values from before it (which it moves there); an index computed in the
  // block (`c[i + 1]`) it makes a phi of first, and then cannot follow the load's address.
  const auto outside = [](const Value* v, const BasicBlock& bb) {
    const auto* inst = dyn_cast<Instruction>(v);
    return !inst || inst->getParent() != &bb;
  };
  const auto addressBefore = [&](const LoadInst& load) {
    const Value* pointer = load.getPointerOperand();
    if (outside(pointer, *load.getParent())) return true;
    const auto* gep = dyn_cast<GetElementPtrInst>(pointer);
    return gep && all_of(gep->operands(), [&](const Use& op) { return outside(op.get(), *load.getParent()); });
  };
  for (BasicBlock& bb : f) {
    const bool loads = any_of(bb, [&](const Instruction& i) {
      const auto* load = dyn_cast<LoadInst>(&i);
      return load && load->isSimple() && isRecordedSpace(load->getPointerAddressSpace()) && addressBefore(*load);
    });
    if (!loads || !bb.hasNPredecessorsOrMore(2)) continue;
    for (BasicBlock* pred : predecessors(&bb))
      if (isa<BranchInst>(pred->getTerminator()) && pred->getTerminator()->getNumSuccessors() > 1 &&
          !dt.dominates(&bb, pred) && li.getLoopFor(pred) == li.getLoopFor(&bb) &&
          !is_contained(edges, std::make_pair(pred, &bb)))
        edges.emplace_back(pred, &bb);
  }
  std::vector<BasicBlock*> made;
  for (auto [from, to] : edges)
    if (BasicBlock* between = SplitCriticalEdge(from, to)) {
      between->setName(kEdgeBlockName);
      made.push_back(between);
    }
  return made;
}

// The blocks of `made` that hold nothing but their branch, removed (their ways joined again).
void removeEmptyBlocks(const std::vector<BasicBlock*>& made) {
  for (BasicBlock* bb : made) {
    if (bb->size() != 1) continue;
    bb->setName("");  // else the block it goes on to, when unnamed, takes its name
    if (!TryToSimplifyUncondBranchFromEmptyBlock(bb)) bb->setName(kEdgeBlockName);
  }
}

}  // namespace

void removeEmptyEdgeBlocks(Function& f) {
  std::vector<BasicBlock*> edges;
  for (BasicBlock& bb : f)
    if (bb.getName().startswith(kEdgeBlockName)) edges.push_back(&bb);
  removeEmptyBlocks(edges);
}

PreservedAnalyses ForwardAvailableValuesPass::run(Function& f, FunctionAnalysisManager& am) {
  const std::vector<BasicBlock*> split = splitEdgesIntoLoads(f);
  if (!split.empty()) am.invalidate(f, PreservedAnalyses::none());
  const bool forwarded = forwardAvailableValues(f, am.getResult<AAManager>(f));
  removeEmptyBlocks(split);
  const bool merged = mergeConditionalOverwrites(f);
  if (!split.empty()) return PreservedAnalyses::none();
  return keptWhenBlocksStay(forwarded || merged);
}

}  // namespace cltrace::passes
