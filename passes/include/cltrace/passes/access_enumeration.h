// What both cltrace passes instrument, found by one shared routine so the static
// instruction ids of the count and trace passes agree.
#pragma once

#include <llvm/ADT/SmallVector.h>
#include <llvm/IR/Function.h>
#include <llvm/ADT/DenseMap.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Instruction.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/PassManager.h>
#include <llvm/IR/Value.h>

#include <string>
#include <vector>

#include "cltrace/record.h"

namespace llvm {
class DominatorTree;
class Loop;
class LoopInfo;
}  // namespace llvm

namespace cltrace::passes {

// SPIR address spaces as clang-15 emits them for spir64.
inline constexpr unsigned kGlobalAddressSpace = 1;
inline constexpr unsigned kConstantAddressSpace = 2;
inline constexpr unsigned kLocalAddressSpace = 3;
// OpenCL C 2.0's generic address space: pointers that may point anywhere.
inline constexpr unsigned kGenericAddressSpace = 4;

// The address spaces whose accesses are recorded: __global and __constant memory.
inline constexpr bool isRecordedSpace(unsigned space) {
  return space == kGlobalAddressSpace || space == kConstantAddressSpace;
}

// One recorded event. A memcpy between two global buffers yields two (load, then store).
struct Access {
  uint32_t id = 0;                       // program order within the kernel
  llvm::Instruction* inst = nullptr;     // records are written just before it
  AccessKind kind = AccessKind::Load;
  llvm::Value* pointer = nullptr;        // null for barriers and fences
  uint64_t staticSize = 0;               // bytes when known statically
  llvm::Value* dynamicSize = nullptr;    // memcpy/memset length when not constant
  llvm::Value* fenceFlags = nullptr;     // barrier/fence flags argument (i32), when not constant
  uint8_t flags = 0;                     // constant fence flags
  llvm::SmallVector<llvm::Loop*, 4> loops;  // enclosing loops, outermost first
};

bool isKernel(const llvm::Function& f);
// The OpenCL object a pointer of type `t` is a handle of ("image2d_ro_t", "sampler_t": clang's
// opaque opencl.* structs, typed pointers), or "" for any other type.
llvm::StringRef openclObjectOf(const llvm::Type* t);
// The function name inside an Itanium-mangled name ("_Z10vload_halfmPU3AS1KDh" ->
// "vload_half"), or "" for a name that is not mangled that way.
llvm::StringRef demangledStem(llvm::StringRef mangled);
// Whether `name` is an OpenCL atomic builtin (atomic_*, atom_*, C11's atomic_fetch_add, ...).
bool isAtomicBuiltin(llvm::StringRef name);
// What a conditional branch or a switch tests; null for any other terminator.
const llvm::Value* branchCondition(const llvm::Instruction* terminator);
// Whether `block` runs on every iteration of `loop` that goes on to the next (it dominates the
// loop's latches).
bool runsEveryIteration(const llvm::Loop& loop, const llvm::BasicBlock* block, const llvm::DominatorTree& dt);

// What a pass that changes instructions but never blocks keeps: every analysis when it changed
// nothing, else those of the control flow graph.
inline llvm::PreservedAnalyses keptWhenBlocksStay(bool changed) {
  if (!changed) return llvm::PreservedAnalyses::all();
  llvm::PreservedAnalyses kept;
  kept.preserveSet<llvm::CFGAnalyses>();
  return kept;
}
std::vector<llvm::Function*> kernelsOf(llvm::Module& m);

// A program-scope variable `pointer` may point into (the constant initialiser clang emits for a
// private array, an OpenCL 2.0 `global` variable; a select or phi may choose one), or null.
// Such data lives in no buffer the host can see: reads of it alone are not recorded, writes to
// it are refused, and so are reads that may go to it or to a buffer (instrument.cpp).
const llvm::GlobalVariable* programScopeVariable(const llvm::Value* pointer);
// Whether an access through `pointer` may reach __global memory: a __global or generic pointer,
// or a private one that is not known to point into private variables (a global address cast
// to an integer and back, `*(float*)(ulong)&a[x]`, which PoCL runs as the global access it is).
bool mayReachGlobal(const llvm::Value* pointer);
// Whether every object `pointer` may point into is a program-scope variable.
bool onlyProgramScopeData(const llvm::Value* pointer);

// The barrier and fence builtins (barrier, work_group_barrier, mem_fence, read_mem_fence,
// write_mem_fence) by mangled name: recorded as Barrier or Fence with `flags`, and known to
// write no memory of their own.
struct FenceBuiltin {
  AccessKind kind;
  uint8_t flags;  // kFenceRead / kFenceWrite beside those the call's argument gives
};
const FenceBuiltin* fenceBuiltin(llvm::StringRef mangledName);

// Which loop each block runs in, as SIMT lanes see it. LoopInfo leaves the way out of a loop by
// `break` or `return` (up to where the ways meet again) outside the loop, but the lanes that
// take it run it in the iteration they leave at: such blocks belong to the loop they leave, and
// so does a loop on that way (it nests in the loop left, for its counters and the loop table).
struct LoopContext {
  llvm::DenseMap<const llvm::BasicBlock*, llvm::Loop*> breakPaths;  // block outside the loop -> loop it leaves
  llvm::DenseMap<const llvm::Loop*, llvm::Loop*> adoptedParents;    // loop on such a way -> loop it leaves
  // The kernel's blocks in program order: layout order, but a block where the ways out of a loop
  // meet that is laid out among the loop's blocks (`for (;;) { if (c) { a[i] = 1; break; } ... }`)
  // comes after the loop's, as the lanes run it once every one has left. Empty: layout order.
  std::vector<llvm::BasicBlock*> programOrder;
  // The loop enclosing `l` for the SIMT lanes (its adopted parent, else LoopInfo's), or null.
  llvm::Loop* parentOf(const llvm::Loop* l) const {
    auto it = adoptedParents.find(l);
    return it != adoptedParents.end() ? it->second : l->getParentLoop();
  }
  // The innermost loop `block` runs in, or null.
  llvm::Loop* loopFor(const llvm::BasicBlock* block, const llvm::LoopInfo& loops) const {
    auto it = breakPaths.find(block);
    return it != breakPaths.end() ? it->second : loops.getLoopFor(block);
  }
};
// `loops` and `dominators` describe `kernel` as it is now.
LoopContext loopContext(llvm::Function& kernel, llvm::LoopInfo& loops, const llvm::DominatorTree& dominators);

// Enumerates the accesses of `kernel` in program order (`context.programOrder`, then
// instruction order); each access's `loops` follow `context`. Ids number the accesses 0, 1, ...
// in that order. `loops` must describe `kernel` as it is now.
std::vector<Access> enumerateAccesses(llvm::Function& kernel, llvm::LoopInfo& loops, const LoopContext& context);

// Where an instruction comes from in the program's source, from its debug location: "line 12:17"
// in the program itself, "NAME line 3:5" in a header; "" when the module has no line tables.
// (cltrace compiles programs with them; the instrumented kernels are stripped of them.)
std::string sourceLocation(const llvm::Instruction& inst);
// A short readable description of an instruction, for manifests and diagnostics: its source
// location when known, then the instruction as LLVM IR ("line 12:17: %5 = load float, ...").
std::string describe(const llvm::Instruction& inst);

}  // namespace cltrace::passes
