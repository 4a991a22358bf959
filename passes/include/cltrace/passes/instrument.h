// The cltrace passes: prepare (inline helpers, SROA), count and trace.
// Each is usable as a new-pass-manager pass (see plugin.cpp) or through the plain functions.
#pragma once

#include <llvm/IR/PassManager.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "cltrace/loop_nest.h"
#include "cltrace/packed_record.h"
#include "cltrace/record.h"

namespace cltrace::passes {

enum class Mode { Count, Trace };

// Names of the parameters the passes append, in order. The count pass counts packed record
// units (packed_record.h) per work-item; the trace pass writes packed records.
inline constexpr const char* kCountsParam = "cltrace_counts";    // count: ulong*
// count: ulong*: buffer bytes per argument, the launch tag, then a word a work-item sets to 1 when
// it accesses memory outside a buffer (at once, for the host to see while the run lasts), then
// kBoundsScratchBytes from word boundsScratchWord(): where a count kernel that waits for its
// workgroup sends an access outside its buffer instead of branching around it (instrument.cpp).
inline constexpr const char* kBoundsParam = "cltrace_bounds";
inline constexpr uint64_t kBoundsScratchBytes = 128;  // the widest OpenCL type (double16, long16)
// 128-byte aligned within the buffer (the host allocates it 128-byte aligned at least).
inline uint64_t boundsScratchWord(uint64_t originalArgs) { return (originalArgs + 2 + 15) / 16 * 16; }
inline uint64_t boundsWords(uint64_t originalArgs) {
  return boundsScratchWord(originalArgs) + kBoundsScratchBytes / 8;
}
inline constexpr const char* kRecordsParam = "cltrace_records";  // trace: uchar*
inline constexpr const char* kControlParam = "cltrace_control";  // trace: ulong*
inline constexpr const char* kArgsParam = "cltrace_args";        // trace: ulong*

// What was instrumented in one kernel (identical for count and trace of the same module).
struct AccessInfo {
  uint32_t id = 0;
  AccessKind kind = AccessKind::Load;
  uint64_t size = 0;  // 0 when dynamic or for barriers/fences
  uint8_t flags = 0;
  uint32_t depth = 0;  // enclosing loops
  uint32_t loop = LoopNest::kNone;  // the innermost of them (KernelReport::loopParents' numbers)
  DynamicWord dynamic = DynamicWord::None;  // what the record carries beyond the static shape
  std::string text;    // the instruction
  // The buffer argument the pointer derives from, when known: the record holds an offset into it.
  int32_t bufferArgument = kFullAddress;

