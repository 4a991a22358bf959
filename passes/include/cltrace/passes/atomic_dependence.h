#pragma once
// Global atomics whose result steers the kernel. What such an atomic returns depends on how the
// device interleaves the work-items of different workgroups: a compare-and-swap loop repeats as
// often as other work-items got in between, and the slot atomic_inc hands out differs from run
// to run. Where the result decides a branch, two runs of the kernel (cltrace's count and trace
// runs) can take different paths; where it gives an address, the trace differs between runs.
// Found statically, by following the result through values and phis and through memory: a
// store of it taints the loads of the same object (a private variable, a __local variable or
// argument, a __global buffer argument), so that a workgroup's base slot taken by one atomic_add
// and shared through __local memory counts. Stores through a pointer whose object is not known
// (chosen by a phi or a select) are not followed.

#include <llvm/IR/Instruction.h>
#include <llvm/IR/Value.h>

#include <utility>
#include <vector>

namespace cltrace::passes {

struct AtomicSteering {
  const llvm::Instruction* atomic;  // one of the atomics asked about
  const llvm::Instruction* branch;  // the first branch its result decides, or null
  const llvm::Instruction* access;  // the first access whose address or size it gives, or null
};

// For each of `atomics` (global atomic calls or instructions, in the order given) whose result
// reaches a branch's condition or one of `accesses` (an instruction and the values that give its
// address or size), what it reaches first in program order. Atomics whose result steers nothing
// are left out.
std::vector<AtomicSteering> atomicSteering(
    const std::vector<const llvm::Instruction*>& atomics,
    const std::vector<std::pair<const llvm::Instruction*, std::vector<const llvm::Value*>>>& accesses);

}  // namespace cltrace::passes
