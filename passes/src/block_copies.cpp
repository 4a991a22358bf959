#include "cltrace/passes/block_copies.h"

#include <llvm/IR/DataLayout.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Vectorize/LoadStoreVectorizer.h>

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

using Pieces = std::vector<std::pair<uint64_t, uint64_t>>;  // (offset, bytes)

// The pieces of a block of `length` bytes whose ends are aligned to `align`.
Pieces pieces(uint64_t length, uint64_t align) {
  Pieces out;
  uint64_t width = std::min(align, kWidestPiece);
  for (uint64_t offset = 0; offset < length; offset += width) {
    while (width > length - offset) width /= 2;
    out.emplace_back(offset, width);
  }
  return out;
}

// The access group that marks the pieces of copies and fills made of two or more
// (VectorizeApartFromCopyPiecesPass), named in the module so that a later pass finds it; null
// when `create` is false and none was made.
constexpr const char* kCopyPiecesName = "cltrace.copy.pieces";
MDNode* copyPieceGroup(Module& m, bool create) {
  NamedMDNode* named = m.getNamedMetadata(kCopyPiecesName);
  if (named && named->getNumOperands() > 0) return named->getOperand(0);
  if (!create) return nullptr;
  MDNode* group = MDNode::getDistinct(m.getContext(), {});
  m.getOrInsertNamedMetadata(kCopyPiecesName)->addOperand(group);
  return group;
}

// Marks the global or constant memory accesses among `pieces` when there are two or more.
void markPieces(const std::vector<Instruction*>& pieces) {
  if (pieces.size() < 2) return;
  MDNode* group = copyPieceGroup(*pieces.front()->getModule(), true);
  for (Instruction* piece : pieces)
    if (isRecordedSpace(getLoadStoreAddressSpace(piece))) piece->setMetadata(LLVMContext::MD_access_group, group);
}

Value* pieceAddress(IRBuilder<>& b, Value* raw, uint64_t offset, uint64_t bytes) {
  const unsigned space = raw->getType()->getPointerAddressSpace();
  Value* at = b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), b.CreatePointerCast(raw, b.getInt8PtrTy(space)), offset);
  return b.CreatePointerCast(at, b.getIntNTy(unsigned(bytes * 8))->getPointerTo(space));
}

// A piece of the block at `raw` (aligned to `align`), loaded as an integer of its width.
LoadInst* loadPiece(IRBuilder<>& b, Value* raw, std::pair<uint64_t, uint64_t> piece, Align align, bool isVolatile) {
  const auto [offset, width] = piece;
  return b.CreateAlignedLoad(b.getIntNTy(unsigned(width * 8)), pieceAddress(b, raw, offset, width),
                             commonAlignment(align, offset), isVolatile);
}

StoreInst* storePiece(IRBuilder<>& b, Value* value, Value* raw, std::pair<uint64_t, uint64_t> piece, Align align,
                      bool isVolatile) {
  const auto [offset, width] = piece;
  return b.CreateAlignedStore(value, pieceAddress(b, raw, offset, width), commonAlignment(align, offset), isVolatile);
}

// One word of type `word` put together from the values of `pieces` (little-endian).
Value* joinPieces(IRBuilder<>& b, IntegerType* word, const std::vector<Value*>& values, const Pieces& pieces) {
  Value* whole = ConstantInt::get(word, 0);
  for (size_t i = 0; i < pieces.size(); ++i)
    whole = b.CreateOr(whole, b.CreateShl(b.CreateZExt(values[i], word), pieces[i].first * 8));
  return whole;
}

