// Block copies and fills (memcpy, memmove, memset) as the loads and stores a GPU compiler makes
// of them (part of prepare).
//
// A GPU compiler copies a small block (a memcpy, memmove or memset of a constant length under
// 128 bytes; NVPTX copies longer ones in a loop) with loads and stores as wide as the pointers'
// alignment allows, up to 8 bytes: `pd[i] = ps[i]` of a 16-byte struct of floats is four 4-byte
// loads and four 4-byte stores, each coalesced across the warp on its own, not one 16-byte
// access; a memcpy's pieces are each stored once loaded, as NVPTX lowers it (after its
// load-store vectorizer, which so never joins them). A copy of 1, 2, 4 or 8 bytes is one
// integer load and one store (LLVM's instcombine), each split by its own pointer's alignment;
// other lengths take the narrower alignment of the two for both. Blocks that touch no global
// or constant memory are left as they are; longer or variable ones stay one access; one of no
// bytes goes.
#pragma once

#include <llvm/IR/PassManager.h>

namespace cltrace::passes {

struct ExpandSmallMemoryBlocksPass : llvm::PassInfoMixin<ExpandSmallMemoryBlocksPass> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

// LLVM's load-store vectorizer, but for the pieces of block copies and fills that
// ExpandSmallMemoryBlocksPass made two or more of (`P p = in[i]; p.x += 1; out[i] = p;` of an
// aligned(16) struct: the 12 bytes SROA leaves a memcpy for, three 4-byte pieces), which it
// leaves apart: NVPTX lowers such a memcpy after its vectorizer, so they are never joined with
// each other or with the field accesses beside them (four 4-byte loads, not one of 16 bytes). A
// copy of one piece (a 4-byte memcpy, which instcombine makes a load and a store early) is
// joined as any access. Pieces are known by an access group that the expansion gives them
// (SROA keeps it when it splits a piece further), dropped here.
struct VectorizeApartFromCopyPiecesPass : llvm::PassInfoMixin<VectorizeApartFromCopyPiecesPass> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

// Removes the module's note of that access group, once the vectorizer has run.
void forgetCopyPieces(llvm::Module& m);

// A store of an undefined value (the padding of a private struct copied to global memory, once
// the struct's fields are registers) is no store to a GPU compiler (instcombine drops it).
struct DropUndefinedStoresPass : llvm::PassInfoMixin<DropUndefinedStoresPass> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

// A load or store less aligned than its size (a field of a packed struct, `in[i].f` at byte 1)
// in pieces as wide as its alignment, as NVPTX, which has no misaligned access, makes it: a
// float at alignment 1 is four 1-byte loads, at alignment 2 two of 2 bytes; a vector's pieces
// are at most an element wide. Accesses of a size that is not a power of two, volatile ones
// and atomics stay as they are.
struct SplitMisalignedAccessesPass : llvm::PassInfoMixin<SplitMisalignedAccessesPass> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

// A load of a 3-component vector (a swizzle of a float3 or uchar3 in global memory,
// `out[i] = in[i].zyx`), a size no GPU load has, as NVPTX's type legalization makes it:
// components of 4 bytes or more are loads of each component used (a float3: up to three of 4
// bytes), narrower ones one load of the next power of two bytes, which the alignment allows
// and the component padding holds (a uchar3: 4 bytes; a short3: 8).
struct SplitThreeComponentLoadsPass : llvm::PassInfoMixin<SplitThreeComponentLoadsPass> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

}  // namespace cltrace::passes
