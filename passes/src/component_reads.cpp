#include "cltrace/passes/component_reads.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>

#include <vector>

#include "cltrace/passes/access_enumeration.h"

using namespace llvm;

namespace cltrace::passes {

namespace {

// Marks in `used` the components of a loaded vector that `v` passes on: lane j of `v` is
// component lanes[j] of the load (-1: none). An extractelement with a constant index uses one
// lane, a shufflevector passes lanes on to its own users, as does an insertelement with a
// constant index but the lane it replaces, and any other user uses all of them.
void markUsedComponents(const Value* v, ArrayRef<int> lanes, uint64_t& used, unsigned depth) {
  for (const Use& use : v->uses()) {
    const User* user = use.getUser();
    if (auto* extract = dyn_cast<ExtractElementInst>(user)) {
      auto* index = dyn_cast<ConstantInt>(extract->getIndexOperand());
      if (index && index->getZExtValue() < lanes.size()) {
        const int c = lanes[index->getZExtValue()];
        if (c >= 0) used |= uint64_t(1) << c;
        continue;
      }
    } else if (auto* shuffle = dyn_cast<ShuffleVectorInst>(user); shuffle && depth < 8) {
      const int width = static_cast<int>(lanes.size());
      SmallVector<int, 16> passed;
      for (int from : shuffle->getShuffleMask()) {
        const Value* source = from < 0 ? nullptr : from < width ? shuffle->getOperand(0) : shuffle->getOperand(1);
        passed.push_back(source == v ? lanes[from % width] : -1);
      }
      markUsedComponents(shuffle, passed, used, depth + 1);
      continue;
    } else if (auto* insert = dyn_cast<InsertElementInst>(user); insert && depth < 8 && use.getOperandNo() == 0) {
      auto* index = dyn_cast<ConstantInt>(insert->getOperand(2));
      if (index && index->getZExtValue() < lanes.size()) {
        SmallVector<int, 16> passed(lanes.begin(), lanes.end());
        passed[index->getZExtValue()] = -1;
        markUsedComponents(insert, passed, used, depth + 1);
        continue;
      }
    }
    for (int c : lanes)
      if (c >= 0) used |= uint64_t(1) << c;
  }
}

// Whether no component of vector load `load` reaches a use: it only feeds swizzles and inserts
// whose lanes from it are all replaced later (`v[i].xy = a; v[i].zw = b;`, or .x, .y, .z and .w
// each, once each load of v[i] takes the store before's value). InstCombine drops such a load's
// lanes, and the load.
bool noComponentUsed(const LoadInst& load) { return !load.use_empty() && usedComponents(load) == 0; }

}  // namespace

uint64_t usedComponents(const LoadInst& load) {
  auto* type = cast<FixedVectorType>(load.getType());
  if (type->getNumElements() > 64) return ~uint64_t(0);
  SmallVector<int, 16> lanes;
  for (unsigned c = 0; c < type->getNumElements(); ++c) lanes.push_back(static_cast<int>(c));
  uint64_t used = 0;
  markUsedComponents(&load, lanes, used, 0);
  return used;
}

PreservedAnalyses GatherComponentReadsPass::run(Function& f, FunctionAnalysisManager&) {
  bool changed = false;
  std::vector<LoadInst*> loads;
  for (BasicBlock& bb : f)
    for (Instruction& inst : bb) {
      if (auto* load = dyn_cast<LoadInst>(&inst); load && isa<FixedVectorType>(load->getType()))
        loads.push_back(load);
      auto* extract = dyn_cast<ExtractElementInst>(&inst);
      auto* index = extract ? dyn_cast<ConstantInt>(extract->getIndexOperand()) : nullptr;
      if (!index) continue;
      for (unsigned depth = 0; depth < 8; ++depth) {
        auto* shuffle = dyn_cast<ShuffleVectorInst>(extract->getVectorOperand());
        if (!shuffle || index->getZExtValue() >= shuffle->getShuffleMask().size()) break;
        const int from = shuffle->getMaskValue(static_cast<unsigned>(index->getZExtValue()));
        if (from < 0) break;  // an undefined lane: left as it is
        const unsigned width = cast<FixedVectorType>(shuffle->getOperand(0)->getType())->getNumElements();
        index = ConstantInt::get(index->getType(), static_cast<unsigned>(from) % width);
        extract->setOperand(0, shuffle->getOperand(static_cast<unsigned>(from) < width ? 0 : 1));
        extract->setOperand(1, index);
        changed = true;
      }
    }
  for (LoadInst* load : loads) {
    if (!load->isSimple() || !isRecordedSpace(load->getPointerAddressSpace())) continue;
    if (noComponentUsed(*load)) {  // DCE, next, drops it
      load->replaceAllUsesWith(PoisonValue::get(load->getType()));
      changed = true;
      continue;
    }
    const unsigned n = cast<FixedVectorType>(load->getType())->getNumElements();
    std::vector<ExtractElementInst*> extracts;
    for (User* user : load->users()) {
      auto* extract = dyn_cast<ExtractElementInst>(user);
      auto* index = extract ? dyn_cast<ConstantInt>(extract->getIndexOperand()) : nullptr;
      if (!index || index->getZExtValue() >= n) {
        extracts.clear();
        break;
      }
      extracts.push_back(extract);
    }
    Instruction* after = load;
    for (ExtractElementInst* extract : extracts) {
      if (extract->getParent() == load->getParent()) continue;  // already after it
      extract->moveAfter(after);
      after = extract;
      changed = true;
    }
  }
  return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
}

}  // namespace cltrace::passes
