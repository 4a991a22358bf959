// Component reads of a vector load gathered beside it (part of prepare), where LLVM's
// VectorCombine, run next, looks for them to make a vector load whose components are only
// extracted, in its own block, the loads of the components used:
// - a component taken from a swizzle is taken from the swizzled vector itself (`v.xz.y` is
//   `v.z`; clang reads a float3 as a float4 and swizzles it to three components), as InstCombine
//   folds it;
// - the extracts of a load read only through constant-index extracts move up to just after it
//   (they read no memory), as a GPU compiler's LICM and sinking leave them (`float4 p = pos[i];`
//   used in a loop: .xyz read as 8 bytes and 4, not 16);
// - a load none of whose components reaches a use (`v[i].xy = a; v[i].zw = b;`: the second
//   swizzle replaces what the first kept of the load) is dropped, as InstCombine drops it.
// A vector read otherwise (a swizzle stored as a vector, `out[i] = in[i].xy`, or components
// extracted after a write) stays the whole vector's load, as clang -O2 for NVPTX keeps it.
#pragma once

#include <llvm/IR/Instructions.h>
#include <llvm/IR/PassManager.h>

namespace cltrace::passes {

// The components of vector load `load` whose values reach a use, a bit each (component k: bit
// k): through constant-index extracts, swizzles and inserts; any other use uses them all (all
// bits set for vectors of more than 64 components).
uint64_t usedComponents(const llvm::LoadInst& load);

struct GatherComponentReadsPass : llvm::PassInfoMixin<GatherComponentReadsPass> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

}  // namespace cltrace::passes
