#include "cltrace/passes/component_reads.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>

#include <vector>

#include "cltrace/passes/access_enumeration.h"

using namespace llvm;

namespace cltrace::passes {

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
