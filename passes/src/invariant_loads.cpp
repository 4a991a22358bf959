#include "cltrace/passes/invariant_loads.h"

#include <llvm/ADT/Triple.h>
#include <llvm/Analysis/AliasAnalysis.h>
#include <llvm/Analysis/AssumptionCache.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/MemoryLocation.h>
#include <llvm/Analysis/ScalarEvolution.h>
#include <llvm/Analysis/ScalarEvolutionExpressions.h>
#include <llvm/IR/PatternMatch.h>
#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>
#include <llvm/Transforms/Utils/PromoteMemToReg.h>

#include <map>
#include <optional>
#include <set>
#include <vector>

#include "cltrace/passes/access_enumeration.h"
#include "cltrace/passes/value_forwarding.h"

using namespace llvm;

namespace cltrace::passes {

namespace {

// A call that reads and writes no memory (get_global_id, and the other work-item functions
// clang's -O0 code calls inside the loop where the source mentions them).
bool pureCall(const Instruction* inst) {
  const auto* call = dyn_cast<CallInst>(inst);
  return call && call->doesNotAccessMemory() && call->getCalledFunction();
}

// Whether a call may write __global memory: one that may write memory at all, unless every
// pointer it is given is private (into private variables) or __local (an atomic on __local
// memory, vstore4 to a private array). A call given no pointer (a barrier, mem_fence, printf's
// format aside) may.
bool callMayWriteGlobal(const CallBase& call) {
  if (call.onlyReadsMemory()) return false;
  bool pointers = false;
  for (const Value* arg : call.args()) {
    if (!arg->getType()->isPointerTy()) continue;
    pointers = true;
    if (mayReachGlobal(arg)) return true;
  }
  return !pointers;
}

// A plain store of a `type` value to `pointer` (computed the same way).
bool storesTo(const Instruction& inst, const Value* pointer, const Type* type) {
  const auto* s = dyn_cast<StoreInst>(&inst);
  return s && pointer && s->isSimple() && s->getValueOperand()->getType() == type &&
         sameComputation(s->getPointerOperand(), pointer);
}

// The plain stores in `l` to `load`'s own address (storesTo).
std::vector<StoreInst*> ownAddressStores(const Loop& l, const LoadInst& load) {
  std::vector<StoreInst*> stores;
  for (BasicBlock* block : l.blocks())
    for (Instruction& inst : *block)
      if (storesTo(inst, load.getPointerOperand(), load.getType())) stores.push_back(cast<StoreInst>(&inst));
  return stores;
}

// Whether something in `l` may write __global memory, other than, when `load` is given, plain
// stores of its type to its own address and stores that alias analysis shows never touch what
// it reads (`f[2*i]` against `f[2*i+1]`, two fields of one struct). The load's address is the
// same in every iteration, so the answer holds across iterations.
bool mayWriteGlobal(const Loop& l, const LoadInst* load = nullptr, AAResults* aa = nullptr) {
  const Value* pointer = load ? load->getPointerOperand() : nullptr;
  const Type* type = load ? load->getType() : nullptr;
  for (const BasicBlock* bb : l.blocks())
    for (const Instruction& inst : *bb) {
      if (const auto* s = dyn_cast<StoreInst>(&inst)) {
        if (!mayReachGlobal(s->getPointerOperand()) || storesTo(inst, pointer, type)) continue;
        if (load && aa && s->isSimple() && aa->isNoAlias(MemoryLocation::get(s), MemoryLocation::get(load)))
          continue;
        return true;
      } else if (const auto* a = dyn_cast<AtomicRMWInst>(&inst)) {
        if (mayReachGlobal(a->getPointerOperand())) return true;
      } else if (const auto* a = dyn_cast<AtomicCmpXchgInst>(&inst)) {
        if (mayReachGlobal(a->getPointerOperand())) return true;
      } else if (isa<FenceInst>(inst)) {
        return true;
      } else if (const auto* call = dyn_cast<CallBase>(&inst)) {
        if (isa<DbgInfoIntrinsic>(call) || call->isLifetimeStartOrEnd()) continue;
        if (callMayWriteGlobal(*call)) return true;
      }
    }
  return false;
}

// Which loads are read once per entry into which loops.
class Hoisting {
 public:
  Hoisting(const DominatorTree& dt, const LoopInfo& li, AAResults& aa, ScalarEvolution& se)
      : dt_(dt), li_(li), aa_(aa), se_(se) {}