// The values of `pieces` taken from word `whole` (little-endian).
std::vector<Value*> splitWord(IRBuilder<>& b, Value* whole, const Pieces& pieces) {
  std::vector<Value*> values;
  for (auto [offset, width] : pieces)
    values.push_back(b.CreateTrunc(b.CreateLShr(whole, offset * 8), b.getIntNTy(unsigned(width * 8))));
  return values;
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
    std::vector<Instruction*> read, written;  // the pieces made
    if (isa<MemCpyInst>(mt) && loads == stores) {
      // Each piece stored as it is read, as NVPTX lowers the copy (after its load-store
      // vectorizer): `out[i] = in[i]` of a 16-byte struct stays two 8-byte loads and stores.
      // The blocks of a memcpy do not overlap.
      for (const auto& piece : loads) {
        read.push_back(loadPiece(b, mt->getRawSource(), piece, loadAlign, isVolatile));
        written.push_back(storePiece(b, read.back(), mt->getRawDest(), piece, storeAlign, isVolatile));
      }
    } else {
      // Every piece is read before any is written, which a memmove of overlapping blocks needs.
      std::vector<Value*> values;
      for (const auto& piece : loads) {
        read.push_back(loadPiece(b, mt->getRawSource(), piece, loadAlign, isVolatile));
        values.push_back(read.back());
      }
      // One word read and written in pieces of different widths: put it together and take the
      // stores' pieces from it.
      if (loads != stores)
        values = splitWord(b, joinPieces(b, b.getIntNTy(unsigned(bytes * 8)), values, loads), stores);
      for (size_t i = 0; i < stores.size(); ++i)
        written.push_back(storePiece(b, values[i], mt->getRawDest(), stores[i], storeAlign, isVolatile));
    }
    markPieces(read);
    markPieces(written);
  } else if (auto* ms = dyn_cast<MemSetInst>(&mi)) {
    if (!isRecordedSpace(ms->getDestAddressSpace())) return false;
    const Align align = ms->getDestAlign().valueOrOne();
    std::vector<Instruction*> written;
    for (auto [offset, width] : pieces(bytes, align.value())) {
      IntegerType* type = b.getIntNTy(unsigned(width * 8));
      // The byte in every byte of the piece: byte * 0x0101...01.
      Value* value = b.CreateMul(b.CreateZExt(ms->getValue(), type),
                                 ConstantInt::get(type, APInt::getSplat(unsigned(width * 8), APInt(8, 1))));
      written.push_back(b.CreateAlignedStore(value, pieceAddress(b, ms->getRawDest(), offset, width),
                                             commonAlignment(align, offset), isVolatile));
    }
    markPieces(written);
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
  const Pieces parts = pieces(dl.getTypeStoreSize(type), width);  // all `width` wide (at most 8)
  IRBuilder<> b(&inst);
  IntegerType* word = b.getIntNTy(unsigned(dl.getTypeStoreSize(type) * 8));
  if (load) {
    std::vector<Value*> values;
    for (const auto& part : parts) values.push_back(loadPiece(b, pointer, part, Align(width), false));
    Value* whole = joinPieces(b, word, values, parts);
    load->replaceAllUsesWith(type->isPointerTy() ? b.CreateIntToPtr(whole, type) : b.CreateBitCast(whole, type));
  } else {
    Value* value = store->getValueOperand();
    Value* whole = type->isPointerTy() ? b.CreatePtrToInt(value, word) : b.CreateBitCast(value, word);
    const std::vector<Value*> values = splitWord(b, whole, parts);
    for (size_t i = 0; i < parts.size(); ++i) storePiece(b, values[i], pointer, parts[i], Align(width), false);
  }
  inst.eraseFromParent();
  return true;
}

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
    Value* components = b.CreatePointerCast(pointer, element->getPointerTo(load.getPointerAddressSpace()));
    for (unsigned k = 0; k < 3; ++k) {
      if ((used >> k & 1) == 0) continue;
      Value* at = b.CreateConstInBoundsGEP1_64(element, components, k);
      value = b.CreateInsertElement(value, b.CreateAlignedLoad(element, at, commonAlignment(align, k * bytes)), k);
    }
  } else {
    const uint64_t wide = 4 * bytes;  // the padded vector: 4 components
    if (align.value() < wide) return false;
    Value* whole = loadPiece(b, pointer, {0, wide}, align, false);
    value = b.CreateShuffleVector(b.CreateBitCast(whole, FixedVectorType::get(element, 4)), ArrayRef<int>{0, 1, 2});
  }
  load.replaceAllUsesWith(value);
  load.eraseFromParent();
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
  return keptWhenBlocksStay(changed);
}

// Sets or clears a load's or store's volatile flag.
void setVolatile(Instruction& access, bool isVolatile) {
  if (auto* load = dyn_cast<LoadInst>(&access))
    load->setVolatile(isVolatile);
  else
    cast<StoreInst>(access).setVolatile(isVolatile);
}

}  // namespace

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

PreservedAnalyses VectorizeApartFromCopyPiecesPass::run(Function& f, FunctionAnalysisManager& am) {
  std::vector<Instruction*> pieces, hidden;  // hidden: made volatile here, which the vectorizer leaves
  if (MDNode* group = copyPieceGroup(*f.getParent(), false))
    for (BasicBlock& bb : f)
      for (Instruction& inst : bb)
        if ((isa<LoadInst>(inst) || isa<StoreInst>(inst)) && inst.getMetadata(LLVMContext::MD_access_group) == group) {
          pieces.push_back(&inst);
          if (inst.isVolatile()) continue;  // a volatile memcpy's
          setVolatile(inst, true);
          hidden.push_back(&inst);
        }
  if (!hidden.empty()) am.invalidate(f, PreservedAnalyses::none());
  PreservedAnalyses kept = LoadStoreVectorizerPass().run(f, am);
  for (Instruction* piece : hidden) setVolatile(*piece, false);
  for (Instruction* piece : pieces) piece->setMetadata(LLVMContext::MD_access_group, nullptr);
  if (pieces.empty()) return kept;
  kept = PreservedAnalyses::none();
  kept.preserveSet<CFGAnalyses>();
  return kept;
}

void forgetCopyPieces(Module& m) {
  if (NamedMDNode* named = m.getNamedMetadata(kCopyPiecesName)) m.eraseNamedMetadata(named);
}

PreservedAnalyses DropUndefinedStoresPass::run(Function& f, FunctionAnalysisManager&) {
  bool changed = false;
  for (BasicBlock& bb : f)
    for (Instruction& inst : make_early_inc_range(bb))
      if (auto* store = dyn_cast<StoreInst>(&inst); store && store->isSimple() && isa<UndefValue>(store->getValueOperand())) {
        store->eraseFromParent();
        changed = true;
      }
  return keptWhenBlocksStay(changed);
}

}  // namespace cltrace::passes
