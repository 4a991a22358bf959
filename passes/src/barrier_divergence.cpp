#include "cltrace/passes/barrier_divergence.h"

#include <llvm/ADT/BitVector.h>
#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>

#include <map>

#include "cltrace/passes/access_enumeration.h"

using namespace llvm;

namespace cltrace::passes {

namespace {

StringRef calleeStem(const Value* v) {
  const auto* call = dyn_cast<CallInst>(v);
  const Function* callee = call ? call->getCalledFunction() : nullptr;
  return callee ? demangledStem(callee->getName()) : StringRef();
}

bool isWorkItemId(const Value* v) {
  const StringRef stem = calleeStem(v);
  // A work-group scan gives each work-item its own prefix, whatever it scans.
  return stem == "get_local_id" || stem == "get_global_id" || stem == "get_local_linear_id" ||
         stem == "get_global_linear_id" || stem == "get_sub_group_local_id" || stem.startswith("work_group_scan_");
}

// Work-group functions whose result every work-item of the group shares.
bool isGroupUniformCall(const Value* v) {
  const StringRef stem = calleeStem(v);
  return stem.startswith("work_group_reduce_") || stem == "work_group_broadcast" || stem == "work_group_any" ||
         stem == "work_group_all";
}

const Value* withoutCasts(const Value* v) {
  while (const auto* cast = dyn_cast<CastInst>(v)) v = cast->getOperand(0);
  return v;
}

// get_global_id(d) - get_local_id(d): the group's first global id, the same for the whole group.
bool isGroupBase(const Instruction& inst) {
  if (inst.getOpcode() != Instruction::Sub) return false;
  const auto* global = dyn_cast<CallInst>(withoutCasts(inst.getOperand(0)));
  const auto* local = dyn_cast<CallInst>(withoutCasts(inst.getOperand(1)));
  if (!global || !local || calleeStem(global) != "get_global_id" || calleeStem(local) != "get_local_id") return false;
  const auto* a = dyn_cast<ConstantInt>(global->getArgOperand(0));
  const auto* b = dyn_cast<ConstantInt>(local->getArgOperand(0));
  return a && b && a->getZExtValue() == b->getZExtValue();
}


// Post-dominance among the blocks that can reach a return: a way that ends in `unreachable`
// (undefined, so not taken) or loops forever is no way a work-item takes to the end.
class ReturningPostDominance {
 public:
  explicit ReturningPostDominance(const Function& f) {
    for (const BasicBlock& b : f) index_[&b] = blocks_.size(), blocks_.push_back(&b);
    const size_t n = blocks_.size();
    returns_.resize(n);
    std::vector<const BasicBlock*> work;
    for (const BasicBlock* b : blocks_)
      if (isa<ReturnInst>(b->getTerminator())) returns_.set(index_[b]), work.push_back(b);
    while (!work.empty()) {
      const BasicBlock* b = work.back();
      work.pop_back();
      for (const BasicBlock* p : predecessors(b))
        if (!returns_.test(index_[p])) returns_.set(index_[p]), work.push_back(p);
    }
    // pdom(b) = {b} + the intersection over b's returning successors; a return block: {b}.
    pdom_.assign(n, BitVector(n, true));
    for (size_t i = 0; i < n; ++i)
      if (!returns_.test(i) || isa<ReturnInst>(blocks_[i]->getTerminator())) {
        pdom_[i].reset();
        pdom_[i].set(i);
      }
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = n; i-- > 0;) {
        if (!returns_.test(i) || isa<ReturnInst>(blocks_[i]->getTerminator())) continue;
        BitVector next(n, true);
        for (const BasicBlock* s : successors(blocks_[i]))
          if (canReturn(s)) next &= pdom_[index_.lookup(s)];
        next.set(i);
        if (next != pdom_[i]) pdom_[i] = std::move(next), changed = true;
      }
    }
  }

  bool canReturn(const BasicBlock* b) const { return returns_.test(index_.lookup(b)); }