  // The outermost loop `load` is read once per entry into, or null.
  Loop* target(const LoadInst& load) {
    Loop* target = nullptr;
    for (Loop* l = li_.getLoopFor(load.getParent()); l; l = l->getParentLoop()) {
      if (!hoistableIn(*l, load, 0)) break;
      target = l;
    }
    return target;
  }

 private:
  bool hoistableIn(const Loop& l, const LoadInst& load, unsigned depth) {
    if (!load.isSimple()) return false;
    const unsigned space = load.getPointerAddressSpace();
    if (space != kGlobalAddressSpace && space != kConstantAddressSpace) return false;
    if (!runsInEveryIteration(l, load.getParent()) || readingExitBefore(l, load.getParent())) return false;
    // Stores to the load's own address are no obstacle: later iterations take the value last
    // stored (a GPU compiler's GVN carries it round the back edge of the rotated loop). Nor are
    // stores elsewhere: `for (j) { f[2*i] += a[j]; f[2*i+1] += b[j]; }` reads each once.
    if (space == kGlobalAddressSpace && writesGlobal(l) && mayWriteGlobal(l, &load, &aa_)) return false;
    return invariantIn(l, load.getPointerOperand(), depth);
  }

  // Whether `v` is computed from values defined outside `l` by arithmetic, casts, calls that
  // touch no memory, and loads read once per entry into `l` themselves (`w[idx[0]]`) whose
  // value stays the same: not one the loop stores to (`p = f[0]; f[0] = p + 1; s += d[p];`
  // reads f[0] once, but d[p] is another address every iteration).
  bool invariantIn(const Loop& l, const Value* v, unsigned depth) {
    const auto* inst = dyn_cast<Instruction>(v);
    if (!inst || !l.contains(inst)) return true;
    if (depth > 16) return false;
    if (const auto* load = dyn_cast<LoadInst>(inst))
      return hoistableIn(l, *load, depth + 1) && ownAddressStores(l, *load).empty();
    if (!isa<GetElementPtrInst>(inst) && !isa<CastInst>(inst) && !isa<BinaryOperator>(inst) && !pureCall(inst))
      return false;
    for (const Value* operand : inst->operands())  // a call's callee too: a function, invariant
      if (!invariantIn(l, operand, depth + 1)) return false;
    return true;
  }

  // Whether `block` runs in every iteration of `l`: it dominates `l`'s latches, or it is in
  // loops inside `l` entered in every iteration of `l` whose first iteration runs it. clang -O2
  // for NVPTX reads w[0] once in `for (j < m) for (k < m) s += w[0] * a[j * m + k];`: the inner
  // loop's guard (m > 0) is implied by the outer loop's, and LICM hoists the load out of both
  // (with `k < n`, once per entry into the inner loop).
  bool runsInEveryIteration(const Loop& l, const BasicBlock* block) {
    for (const Loop* inner = li_.getLoopFor(block); inner != &l; inner = inner->getParentLoop()) {
      if (inner == nullptr || !runsEveryIteration(*inner, block, dt_) || !firstIterationRuns(*inner, block))
        return false;
      block = inner->getHeader();
    }
    return runsEveryIteration(l, block, dt_);
  }

  // Whether the first iteration of `l` after each entry runs `block` (which runs in every
  // iteration that reaches a latch): every exit but the header's test comes after `block`, and
  // the header does not exit or its test passes the first time, as the conditions under which
  // the loop is entered show (scalar evolution: `k < m` with k starting at 0, entered where
  // `j < m` and j >= 0).
  bool firstIterationRuns(const Loop& l, const BasicBlock* block) {
    BasicBlock* header = l.getHeader();
    SmallVector<BasicBlock*, 4> exiting;
    l.getExitingBlocks(exiting);
    for (const BasicBlock* e : exiting)
      if (e != header && !dt_.dominates(block, e)) return false;
    if (!l.isLoopExiting(header) || dt_.dominates(block, header)) return true;
    const auto* br = dyn_cast<BranchInst>(header->getTerminator());
    const auto* test = br && br->isConditional() ? dyn_cast<ICmpInst>(br->getCondition()) : nullptr;
    if (!test) return false;
    ICmpInst::Predicate stays = l.contains(br->getSuccessor(0)) ? test->getPredicate() : test->getInversePredicate();
    const SCEV* lhs = firstValue(l, test->getOperand(0));
    const SCEV* rhs = firstValue(l, test->getOperand(1));
    return lhs && rhs && (se_.isKnownPredicate(stays, lhs, rhs) || se_.isLoopEntryGuardedByCond(&l, stays, lhs, rhs));
  }

