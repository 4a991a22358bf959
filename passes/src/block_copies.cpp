#include "cltrace/passes/block_copies.h"

#include <llvm/IR/DataLayout.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "cltrace/passes/access_enumeration.h"
#include "cltrace/passes/component_reads.h"

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
    if (isa<MemCpyInst>(mt) && loads == stores) {
      // Each piece stored as it is read, as NVPTX lowers the copy (after its load-store
      // vectorizer): the vectorizer run in prepare does not join the loads of a 16-byte struct
      // into one across the stores (which may alias them), `out[i] = in[i]` stays two 8-byte
      // loads and stores. The blocks of a memcpy do not overlap.
      for (auto [offset, width] : loads) {
        Value* v = b.CreateAlignedLoad(b.getIntNTy(unsigned(width * 8)),
                                       pieceAddress(b, mt->getRawSource(), offset, width),
                                       commonAlignment(loadAlign, offset), isVolatile);
        b.CreateAlignedStore(v, pieceAddress(b, mt->getRawDest(), offset, width), commonAlignment(storeAlign, offset),
                             isVolatile);
      }
      mi.eraseFromParent();
      return true;
    }
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

// The width of the pieces NVPTX splits an access of `type` at `align` into, or 0 when it needs
// none (or is left whole: sizes not a power of two, types not made of whole bytes, pointers'
// vectors).
uint64_t misalignedPieceWidth(Type* type, Align align, const DataLayout& dl) {
  if (type->isPtrOrPtrVectorTy() && type->isVectorTy()) return 0;
  const uint64_t size = dl.getTypeStoreSize(type);
  if (dl.getTypeSizeInBits(type) != size * 8 || !isPowerOf2_64(size) || size > 16) return 0;
  if (align.value() >= size) return 0;
  uint64_t width = align.value();
  if (auto* vector = dyn_cast<FixedVectorType>(type))
    width = std::min(width, dl.getTypeStoreSize(vector->getElementType()).getFixedSize());
  return width;
}

bool splitMisaligned(Instruction& inst, const DataLayout& dl) {
  auto* load = dyn_cast<LoadInst>(&inst);
  auto* store = dyn_cast<StoreInst>(&inst);
  if (!(load && load->isSimple()) && !(store && store->isSimple())) return false;
  Value* pointer = getLoadStorePointerOperand(&inst);
  if (!isRecordedSpace(pointer->getType()->getPointerAddressSpace())) return false;
  Type* type = load ? load->getType() : store->getValueOperand()->getType();
  const uint64_t width = misalignedPieceWidth(type, getLoadStoreAlignment(&inst), dl);
  if (width == 0) return false;
  const uint64_t size = dl.getTypeStoreSize(type);
  IRBuilder<> b(&inst);
  IntegerType* word = b.getIntNTy(unsigned(size * 8));
  IntegerType* piece = b.getIntNTy(unsigned(width * 8));
  if (load) {  // the pieces put together, little-endian
    Value* whole = ConstantInt::get(word, 0);
    for (uint64_t offset = 0; offset < size; offset += width) {
      Value* part = b.CreateAlignedLoad(piece, pieceAddress(b, pointer, offset, width), Align(width));
      whole = b.CreateOr(whole, b.CreateShl(b.CreateZExt(part, word), offset * 8));
    }
    load->replaceAllUsesWith(type->isPointerTy() ? b.CreateIntToPtr(whole, type) : b.CreateBitCast(whole, type));
  } else {
    Value* value = store->getValueOperand();
    Value* whole = type->isPointerTy() ? b.CreatePtrToInt(value, word) : b.CreateBitCast(value, word);
    for (uint64_t offset = 0; offset < size; offset += width)
      b.CreateAlignedStore(b.CreateTrunc(b.CreateLShr(whole, offset * 8), piece),
                           pieceAddress(b, pointer, offset, width), Align(width));
  }
  inst.eraseFromParent();
  return true;
}

// Applies `change` to each instruction of `f` that is a `T`, all found before any changes (a
// change may erase it); what changes keeps the blocks as they are.
template <typename T, typename Change>
PreservedAnalyses changeEach(Function& f, Change change) {
  std::vector<T*> found;
  for (BasicBlock& bb : f)
    for (Instruction& inst : bb)
      if (auto* t = dyn_cast<T>(&inst)) found.push_back(t);
  bool changed = false;
  for (T* t : found) changed |= change(*t);
  if (!changed) return PreservedAnalyses::all();
  PreservedAnalyses kept;
  kept.preserveSet<CFGAnalyses>();
  return kept;
}

}  // namespace

// `load` of a 3-component vector as NVPTX loads it (SplitThreeComponentLoadsPass).
bool splitThreeComponents(LoadInst& load, const DataLayout& dl) {
  auto* type = dyn_cast<FixedVectorType>(load.getType());
  if (!type || type->getNumElements() != 3 || !load.isSimple() || !isRecordedSpace(load.getPointerAddressSpace()))
    return false;
  Type* element = type->getElementType();
  const uint64_t bytes = dl.getTypeStoreSize(element);
  if (element->isPointerTy() || dl.getTypeSizeInBits(element) != bytes * 8) return false;
  const Align align = load.getAlign();
  IRBuilder<> b(&load);
  Value* pointer = load.getPointerOperand();
  Value* value = PoisonValue::get(type);
  if (bytes >= 4) {
    const uint64_t used = usedComponents(load);
    for (unsigned k = 0; k < 3; ++k) {
      if ((used >> k & 1) == 0) continue;
      Value* at = b.CreateConstInBoundsGEP1_64(element, b.CreatePointerCast(pointer, element->getPointerTo(
                                                             pointer->getType()->getPointerAddressSpace())), k);
      value = b.CreateInsertElement(value, b.CreateAlignedLoad(element, at, commonAlignment(align, k * bytes)), k);
    }
  } else {
    const uint64_t wide = 4 * bytes;  // the padded vector: 4 components
    if (align.value() < wide) return false;
    auto* four = FixedVectorType::get(element, 4);
    Value* whole = b.CreateAlignedLoad(b.getIntNTy(unsigned(wide * 8)), pieceAddress(b, pointer, 0, wide), align);
    value = b.CreateShuffleVector(b.CreateBitCast(whole, four), ArrayRef<int>{0, 1, 2});
  }
  load.replaceAllUsesWith(value);
  load.eraseFromParent();
  return true;
}

PreservedAnalyses SplitThreeComponentLoadsPass::run(Function& f, FunctionAnalysisManager&) {
  const DataLayout& dl = f.getParent()->getDataLayout();
  return changeEach<LoadInst>(f, [&](LoadInst& load) { return splitThreeComponents(load, dl); });
}

PreservedAnalyses SplitMisalignedAccessesPass::run(Function& f, FunctionAnalysisManager&) {
  const DataLayout& dl = f.getParent()->getDataLayout();
  return changeEach<Instruction>(f, [&](Instruction& inst) { return splitMisaligned(inst, dl); });
}

PreservedAnalyses ExpandSmallMemoryBlocksPass::run(Function& f, FunctionAnalysisManager&) {
  return changeEach<MemIntrinsic>(f, expand);
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