  InstructionShape shape() const {
    return {kind, static_cast<uint32_t>(size), flags, depth, dynamic};
  }
  PackedShape packedShape() const { return {shape(), bufferArgument}; }
};

struct KernelReport {
  std::string name;
  uint32_t originalArgs = 0;
  uint32_t loops = 0;
  uint32_t maxDepth = 0;
  // Per loop, numbered in preorder with siblings in program order: the loop enclosing it, or
  // LoopNest::kNone.
  std::vector<uint32_t> loopParents;
  std::vector<AccessInfo> accesses;
  std::vector<std::string> warnings;  // e.g. loops nested deeper than kMaxLoopDepth
  // Ids of the barriers that a branch on the work-item's id may keep some work-items from
  // (barrier_divergence.h; each has a warning), in increasing order.
  std::vector<uint32_t> divergentBarriers;
  // Global atomics (ids, increasing) whose result decides a branch, so that runs can take
  // different paths, and those whose result only gives an address, so that runs can access
  // different addresses (atomic_dependence.h; each has a warning).
  std::vector<uint32_t> atomicsSteeringBranches;
  std::vector<uint32_t> atomicsSteeringAddresses;
  bool steeredByAtomics() const { return !atomicsSteeringBranches.empty() || !atomicsSteeringAddresses.empty(); }
  // Found by the count pass (the trace pass leaves it true): false when the count kernel leaves
  // out every store to global memory (count_slicing.h), so that the buffers need no restoring
  // after the count run.
  bool countRunWritesBuffers = true;
  // Whether the kernel calls printf (only the trace run's calls can print, when the host asks).
  bool callsPrintf = false;
  // Whether the kernel can reach a barrier or another wait for the whole workgroup (work_group_*
  // and sub_group_* functions, wait_group_events). Such a count kernel has no outside word and
  // no early return from loops (instrument.cpp); the host watches its count run accordingly.
  bool waitsForGroup = false;
  // Bytes of the __local variables the kernel's code uses, each at its alignment, in module order.
  uint64_t staticLocalBytes = 0;
  // The work-group size the kernel requires (its reqd_work_group_size attribute); 0s when none.
  std::array<uint64_t, 3> requiredLocalSize{0, 0, 0};
};
// The shapes of a kernel's instructions, indexed by id (for UnitRecordDecoder).
std::vector<InstructionShape> instructionShapes(const KernelReport& report);
// Which loop encloses which, and each instruction's innermost loop (for trace headers).
LoopNest loopNest(const KernelReport& report);
// How the trace pass packs each instruction's records, indexed by id (for PackedRecordUnpacker).
std::vector<PackedShape> packedShapes(const KernelReport& report);

// Turns vloadN/vstoreN and the half-precision vload_half/vstore_half families into the loads
// and stores a GPU compiler makes of them (one per element, one per vector for the aligned
// vloada_halfN/vstorea_halfN), inlines every non-kernel function into its callers (and a copy of a
// kernel that another kernel calls as a function), then runs SROA, address space
// inference and EarlyCSE (and DCE after it). Returns false with `error` naming the function when
// something cannot be inlined.
bool prepareModule(llvm::Module& m, std::string& error);

// OpenCL C 2.0 resolves a builtin with pointer parameters (sincos, atomic_fetch_add) to its
// generic-address-space overload. Where each generic pointer argument is a cast from a named
// space, calls that space's overload instead (_Z6sincosfPU3AS4f -> _Z6sincosfPf for a private
// variable): the passes recognise those as accesses, and PoCL's library lacks the generic ones.
// (vloadN and the half builtins are plain loads and stores by then.)
// Returns whether anything changed.
bool useNamedSpaceOverloads(llvm::Module& m);

// Instruments the named kernels (all kernels when `kernels` is empty). Other kernels are left
// as they are. Returns false with `error` set when a kernel is missing or cannot be changed.
bool instrumentModule(llvm::Module& m, Mode mode, const std::vector<std::string>& kernels,
                      std::vector<KernelReport>& reports, std::string& error);

// Pass wrappers; errors go to LLVMContext::emitError. The pass text form takes an optional
// kernel list: cltrace-count<kernel=a;kernel=b>.
struct PreparePass : llvm::PassInfoMixin<PreparePass> {
  llvm::PreservedAnalyses run(llvm::Module& m, llvm::ModuleAnalysisManager&);
  static bool isRequired() { return true; }
};
// Prints what would be instrumented (kernels, loops, accesses with ids) to stdout; changes nothing.
struct PrintAccessesPass : llvm::PassInfoMixin<PrintAccessesPass> {
  llvm::PreservedAnalyses run(llvm::Module& m, llvm::ModuleAnalysisManager&);
  static bool isRequired() { return true; }
};
// Lists what was instrumented: "kernel NAME: N loops (max depth D), K sites" then one line
// per access "[id] kind SIZE depth D: instruction" ("depth D loop L" inside loops: L the
// innermost, numbered in preorder, siblings in program order).
std::string formatReport(const KernelReport& report);
// The report for one kernel without changing it (same enumeration as the passes).
KernelReport analyseKernel(llvm::Function& kernel);

struct CountPass : llvm::PassInfoMixin<CountPass> {
  std::vector<std::string> kernels;
  llvm::PreservedAnalyses run(llvm::Module& m, llvm::ModuleAnalysisManager&);
  static bool isRequired() { return true; }
};
struct TracePass : llvm::PassInfoMixin<TracePass> {
  std::vector<std::string> kernels;
  llvm::PreservedAnalyses run(llvm::Module& m, llvm::ModuleAnalysisManager&);
  static bool isRequired() { return true; }
};

}  // namespace cltrace::passes