  // Whether `l` has a way out before `block` (a break) whose test reads memory (`if (a[k] < 0)
  // break;`): clang -O2 keeps such an exit apart (SimplifyCFG does not run a load on the other
  // way to merge the test into the loop's own), so what comes after it does not run in every
  // iteration that is entered, and LICM leaves a load there in the loop: NVPTX reads w[0] in
  // every iteration of `for (k < m) { if (a[k] < 0) break; s += w[0]; }`. A cheap test
  // (`k * k > lim`) is merged into the loop's, and the load is hoisted.
  bool readingExitBefore(const Loop& l, const BasicBlock* block) {
    for (const Loop* in = li_.getLoopFor(block); in != &l; in = in->getParentLoop())
      block = in->getHeader();  // the block of `l` itself on the way to `block`
    SmallVector<BasicBlock*, 4> exiting;
    l.getExitingBlocks(exiting);
    for (const BasicBlock* e : exiting) {
      if (e == l.getHeader() || dt_.dominates(block, e)) continue;
      for (const Instruction& inst : *e)
        if (inst.mayReadOrWriteMemory() && !pureCall(&inst)) return true;
    }
    return false;
  }

  // `v`'s value in the first iteration of `l`, when scalar evolution knows it, or null.
  const SCEV* firstValue(const Loop& l, Value* v) {
    if (!se_.isSCEVable(v->getType())) return nullptr;
    const SCEV* s = se_.getSCEV(v);
    if (const auto* rec = dyn_cast<SCEVAddRecExpr>(s); rec && rec->getLoop() == &l) s = rec->getStart();
    return se_.isLoopInvariant(s, &l) ? s : nullptr;
  }

  bool writesGlobal(const Loop& l) {
    auto [it, added] = writes_.try_emplace(&l, false);
    if (added) it->second = mayWriteGlobal(l);
    return it->second;
  }

  const DominatorTree& dt_;
  const LoopInfo& li_;
  AAResults& aa_;
  ScalarEvolution& se_;
  std::map<const Loop*, bool> writes_;
};

// Loads of a value the loop's previous iteration stored or loaded: storeFor below, loadFor
// (Carried::loadFor) for loads.
// Loads of the value the loop's previous iteration stored (`CDF[x] = w[x] + CDF[x - 1];`):
// clang -O2 for NVPTX (its GVN) reads it once, before the loop, and keeps the stored
// value in a register for the next iteration. Such a load is read only in the first iteration
// after its loop was entered; later ones take the value stored. A load qualifies when, in its
// innermost loop:
//  - it and the store are plain __global accesses of one type, each in a block every iteration
//    runs, the load before the store (it dominates it), neither in an inner loop;
//  - the store's address is the load's plus one iteration's step (scalar evolution: the load's
//    address steps by s each iteration and the store's minus the load's is s), so the store of
//    one iteration writes exactly what the next iteration's load reads, and the load reads
//    element x - 1, x the counter stepping by one (readsPreviousElement);
//  - nothing else in the loop may write there in between: every other store is one that type
//    rules or distinct objects keep apart whatever the iteration (alias analysis asked without
//    sizes or offsets, which hold within one iteration only), and there is no atomic, fence,
//    barrier or call that may write __global memory.
class Carried {
 public:
  Carried(const DominatorTree& dt, const LoopInfo& li, AAResults& aa, ScalarEvolution& se)
      : se_(se), dt_(dt), li_(li), aa_(aa) {}

  // The store whose value `load` takes in the next iteration of its innermost loop, or null.
  StoreInst* storeFor(LoadInst& load) {
    Loop* l = li_.getLoopFor(load.getParent());
    if (!l || !load.isSimple() || load.getPointerAddressSpace() != kGlobalAddressSpace) return nullptr;
    if (!runsEveryIteration(*l, load.getParent(), dt_)) return nullptr;
    StoreInst* carried = nullptr;
    for (BasicBlock* block : l->blocks())
      for (Instruction& inst : *block)
        if (auto* s = dyn_cast<StoreInst>(&inst); s && !carried && nextIterationReads(*s, load, *l)) carried = s;
    return carried && othersKeepOff(*l, load, carried) ? carried : nullptr;
  }

