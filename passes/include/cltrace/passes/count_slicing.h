// The count run only has to reproduce a work-item's control flow and access addresses: the
// values it stores to global memory matter to nobody (the buffers are restored before the
// trace run). When nothing the kernel reads from global memory can steer its branches or its
// addresses, its global stores can be dropped from the count kernel, and the loads that only
// fed them go too: the count kernel keeps the index arithmetic, the loop control and the bound
// checks. Kernels that branch or index on loaded data keep every access.
#pragma once

#include <llvm/IR/Function.h>
#include <llvm/IR/Instructions.h>

#include <optional>
#include <vector>

namespace cltrace::passes {

// The stores to global memory that `kernel` (before instrumentation) can do without in its count
// run: every plain global store when
//  - no value derived from a global load (or a call that reads memory) reaches a branch or
//    switch condition or a pointer, also through private or local memory (a tainted value
//    stored there taints every load from that address space);
//  - the kernel writes memory only by plain stores and the barrier and fence builtins (no
//    atomics, no memcpy/memset, no vstore, no unknown calls, no store through a private pointer
//    that may point into a buffer: `*(float*)(ulong)&a[x]`, which PoCL runs as a global store);
// otherwise nothing (the count run then performs every access, as the trace run does). With
// the stores gone the count run writes no buffer of the program's.
std::optional<std::vector<llvm::StoreInst*>> countRunRemovableStores(llvm::Function& kernel);

// Erases `stores` and then every instruction of their function that reaches no side effect or
// branch (the loads and arithmetic that only fed them, phis feeding each other included): run
// it when nothing more is to be added to the function.
void eraseStoresAndDeadOperands(const std::vector<llvm::StoreInst*>& stores);

}  // namespace cltrace::passes