  // Where every returning way from `b` meets first (its immediate post-dominator), or null when
  // they meet only at the end (different returns).
  const BasicBlock* join(const BasicBlock* b) const {
    const BitVector& mine = pdom_[index_.lookup(b)];
    const size_t want = mine.count() - 1;
    for (unsigned i : mine.set_bits())
      if (blocks_[i] != b && pdom_[i].count() == want) return blocks_[i];
    return nullptr;
  }

 private:
  std::vector<const BasicBlock*> blocks_;
  DenseMap<const BasicBlock*, size_t> index_;
  BitVector returns_;
  std::vector<BitVector> pdom_;
};

}  // namespace

std::vector<DivergentBarrier> divergentBarriers(const Function& kernel, const std::vector<const Instruction*>& barriers) {
  std::vector<DivergentBarrier> found;
  if (barriers.empty() || kernel.empty()) return found;
  const ReturningPostDominance postDominance(kernel);

  // Values that differ between the work-items of a group: the ids, what is computed from them,
  // and the phis where the ways of a branch on such a value meet (a value chosen by the way
  // taken). Grown until no branch adds more.
  SmallPtrSet<const Value*, 32> dependent;
  std::vector<const Value*> work;
  auto mark = [&](const Value* v) {
    if (dependent.insert(v).second) work.push_back(v);
  };
  for (const BasicBlock& block : kernel)
    for (const Instruction& inst : block)
      if (isWorkItemId(&inst)) mark(&inst);
  struct Region {
    const Instruction* branch;
    const Value* condition;
    SmallPtrSet<const BasicBlock*, 16> blocks;  // from the branch until its ways meet
  };
  std::vector<Region> regions;
  SmallPtrSet<const Instruction*, 16> branchesSeen;
  for (bool grew = true; grew;) {
    while (!work.empty()) {
      const Value* v = work.back();
      work.pop_back();
      for (const User* user : v->users()) {
        const auto* inst = dyn_cast<Instruction>(user);
        if (!inst || inst->getType()->isVoidTy() || isGroupUniformCall(inst) || isGroupBase(*inst)) continue;
        mark(inst);
      }
    }
    grew = false;
    for (const BasicBlock& block : kernel) {
      const Instruction* terminator = block.getTerminator();
      const Value* condition = terminator ? branchCondition(terminator) : nullptr;
      if (!condition || !dependent.count(condition) || !postDominance.canReturn(&block) ||
          branchesSeen.count(terminator))
        continue;
      SmallPtrSet<const BasicBlock*, 4> ways;
      for (const BasicBlock* s : successors(&block))
        if (postDominance.canReturn(s)) ways.insert(s);
      if (ways.size() < 2) continue;  // the other ways are undefined or never end
      branchesSeen.insert(terminator);
      Region region{terminator, condition, {}};
      const BasicBlock* join = postDominance.join(&block);
      std::vector<const BasicBlock*> blocks(ways.begin(), ways.end());
      while (!blocks.empty()) {
        const BasicBlock* b = blocks.back();
        blocks.pop_back();
        if (b == join || !postDominance.canReturn(b) || !region.blocks.insert(b).second) continue;
        for (const BasicBlock* next : successors(b)) blocks.push_back(next);
      }
      // The phis where the ways meet: at the join, and inside the region (a loop's header).
      auto markPhis = [&](const BasicBlock* b) {
        for (const PHINode& phi : b->phis()) mark(&phi);
      };
      if (join) markPhis(join);
      for (const BasicBlock* b : region.blocks) markPhis(b);
      regions.push_back(std::move(region));
      grew = true;
    }
  }

  std::map<const BasicBlock*, std::vector<const Instruction*>> barriersIn;
  for (const Instruction* b : barriers) barriersIn[b->getParent()].push_back(b);
  SmallPtrSet<const Instruction*, 8> reported;
  // Regions in the order found (blocks in function order, pass by pass): a barrier goes with
  // the first that holds it.
  for (const Region& region : regions)
    for (const BasicBlock* b : region.blocks) {
      auto it = barriersIn.find(b);
      if (it == barriersIn.end()) continue;
      for (const Instruction* barrier : it->second)
        if (reported.insert(barrier).second) found.push_back({barrier, region.branch, region.condition});
    }
  return found;
}

}  // namespace cltrace::passes
