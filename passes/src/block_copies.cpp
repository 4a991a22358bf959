#include "cltrace/passes/block_copies.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "cltrace/passes/access_enumeration.h"

using namespace llvm;

namespace cltrace::passes {

namespace {

constexpr uint64_t kCopiedInALoopFrom = 128;
constexpr uint64_t kWidestPiece = 8;

// The pieces of a block of `length` bytes whose ends are aligned to `align`: (offset, bytes).
std::vector<std::pair<uint64_t, uint64_t>> pieces(uint64_t length, uint64_t align) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  uint64_t width = std::min(align, kWidestPiece);
  for (uint64_t offset = 0; offset < length; offset += width) {
    while (width > length - offset) width /= 2;
    out.emplace_back(offset, width);
  }
  return out;
}

Value* pieceAddress(IRBuilder<>& b, Value* raw, uint64_t offset, uint64_t bytes) {
  const unsigned space = raw->getType()->getPointerAddressSpace();
  Value* at = b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), b.CreatePointerCast(raw, b.getInt8PtrTy(space)), offset);
  return b.CreatePointerCast(at, b.getIntNTy(unsigned(bytes * 8))->getPointerTo(space));
}

bool expand(MemIntrinsic& mi) {
  auto* length = dyn_cast<ConstantInt>(mi.getLength());
  if (!length || length->getZExtValue() >= kCopiedInALoopFrom) return false;
  const uint64_t bytes = length->getZExtValue();
  IRBuilder<> b(&mi);
  const bool isVolatile = mi.isVolatile();
  if (auto* mt = dyn_cast<MemTransferInst>(&mi)) {
    if (!isRecordedSpace(mt->getSourceAddressSpace()) && !isRecordedSpace(mt->getDestAddressSpace())) return false;
    const Align source = mt->getSourceAlign().valueOrOne(), dest = mt->getDestAlign().valueOrOne();
    const bool oneWord = bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8;
    const Align loadAlign = oneWord ? source : std::min(source, dest);
    const Align storeAlign = oneWord ? dest : std::min(source, dest);
    const auto loads = pieces(bytes, loadAlign.value()), stores = pieces(bytes, storeAlign.value());
    // Every piece is read before any is written, which a memmove of overlapping blocks needs.
    std::vector<Value*> values;
    for (auto [offset, width] : loads)
      values.push_back(b.CreateAlignedLoad(b.getIntNTy(unsigned(width * 8)),
                                           pieceAddress(b, mt->getRawSource(), offset, width),
                                           commonAlignment(loadAlign, offset), isVolatile));
    if (loads != stores) {
      // One word read and written in pieces of different widths: put it together and take
      // the stores' pieces from it (little-endian).
      IntegerType* word = b.getIntNTy(unsigned(bytes * 8));
      Value* whole = ConstantInt::get(word, 0);
      for (size_t i = 0; i < loads.size(); ++i)
        whole = b.CreateOr(whole, b.CreateShl(b.CreateZExt(values[i], word), loads[i].first * 8));
      values.clear();
      for (auto [offset, width] : stores)
        values.push_back(b.CreateTrunc(b.CreateLShr(whole, offset * 8), b.getIntNTy(unsigned(width * 8))));
    }
    size_t i = 0;
    for (auto [offset, width] : stores)
      b.CreateAlignedStore(values[i++], pieceAddress(b, mt->getRawDest(), offset, width),
                           commonAlignment(storeAlign, offset), isVolatile);
  } else if (auto* ms = dyn_cast<MemSetInst>(&mi)) {
    if (!isRecordedSpace(ms->getDestAddressSpace())) return false;
    const Align align = ms->getDestAlign().valueOrOne();
    for (auto [offset, width] : pieces(bytes, align.value())) {
      IntegerType* type = b.getIntNTy(unsigned(width * 8));
      // The byte in every byte of the piece: byte * 0x0101...01.
      Value* value = b.CreateMul(b.CreateZExt(ms->getValue(), type),
                                 ConstantInt::get(type, APInt::getSplat(unsigned(width * 8), APInt(8, 1))));
      b.CreateAlignedStore(value, pieceAddress(b, ms->getRawDest(), offset, width), commonAlignment(align, offset),
                           isVolatile);
    }
  } else {
    return false;
  }
  mi.eraseFromParent();
  return true;
}

}  // namespace

PreservedAnalyses ExpandSmallMemoryBlocksPass::run(Function& f, FunctionAnalysisManager&) {
  std::vector<MemIntrinsic*> blocks;
  for (BasicBlock& bb : f)
    for (Instruction& inst : bb)
      if (auto* mi = dyn_cast<MemIntrinsic>(&inst)) blocks.push_back(mi);
  bool changed = false;
  for (MemIntrinsic* mi : blocks) changed |= expand(*mi);
  if (!changed) return PreservedAnalyses::all();
  PreservedAnalyses kept;
  kept.preserveSet<CFGAnalyses>();
  return kept;
}

PreservedAnalyses DropUndefinedStoresPass::run(Function& f, FunctionAnalysisManager&) {
  bool changed = false;
  for (BasicBlock& bb : f)
    for (Instruction& inst : make_early_inc_range(bb))
      if (auto* store = dyn_cast<StoreInst>(&inst); store && store->isSimple() && isa<UndefValue>(store->getValueOperand())) {
        store->eraseFromParent();
        changed = true;
      }
  if (!changed) return PreservedAnalyses::all();
  PreservedAnalyses kept;
  kept.preserveSet<CFGAnalyses>();
  return kept;
}

}  // namespace cltrace::passes