  // The load of the loop whose value `load` takes in the next iteration of its innermost loop
  // (`s += a[j] * a[j + 1];`: a[j + 1] read before is a[j] now), or null. clang -O2 for NVPTX
  // reads a[j] once, before the loop (GVN's load PRE round the back edge). Both plain loads of
  // one type and memory space in blocks every iteration of that loop runs, neither in an inner
  // loop, the other's address one iteration's step ahead (oneStepAhead), each indexing one
  // array by the loop's counter plus a constant (counterIndex: the forms GVN translates to the
  // previous iteration); nothing in the loop may write what `load` reads but stores that alias
  // analysis keeps apart in every iteration, and no atomic, fence, barrier or writing call.
  LoadInst* loadFor(LoadInst& load) {
    Loop* l = li_.getLoopFor(load.getParent());
    if (!l || !l->getLoopLatch() || !load.isSimple() || !isRecordedSpace(load.getPointerAddressSpace()) ||
        !runsEveryIteration(*l, load.getParent(), dt_))
      return nullptr;
    const std::optional<CounterIndex> index = counterIndex(load, *l);
    if (!index) return nullptr;
    LoadInst* ahead = nullptr;
    for (BasicBlock* block : l->blocks())
      for (Instruction& inst : *block) {
        auto* other = dyn_cast<LoadInst>(&inst);
        if (ahead || !other || other == &load || !other->isSimple() || other->getType() != load.getType() ||
            other->getPointerAddressSpace() != load.getPointerAddressSpace() || li_.getLoopFor(block) != l ||
            !runsEveryIteration(*l, block, dt_))
          continue;
        const std::optional<CounterIndex> at = counterIndex(*other, *l);
        if (at && at->counter == index->counter && at->widening == index->widening &&
            oneStepAhead(other->getPointerOperand(), load.getPointerOperand(), *l, 0))
          ahead = other;
      }
    return ahead && othersKeepOff(*l, load, nullptr) ? ahead : nullptr;
  }

 private:
  // An address a[j + c]: one index into a loop-invariant pointer, the loop's counter (a phi of
  // its header) plus a constant, maybe widened.
  struct CounterIndex {
    const PHINode* counter;
    unsigned widening;  // the widening cast's opcode, or 0
  };
  // The index of `load`'s address when it is a[j + c] with j the counter of `l`. GVN translates
  // such an address to the previous iteration, but not a[i + j], nor, with an int counter
  // sign-extended, a negative c: clang -O2 makes a[j] and a[j + 1] zero-extended and leaves
  // a[j - 1] sign-extended, which then matches no address of the previous iteration.
  static std::optional<CounterIndex> counterIndex(const LoadInst& load, const Loop& l) {
    using namespace PatternMatch;
    const auto* gep = dyn_cast<GetElementPtrInst>(load.getPointerOperand());
    if (!gep || gep->getNumOperands() != 2 || !l.isLoopInvariant(gep->getPointerOperand())) return std::nullopt;
    const Value* index = gep->getOperand(1);
    unsigned widening = 0;
    if (isa<SExtInst>(index) || isa<ZExtInst>(index)) {
      widening = cast<CastInst>(index)->getOpcode();
      index = cast<CastInst>(index)->getOperand(0);
    }
    const Value* counter = index;
    const APInt* c = nullptr;
    int64_t offset = 0;
    if (match(index, m_Add(m_Value(), m_APInt(c)))) {
      counter = cast<Instruction>(index)->getOperand(0);
      offset = c->getSExtValue();
    } else if (match(index, m_Sub(m_Value(), m_APInt(c)))) {
      counter = cast<Instruction>(index)->getOperand(0);
      offset = -c->getSExtValue();
    }
    const auto* phi = dyn_cast<PHINode>(counter);
    if (!phi || phi->getParent() != l.getHeader()) return std::nullopt;
    if (widening == Instruction::SExt && offset < 0) return std::nullopt;
    return CounterIndex{phi, widening};
  }

  // Whether nothing in `l` but `except` may write what `load` reads, in any iteration: every
  // other store one that alias analysis keeps apart from it in every iteration (for a
  // __constant load, none can reach it), and no atomic (an atomic on __local memory too: rare in
  // such loops, not worth telling apart), fence, barrier or call that may write __global memory.
  bool othersKeepOff(const Loop& l, const LoadInst& load, const StoreInst* except) {
    for (const BasicBlock* block : l.blocks())
      for (const Instruction& inst : *block) {
        if (const auto* s = dyn_cast<StoreInst>(&inst)) {
          if (s != except && load.getPointerAddressSpace() == kGlobalAddressSpace &&
              mayReachGlobal(s->getPointerOperand()) && !apartInEveryIteration(*s, load))
            return false;
        } else if (isa<AtomicRMWInst>(inst) || isa<AtomicCmpXchgInst>(inst) || isa<FenceInst>(inst)) {
          return false;
        } else if (const auto* call = dyn_cast<CallBase>(&inst)) {
          if (!isa<DbgInfoIntrinsic>(call) && !call->isLifetimeStartOrEnd() && callMayWriteGlobal(*call)) return false;
        }
      }
    return true;
  }

  // Whether `s`, a plain store of `load`'s type in `l` after it, writes in each iteration what
  // `load` reads in the next.
  bool nextIterationReads(StoreInst& s, LoadInst& load, const Loop& l) {
    if (!s.isSimple() || s.getPointerAddressSpace() != kGlobalAddressSpace ||
        s.getValueOperand()->getType() != load.getType() || li_.getLoopFor(s.getParent()) != &l ||
        !runsEveryIteration(l, s.getParent(), dt_) || !dt_.dominates(&load, &s))
      return false;
    return readsPreviousElement(load, l) && oneStepAhead(s.getPointerOperand(), load.getPointerOperand(), l, 0);
  }

  // Whether `load` reads element x - 1 of an array whose other indices the loop does not change,
  // x the loop's counter stepping up by one: the one form in which clang -O2 for NVPTX keeps the
  // value stored for the next iteration (GVN carrying the address back through the header's phi).
  // `a[(r - 1) * n + c]`, `c[i * m + j - 1]`, `a[x - 2]` with x += 2 and `a[x + 1]` with x-- are
  // one step ahead too, but NVPTX reads them every iteration (clang -O2 nvptx64, with and without
  // unrolling).
  static bool readsPreviousElement(const LoadInst& load, const Loop& l) {
    using namespace PatternMatch;
    const auto* gep = dyn_cast<GetElementPtrInst>(load.getPointerOperand());
    if (!gep || gep->getNumOperands() < 2) return false;
    for (unsigned k = 0; k + 1 < gep->getNumOperands(); ++k)
      if (!l.isLoopInvariant(gep->getOperand(k))) return false;
    const Value* index = gep->getOperand(gep->getNumOperands() - 1);
    while (const auto* cast = dyn_cast<CastInst>(index)) index = cast->getOperand(0);
    Value* counter = nullptr;
    if (!match(index, m_Sub(m_Value(counter), m_One())) && !match(index, m_Add(m_Value(counter), m_AllOnes())))
      return false;
    const auto* phi = dyn_cast<PHINode>(counter);
    if (!phi || phi->getParent() != l.getHeader() || !l.getLoopLatch()) return false;
    const Value* next = phi->getIncomingValueForBlock(l.getLoopLatch());
    return match(next, m_Add(m_Specific(phi), m_One()));
  }

  // Whether `ahead`, in each iteration of `l`, is what `v` is in the next: `v` steps by s each
  // iteration and `ahead` minus `v` is s. Elements of one array are compared by their index
  // (`a[r * n + c]` and `a[(r - 1) * n + c]`: clang's index is a 32-bit int widened to 64 bits,
  // which scalar evolution cannot always carry through the widening; equal ints widen alike).
  bool oneStepAhead(Value* ahead, Value* v, const Loop& l, unsigned depth) {
    if (depth > 4 || ahead->getType() != v->getType()) return false;
    if (const auto* rec = dyn_cast<SCEVAddRecExpr>(se_.getSCEV(v)); rec && rec->getLoop() == &l && rec->isAffine()) {
      const SCEV* apart = se_.getMinusSCEV(se_.getSCEV(ahead), rec);
      if (!isa<SCEVCouldNotCompute>(apart) && se_.getMinusSCEV(apart, rec->getStepRecurrence(se_))->isZero())
        return true;
    }
    auto* x = dyn_cast<Instruction>(ahead);
    auto* y = dyn_cast<Instruction>(v);
    if (!x || !y || x->getOpcode() != y->getOpcode()) return false;
    if (isa<SExtInst>(x) || isa<ZExtInst>(x) || isa<BitCastInst>(x) || isa<AddrSpaceCastInst>(x))
      return oneStepAhead(x->getOperand(0), y->getOperand(0), l, depth + 1);
    // One index differs (one step ahead); the base, the other indices and the element type are
    // the same and the same in every iteration, so the next iteration's address is `ahead`'s.
    const auto* gx = dyn_cast<GetElementPtrInst>(x);
    const auto* gy = dyn_cast<GetElementPtrInst>(y);
    if (!gx || !gy || gx->getSourceElementType() != gy->getSourceElementType() ||
        gx->getNumOperands() != gy->getNumOperands())
      return false;
    int differing = -1;
    for (unsigned k = 0; k < gx->getNumOperands(); ++k) {
      if (sameComputation(gx->getOperand(k), gy->getOperand(k)) && l.isLoopInvariant(gx->getOperand(k)) &&
          l.isLoopInvariant(gy->getOperand(k)))
        continue;
      if (differing >= 0 || k == 0) return false;
      differing = static_cast<int>(k);
    }
    return differing > 0 && oneStepAhead(x->getOperand(differing), y->getOperand(differing), l, depth + 1);
  }

  // Whether alias analysis keeps `s` and `load` apart with no size or offset known, so that the
  // answer holds between different iterations' addresses (type rules, distinct objects). Scoped
  // no-alias tags (an inlined helper's `restrict` parameters) hold within one call, one
  // iteration, and are left out.
  bool apartInEveryIteration(const StoreInst& s, const LoadInst& load) {
    return aa_.isNoAlias(MemoryLocation::getBeforeOrAfter(s.getPointerOperand(), typeTags(s)),
                         MemoryLocation::getBeforeOrAfter(load.getPointerOperand(), typeTags(load)));
  }
  static AAMDNodes typeTags(const Instruction& access) {
    AAMDNodes tags = access.getAAMetadata();
    tags.Scope = nullptr;
    tags.NoAlias = nullptr;
    return tags;
  }

  ScalarEvolution& se_;
  const DominatorTree& dt_;
  const LoopInfo& li_;
  AAResults& aa_;
};

struct Candidate {
  LoadInst* load;
  std::vector<BasicBlock*> entries;  // the blocks outside its loop that branch to the loop's header
  std::vector<StoreInst*> stores;    // the loop's stores to the load's address
  std::vector<LoadInst*> after;      // loads of its address just after the loop (afterLoop)
  LoadInst* ahead = nullptr;         // the load whose value it takes the next iteration (Carried::loadFor)
  Instruction* backEdge = nullptr;   // with `ahead`: its loop's latch's branch (splits move, not change, it)
};

// Loads of loop-invariant `load`'s address at the start of `l`'s exit blocks, before anything
// that may write memory, in blocks only `l` branches to: once the loop has read it, the value
// kept is what memory holds there (the loop writes the address only through the stores that
// update it), so such a load is read only when the loop did not read (`for (k...) c[i] += a[k];
// o[i] = c[i];` reads c[i] once, as a GPU compiler's GVN takes the value stored in the loop).
std::vector<LoadInst*> afterLoop(const Loop& l, const LoadInst& load) {
  std::vector<LoadInst*> out;
  SmallVector<BasicBlock*, 4> exits;
  l.getUniqueExitBlocks(exits);
  for (BasicBlock* exit : exits) {
    if (!all_of(predecessors(exit), [&](const BasicBlock* p) { return l.contains(p); })) continue;
    for (Instruction& inst : *exit) {
      if (auto* other = dyn_cast<LoadInst>(&inst); other && other->isSimple() && other->getType() == load.getType() &&
                                                   sameComputation(other->getPointerOperand(), load.getPointerOperand()))
        out.push_back(other);
      if (inst.mayWriteToMemory()) break;
    }
  }
  return out;
}

}  // namespace

bool loadInvariantsOnce(Function& kernel, AAResults& aa) {
  DominatorTree dt(kernel);
  LoopInfo li(dt);
  TargetLibraryInfoImpl tlii(Triple(kernel.getParent()->getTargetTriple()));
  TargetLibraryInfo tli(tlii);
  AssumptionCache ac(kernel);
  ScalarEvolution se(kernel, tli, ac, dt, li);
  Hoisting hoisting(dt, li, aa, se);  // every query before the function changes
  Carried carried(dt, li, aa, se);
  std::vector<Candidate> candidates;
  for (BasicBlock& bb : kernel)
    for (Instruction& inst : bb) {
      auto* load = dyn_cast<LoadInst>(&inst);
      if (!load) continue;
      Loop* target = hoisting.target(*load);
      StoreInst* previous = target ? nullptr : carried.storeFor(*load);
      LoadInst* ahead = target || previous ? nullptr : carried.loadFor(*load);
      if (previous || ahead) target = li.getLoopFor(load->getParent());
      if (!target) continue;
      // Taken before any block is split (a split may add a latch the loop does not list).
      Candidate c{load, {}, {}, {}, ahead, ahead ? target->getLoopLatch()->getTerminator() : nullptr};
      for (BasicBlock* pred : predecessors(target->getHeader()))
        if (!target->contains(pred)) c.entries.push_back(pred);
      // Read once, the load takes the value last stored at its address: by the loop's stores
      // to it (loop-invariant), or by the previous iteration's store (carried).
      if (previous)
        c.stores = {previous};
      else if (!ahead)
        c.stores = ownAddressStores(*target, *load);
      if (!previous && !ahead) c.after = afterLoop(*target, *load);  // (a carried load's address moves)
      candidates.push_back(std::move(c));
    }
  if (candidates.empty()) return false;
  // A load after a loop that is read once itself (in an outer loop) keeps that way; and each
  // load is taken after one loop only.
  std::set<const LoadInst*> taken;
  for (const Candidate& c : candidates) taken.insert(c.load);
  for (Candidate& c : candidates)
    c.after.erase(remove_if(c.after, [&](const LoadInst* l) { return !taken.insert(l).second; }), c.after.end());

  // Per load: `fresh` (set on every edge into its loop, cleared once it has read) and `value`,
  // private variables that mem2reg turns into phis.
  IRBuilder<> entry(&*kernel.getEntryBlock().getFirstInsertionPt());
  std::vector<AllocaInst*> slots;
  for (const Candidate& c : candidates) {
    LoadInst* load = c.load;
    AllocaInst* fresh = entry.CreateAlloca(entry.getInt1Ty(), nullptr, "cltrace.fresh");
    AllocaInst* value = entry.CreateAlloca(load->getType(), nullptr, "cltrace.invariant");
    entry.CreateStore(entry.getFalse(), fresh);
    entry.CreateStore(UndefValue::get(load->getType()), value);
    slots.push_back(fresh);
    slots.push_back(value);
    for (BasicBlock* pred : c.entries)
      new StoreInst(ConstantInt::getTrue(kernel.getContext()), fresh, pred->getTerminator());
    for (StoreInst* s : c.stores) (new StoreInst(s->getValueOperand(), value, s))->moveAfter(s);
    // The next iteration takes what `ahead` read, kept at the end of this one (the latch): the
    // load's own uses in this iteration, before or after `ahead`, take what it read itself. Made
    // before any load is split: where `ahead` is read once too (`a[j] + a[j + 1] + a[j + 2]`),
    // its split then makes this store keep the value it has every iteration.
    if (c.ahead) new StoreInst(c.ahead, value, c.backEdge);
  }
  for (size_t k = 0; k < candidates.size(); ++k) {
    const Candidate& c = candidates[k];
    LoadInst* load = c.load;
    AllocaInst* fresh = slots[2 * k];
    AllocaInst* value = slots[2 * k + 1];
    // The load in the loop, and those after it, read only while `fresh`.
    std::vector<LoadInst*> reads = {load};
    reads.insert(reads.end(), c.after.begin(), c.after.end());
    for (LoadInst* read : reads) {
      IRBuilder<> b(read);
      Value* first = b.CreateLoad(b.getInt1Ty(), fresh);
      Instruction* then = SplitBlockAndInsertIfThen(first, read, false);
      read->moveBefore(then);
      IRBuilder<> t(then);
      t.CreateStore(read, value);
      t.CreateStore(t.getFalse(), fresh);
      IRBuilder<> after(&*then->getSuccessor(0)->getFirstInsertionPt());
      Value* kept = after.CreateLoad(read->getType(), value);
      read->replaceUsesWithIf(kept, [&](Use& u) { return cast<Instruction>(u.getUser())->getParent() != then->getParent(); });
    }
  }
  DominatorTree updated(kernel);
  PromoteMemToReg(slots, updated);
  return true;
}

}  // namespace cltrace::passes
