#include "cltrace/passes/instrument.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DepthFirstIterator.h>
#include <llvm/ADT/PostOrderIterator.h>
#include <llvm/ADT/SCCIterator.h>
#include <llvm/Analysis/CFG.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/InstIterator.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include <algorithm>
#include <array>
#include <memory>
#include <map>

#include "cltrace/passes/access_enumeration.h"
#include "cltrace/passes/atomic_dependence.h"
#include "cltrace/passes/barrier_divergence.h"
#include "cltrace/passes/count_slicing.h"
#include "cltrace/passes/kernel_rewriter.h"
#include "cltrace/printable.h"

using namespace llvm;

namespace cltrace::passes {

namespace {

std::vector<Loop*> allLoops(LoopInfo& li) {
  std::vector<Loop*> loops;
  for (Loop* top : li)
    for (Loop* l : top->getLoopsInPreorder()) loops.push_back(l);
  return loops;
}

// Private per-work-item state both modes set up at kernel entry.
struct EntryState {
  Value* linearId = nullptr;
  AllocaInst* recordCount = nullptr;  // i64: packed record units this work-item produced so far
};

DynamicWord dynamicWordOf(const Access& a) {
  if (a.dynamicSize) return DynamicWord::Size;
  if (a.fenceFlags) return DynamicWord::FenceFlags;
  return DynamicWord::None;
}

InstructionShape shapeOf(const Access& a) {
  return {a.kind, static_cast<uint32_t>(a.staticSize), a.flags, static_cast<uint32_t>(a.loops.size()),
          dynamicWordOf(a)};
}

// (An image is a global pointer to an opencl.image* struct: a handle, not a buffer.)
bool isBufferPointer(const Type* t) {
  auto* pt = dyn_cast<PointerType>(t);
  return pt && isRecordedSpace(pt->getAddressSpace()) &&
         openclObjectOf(t).empty();
}

// The global/constant pointer argument the access's pointer derives from, or kFullAddress.
int32_t bufferArgumentOf(const Access& a) {
  if (!isMemoryAccess(a.kind) || !a.pointer) return kFullAddress;
  if (auto* arg = dyn_cast<Argument>(getUnderlyingObject(a.pointer)); arg && isBufferPointer(arg->getType()))
    return static_cast<int32_t>(arg->getArgNo());
  return kFullAddress;
}

// Allocas go first in the entry block (SPIR-V requires all OpVariables there).
AllocaInst* entryAlloca(Function& f, Type* t, const char* name) {
  IRBuilder<> b(&f.getEntryBlock(), f.getEntryBlock().begin());
  return b.CreateAlloca(t, nullptr, name);
}

// Static allocas first in the entry block, in their order, so that the code added after them
// stays out of the way: blocks split later keep every alloca in the first block (SPIR-V wants
// all OpVariables there; inlining a callee with a byval argument leaves one further down).
Instruction* afterEntryAllocas(BasicBlock& entry) {
  std::vector<AllocaInst*> allocas;
  for (Instruction& i : entry)
    if (auto* a = dyn_cast<AllocaInst>(&i); a && a->isStaticAlloca()) allocas.push_back(a);
  for (auto a = allocas.rbegin(); a != allocas.rend(); ++a)
    if (*a != &entry.front()) (*a)->moveBefore(&entry.front());
  auto first = entry.begin();
  while (isa<AllocaInst>(*first)) ++first;
  return &*first;
}

EntryState emitEntry(Function& f, IRBuilder<>& b) {
  EntryState s;
  b.SetInsertPoint(afterEntryAllocas(f.getEntryBlock()));
  s.recordCount = entryAlloca(f, b.getInt64Ty(), "cltrace.n");
  b.CreateStore(b.getInt64(0), s.recordCount);
  s.linearId = emitLinearGlobalId(b, *f.getParent());
  return s;
}

std::vector<CallInst*> printfCalls(Function& f) {
  std::vector<CallInst*> calls;
  for (BasicBlock& bb : f)
    for (Instruction& i : bb)
      if (auto* c = dyn_cast<CallInst>(&i))
        if (Function* callee = c->getCalledFunction(); callee && callee->getName() == "printf") calls.push_back(c);
  return calls;
}

Value* argByName(Function& f, StringRef name) {
  for (Argument& a : f.args())
    if (a.getName() == name) return &a;
  return nullptr;
}

// Bytes of the __local variables (globals of the local address space) that `kernel`'s code uses,
// laid out in module order, each at its alignment, as a GPU places them in shared memory.
uint64_t staticLocalBytes(const Function& kernel) {
  SmallPtrSet<const Value*, 32> visited;
  SmallPtrSet<const GlobalVariable*, 8> used;
  std::vector<const Value*> work;
  for (const Instruction& i : instructions(kernel))
    for (const Value* operand : i.operands()) work.push_back(operand);
  while (!work.empty()) {
    const Value* v = work.back();
    work.pop_back();
    if (!visited.insert(v).second) continue;
    if (const auto* g = dyn_cast<GlobalVariable>(v)) {
      if (g->getAddressSpace() == kLocalAddressSpace) used.insert(g);
    } else if (const auto* c = dyn_cast<ConstantExpr>(v)) {
      for (const Value* operand : c->operands()) work.push_back(operand);
    }
  }
  const DataLayout& dl = kernel.getParent()->getDataLayout();
  uint64_t bytes = 0;
  for (const GlobalVariable& g : kernel.getParent()->globals())
    if (used.count(&g)) bytes = alignTo(bytes, g.getAlign().valueOrOne()) + dl.getTypeAllocSize(g.getValueType());
  return bytes;
}

// The kernel's reqd_work_group_size (clang's metadata of three i32), 0s when it has none.
std::array<uint64_t, 3> requiredLocalSize(const Function& kernel) {
  std::array<uint64_t, 3> size{0, 0, 0};
  if (const MDNode* md = kernel.getMetadata("reqd_work_group_size"); md && md->getNumOperands() == 3)
    for (unsigned d = 0; d < 3; ++d)
      if (const auto* c = mdconst::dyn_extract<ConstantInt>(md->getOperand(d))) size[d] = c->getZExtValue();
  return size;
}

class KernelInstrumenter {
 public:
  KernelInstrumenter(Function& kernel, Mode mode) : kernel_(kernel), mode_(mode) {}

  // Reads the loop structure and the accesses; changes nothing.
  bool analyse(KernelReport& report, std::string& error) {
    report.name = kernel_.getName().str();
    report.originalArgs = static_cast<uint32_t>(kernel_.arg_size());
    report.staticLocalBytes = staticLocalBytes(kernel_);
    report.requiredLocalSize = requiredLocalSize(kernel_);
    dominators_ = std::make_unique<DominatorTree>(kernel_);
    loopInfo_ = std::make_unique<LoopInfo>(*dominators_);
    loops_ = allLoops(*loopInfo_);
    loopContext_ = loopContext(kernel_, *loopInfo_, *dominators_);
    accesses_ = enumerateAccesses(kernel_, *loopInfo_, loopContext_);
    // A program-scope variable's memory is the program's, not a buffer's: the count and trace
    // runs would each change it (the trace run could then take another path), and a traced
    // launch, which runs instrumented copies, would leave the program's own variable as it was.
    for (const Access& a : accesses_) {
      if (!a.pointer) continue;
      const GlobalVariable* variable = programScopeVariable(a.pointer);
      if (!variable) continue;
      if (a.kind == AccessKind::Store || a.kind == AccessKind::Atomic) {
        error = "kernel '" + report.name + "' writes the program-scope variable '" + variable->getName().str() +
                "': cltrace traces kernels whose writes go to buffers (a traced launch runs instrumented "
                "copies, which would leave the program's own variable as it was)";
        return false;
      }
      // A recorded read whose pointer may also point into a variable (chosen at run time).
      error = "kernel '" + report.name + "' reads through a pointer that may point into the program-scope variable '" +
              variable->getName().str() + "' or into a buffer (" + describe(*a.inst) +
              "): cltrace records reads of buffers only and cannot tell these apart";
      return false;
    }
    warnAboutProgramScopeReads(report);
    warnAboutImageAccesses(report);
    warnAboutDivergentBarriers(report);
    warnAboutAtomicSteering(report);
    // Read before the body moves: afterwards the pointers derive from the new function's arguments.
    packed_.clear();
    for (const Access& a : accesses_) packed_.push_back({shapeOf(a), bufferArgumentOf(a)});
    fillReport(report);
    return true;
  }

  // Returns the instrumented kernel (a new function), or null with `error` set.
  Function* run(KernelReport& report, std::string& error) {
    // Loop structure and accesses are read before anything changes.
    if (!analyse(report, error)) return nullptr;

    LLVMContext& ctx = kernel_.getContext();
    std::vector<AddedParameter> params;
    if (mode_ == Mode::Count) {
      params.push_back({kCountsParam, "ulong*", Type::getInt64Ty(ctx)});
      params.push_back({kBoundsParam, "ulong*", Type::getInt64Ty(ctx)});
    } else {
      params.push_back({kRecordsParam, "uchar*", Type::getInt8Ty(ctx)});
      params.push_back({kControlParam, "ulong*", Type::getInt64Ty(ctx)});
      params.push_back({kArgsParam, "ulong*", Type::getInt64Ty(ctx)});
    }
    // Instructions survive the move of the body into the new function; the old function's
    // arguments do not, so accesses that use an argument directly are pointed at the new one.
    std::vector<std::vector<std::pair<Value**, unsigned>>> argumentUses(accesses_.size());
    for (size_t i = 0; i < accesses_.size(); ++i)
      for (Value** v : {&accesses_[i].pointer, &accesses_[i].dynamicSize, &accesses_[i].fenceFlags})
        if (auto* a = dyn_cast_or_null<Argument>(*v)) argumentUses[i].push_back({v, a->getArgNo()});
    Function* f = appendKernelParameters(kernel_, params, error);
    if (!f) return nullptr;
    for (auto& uses : argumentUses)
      for (auto [v, argNo] : uses) *v = f->getArg(argNo);
    report.callsPrintf = !printfCalls(*f).empty();
    report.waitsForGroup = reachesGroupWait(&f->getEntryBlock());
    if (mode_ == Mode::Count) {
      instrumentCount(*f, report.originalArgs, report.waitsForGroup);
      report.countRunWritesBuffers = countRunWritesBuffers_;
    } else {
      instrumentTrace(*f, report.originalArgs);
    }
    return f;
  }

 private:
  // Reads of OpenCL 2.0 `global` program-scope variables go through the L1 on a GPU but are not
  // recorded (no buffer holds them): say so rather than leave them silently out.
  void warnAboutProgramScopeReads(KernelReport& report) const {
    // variable -> load instructions, for `global` variables and `__constant` tables apart
    std::map<std::string, uint64_t> loads[2];
    for (const BasicBlock& block : kernel_)
      for (const Instruction& inst : block)
        if (const auto* load = dyn_cast<LoadInst>(&inst)) {
          const Value* p = load->getPointerOperand();
          const unsigned space = p->getType()->getPointerAddressSpace();
          if (isRecordedSpace(space) && onlyProgramScopeData(p))
            ++loads[space == kConstantAddressSpace][programScopeVariable(p)->getName().str()];
        }
    for (int constant = 0; constant < 2; ++constant)
      for (const auto& [name, count] : loads[constant])
        report.warnings.push_back(
            "kernel '" + report.name + "' reads the program-scope " + (constant ? "__constant " : "") + "variable '" +
            name + "' (" + std::to_string(count) + (count == 1 ? " load instruction" : " load instructions") +
            "): program-scope data is not recorded, so " +
            (constant ? "the trace and the constant loads counted apart leave those reads out"
                      : "the trace and the L1 prediction leave those reads out"));
  }

  // Image reads and writes go through the OpenCL library (a GPU's texture path, not its L1):
  // they are not traced, which a kernel's report should say rather than show fewer accesses.
  void warnAboutImageAccesses(KernelReport& report) const {
    uint64_t reads = 0, writes = 0;
    for (const BasicBlock& block : kernel_)
      for (const Instruction& inst : block)
        if (const auto* call = dyn_cast<CallInst>(&inst))
          if (const Function* callee = call->getCalledFunction()) {
            const StringRef stem = demangledStem(callee->getName());
            reads += stem.startswith("read_image");
            writes += stem.startswith("write_image");
          }
    auto calls = [](uint64_t n, const char* what) {
      return std::to_string(n) + " " + what + (n == 1 ? " call" : " calls");
    };
    if (reads)
      report.warnings.push_back("kernel '" + report.name + "' reads images (" + calls(reads, "read_image") +
                                "): image reads go through a GPU's texture cache, not its L1, and are not traced; "
                                "the L1 prediction leaves them out");
    if (writes)
      report.warnings.push_back("kernel '" + report.name + "' writes images (" + calls(writes, "write_image") +
                                "): image writes are not traced");
  }

  // A barrier that some work-items of a workgroup may skip is undefined in OpenCL, and PoCL's
  // trace run can hang on one (an early return before a barrier): say so before it runs.
  void warnAboutDivergentBarriers(KernelReport& report) const {
    std::vector<const Instruction*> barriers;
    std::map<const Instruction*, uint32_t> idOf;
    for (const Access& a : accesses_)
      if (a.kind == AccessKind::Barrier) {
        barriers.push_back(a.inst);
        idOf[a.inst] = a.id;
      }
    std::vector<DivergentBarrier> divergent = divergentBarriers(kernel_, barriers);
    std::sort(divergent.begin(), divergent.end(),
              [&](const DivergentBarrier& a, const DivergentBarrier& b) { return idOf[a.barrier] < idOf[b.barrier]; });
    for (const DivergentBarrier& d : divergent) {
      report.divergentBarriers.push_back(idOf[d.barrier]);
      const auto* condition = dyn_cast<Instruction>(d.condition);
      report.warnings.push_back("kernel '" + report.name + "': the barrier [" + std::to_string(idOf[d.barrier]) +
                                "] may not be reached by every work-item of a workgroup, as it follows a branch on "
                                "the work-item's id (" + describe(condition ? *condition : *d.branch) +
                                ") before its ways meet again (an early return, or a barrier in a branch or loop "
                                "that depends on the id). OpenCL leaves such a barrier undefined: PoCL can hang "
                                "or crash on it, with cltrace or without (cltrace gives up a run that hangs: "
                                "--trace-timeout), or run the branch for every work-item of the workgroup, so "
                                "that the trace holds accesses of work-items that should skip it; let every "
                                "work-item reach each barrier");
    }
  }

  // What a global atomic returns depends on how work-items of different workgroups interleave:
  // where it decides a branch or an address, runs of the kernel can differ. Say so before it runs.
  void warnAboutAtomicSteering(KernelReport& report) const {
    std::vector<const Instruction*> atomics;
    std::vector<std::pair<const Instruction*, std::vector<const Value*>>> addresses;
    std::map<const Instruction*, uint32_t> idOf;
    for (const Access& a : accesses_) {
      idOf.emplace(a.inst, a.id);
      if (a.kind == AccessKind::Atomic) atomics.push_back(a.inst);
      if (a.pointer) addresses.push_back({a.inst, {a.pointer, a.dynamicSize}});
    }
    for (const AtomicSteering& s : atomicSteering(atomics, addresses)) {
      const std::string atomic = "the atomic [" + std::to_string(idOf[s.atomic]) + "] (" + describe(*s.atomic) + ")";
      if (s.branch) {
        report.atomicsSteeringBranches.push_back(idOf[s.atomic]);
        report.warnings.push_back("kernel '" + report.name + "': what " + atomic + " returns decides a branch (" +
                                  describe(*s.branch) + "): how often that code runs depends on how the device "
                                  "interleaves work-items of different workgroups (a compare-and-swap loop repeats "
                                  "when another got in between), so runs of the kernel can take different paths");
      } else {
        report.atomicsSteeringAddresses.push_back(idOf[s.atomic]);
        report.warnings.push_back("kernel '" + report.name + "': what " + atomic + " returns gives the address of [" +
                                  std::to_string(idOf[s.access]) + "] (" + describe(*s.access) +
                                  "): which address depends on how the device interleaves work-items of different "
                                  "workgroups, so runs of the kernel can access different addresses");
      }
    }
  }

  void fillReport(KernelReport& report) {
    report.loops = static_cast<uint32_t>(loops_.size());
    for (Loop* l : loops_) {
      uint32_t depth = 0;
      for (const Loop* p = l; p; p = loopContext_.parentOf(p)) ++depth;
      report.maxDepth = std::max(report.maxDepth, depth);
    }
    if (report.maxDepth > kMaxLoopDepth)
      report.warnings.push_back("kernel '" + report.name + "': loops nested " +
                                std::to_string(report.maxDepth) + " deep; records keep the " +
                                std::to_string(kMaxLoopDepth) +
                                " outermost iteration counters and are flagged truncated");
    // A cycle entered in two places (a goto into a loop) is no loop to LoopInfo: its accesses
    // get no iteration counter, so nothing keeps their iterations apart in a warp step.
    ReversePostOrderTraversal<const Function*> order(&kernel_);
    if (containsIrreducibleCFG<const BasicBlock*>(order, *loopInfo_))
      report.warnings.push_back("kernel '" + report.name + "': a loop is entered in more than one place (a goto "
                                "into it); its accesses carry no iteration counters, so the warp scheduler "
                                "may put different iterations of the work-items into one step");
    const DenseMap<const Loop*, uint32_t> number = numberLoops(report.loopParents);
    for (size_t i = 0; i < accesses_.size(); ++i) {
      const Access& a = accesses_[i];
      report.accesses.push_back({a.id, a.kind, a.staticSize, a.flags, static_cast<uint32_t>(a.loops.size()),
                                 a.loops.empty() ? LoopNest::kNone : number.lookup(a.loops.back()),
                                 dynamicWordOf(a),
                                 describe(*a.inst),
                                 packed_[i].bufferArgument});
    }
  }

  // Numbers the loops for the trace header in preorder, siblings in the order of their header
  // blocks (the order of the instruction ids: loop 0 is the first in the source), so that a
  // parent comes before its children; `parents` receives each loop's parent number.
  DenseMap<const Loop*, uint32_t> numberLoops(std::vector<uint32_t>& parents) const {
    DenseMap<const BasicBlock*, uint32_t> position;
    for (const BasicBlock& bb : kernel_) position[&bb] = static_cast<uint32_t>(position.size());
    const auto inLayoutOrder = [&](std::vector<Loop*> loops) {
      std::sort(loops.begin(), loops.end(), [&](const Loop* x, const Loop* y) {
        return position.lookup(x->getHeader()) < position.lookup(y->getHeader());
      });
      return loops;
    };
    // Parents as the lanes see them: a loop on a break's way nests in the loop it leaves.
    DenseMap<const Loop*, std::vector<Loop*>> children;
    std::vector<Loop*> outermost;
    for (Loop* l : loops_) {
      if (Loop* p = loopContext_.parentOf(l))
        children[p].push_back(l);
      else
        outermost.push_back(l);
    }
    DenseMap<const Loop*, uint32_t> number;
    std::vector<Loop*> pending = inLayoutOrder(outermost);
    std::reverse(pending.begin(), pending.end());  // a stack: the first on top
    while (!pending.empty()) {
      Loop* l = pending.back();
      pending.pop_back();
      number[l] = static_cast<uint32_t>(parents.size());
      const Loop* p = loopContext_.parentOf(l);
      parents.push_back(p ? number.lookup(p) : LoopNest::kNone);
      std::vector<Loop*> inner = inLayoutOrder(children.lookup(l));
      pending.insert(pending.end(), inner.rbegin(), inner.rend());
    }
    return number;
  }

  void instrumentCount(Function& f, uint32_t originalArgs, bool waitsForGroup) {
    // Before any block is split: the accesses whose guard would be a branch within a branch
    // (redirectUnless). Accesses that run on every iteration of their loop keep the branch: PoCL
    // runs those (tiled loops), and a redirected load there cost the count run of a 512 x 512
    // tiled multiply 1.6 times the time (PoCL no longer loads a tile row as one vector).
    std::vector<bool> conditional(accesses_.size(), true);
    for (size_t i = 0; i < accesses_.size(); ++i)
      if (!accesses_[i].loops.empty())
        conditional[i] = !runsEveryIteration(*accesses_[i].loops.back(), accesses_[i].inst->getParent(), *dominators_);
    // The count run never prints (the trace run or the program's own launch does, once).
    for (CallInst* c : printfCalls(f)) {
      c->replaceAllUsesWith(ConstantInt::get(c->getType(), 0));
      c->eraseFromParent();
    }
    // Read before anything is added: the count run's own stores are not the kernel's.
    const std::optional<std::vector<StoreInst*>> removable = countRunRemovableStores(f);
    countRunWritesBuffers_ = !removable;
    IRBuilder<> b(f.getContext());
    EntryState s = emitEntry(f, b);
    AllocaInst* diag = entryAlloca(f, b.getInt64Ty(), "cltrace.diag");
    // The launch tag (bounds[original arguments]) marks the slots this launch wrote.
    Value* tag = b.CreateLoad(b.getInt64Ty(), slotPointer(b, argByName(f, kBoundsParam), b.getInt64(originalArgs)),
                              "cltrace.tag");
    b.CreateStore(b.CreateShl(b.CreateAnd(tag, b.getInt64(kLaunchTagMask)), kDiagLaunchTagShift), diag);
    // Lowest id of the accesses that fell outside their buffer, all ones while none did.
    AllocaInst* outside = entryAlloca(f, b.getInt32Ty(), "cltrace.outside");
    b.CreateStore(b.getInt32(~0u), outside);
    // Only a kernel with a cycle (a loop, or a goto's, which loop analysis leaves out) can wait
    // forever after a work-item went outside (kBoundsParam). Elsewhere the kernel stays as it
    // was, and so does any kernel with a barrier (or other wait for the whole workgroup): PoCL
    // crashed or hung on the extra store there, and miscounted when a loop returned early
    // (leaveLoopsOnceOutside), even with every barrier in branches the whole workgroup takes
    // alike (Rodinia srad's reduction: a barrier loop per branch of `if (group != last)`).
    Value* outsideWord = hasCycle(f) && !waitsForGroup
                             ? slotPointer(b, argByName(f, kBoundsParam), b.getInt64(originalArgs + 1))
                             : nullptr;
    std::vector<BufferRange> buffers = emitBufferRanges(f, b, originalArgs);
    const std::vector<LocalAccess> locals = localArgumentAccesses(f, originalArgs);
    std::vector<BufferRange> localRanges;
    AllocaInst* localOutside = nullptr;
    if (!locals.empty()) {
      localRanges = emitLocalRanges(f, b, originalArgs);
      localOutside = entryAlloca(f, b.getInt32Ty(), "cltrace.local_outside");
      b.CreateStore(b.getInt32(~0u), localOutside);
    }
    // In a kernel that waits for its workgroup the guards of global accesses add no branch in
    // the kernel's branches (redirectUnless).
    Value* scratch =
        waitsForGroup ? slotPointer(b, argByName(f, kBoundsParam), b.getInt64(boundsScratchWord(originalArgs))) : nullptr;
    for (size_t i = 0; i < accesses_.size(); ++i) {
      const Access& a = accesses_[i];
      b.SetInsertPoint(a.inst);
      b.CreateStore(
          b.CreateAdd(b.CreateLoad(b.getInt64Ty(), s.recordCount), b.getInt64(packedRecordUnits(packed_[i]))),
          s.recordCount);
      if (a.loops.size() > kMaxLoopDepth)
        b.CreateStore(b.CreateOr(b.CreateLoad(b.getInt64Ty(), diag),
                                 b.getInt64(kDiagDepthTruncated)),
                      diag);
      if (a.pointer) guardAccess(b, a, buffers, outside, outsideWord, conditional[i] ? scratch : nullptr);
    }
    for (const LocalAccess& a : locals) guardLocalAccess(a, localRanges, localOutside);
    if (!waitsForGroup) leaveLoopsOnceOutside(f, outside);
    Value* counts = argByName(f, kCountsParam);
    for (ReturnInst* ret : returnsOf(f)) {
      b.SetInsertPoint(ret);
      Value* slot = b.CreateMul(s.linearId, b.getInt64(kCountSlotsPerWorkItem));
      b.CreateStore(b.CreateLoad(b.getInt64Ty(), s.recordCount), slotPointer(b, counts, slot));
      Value* outsideBits = lowestField(b, b.CreateLoad(b.getInt32Ty(), outside), kDiagOutsideBuffers,
                                       kDiagFirstOutsideShift);
      if (localOutside)
        outsideBits = b.CreateOr(
            outsideBits, lowestField(b, b.CreateLoad(b.getInt32Ty(), localOutside), 0, kDiagLocalArgumentShift));
      b.CreateStore(b.CreateOr(b.CreateLoad(b.getInt64Ty(), diag), outsideBits),
                    slotPointer(b, counts, b.CreateAdd(slot, b.getInt64(1))));
    }
    // Last, once everything the count run adds is in place (what no side effect uses goes with
    // the stores): the stores' accesses are still counted and bound-checked.
    if (removable) eraseStoresAndDeadOperands(*removable);
  }

  // A work-item that went outside a buffer returns at the top of its next loop iteration (its
  // counts and diagnostics are stored as at any return). The host refuses such a launch, so the
  // rest of its run counts nothing; and a loop waiting for a value that the skipped load would
  // have read (`while (a[j] != x) j++;` past the buffer's end, where each load yields zero)
  // would otherwise never end.
  // Only in kernels without a barrier (or other wait for the whole workgroup): PoCL takes a
  // barrier's branches as the same for every work-item, so one that returned early made the
  // others skip their barriers and their checks (a launch with a work-item outside was traced),
  // and a return after the barriers still made it miscount a valid kernel (see the caller).
  void leaveLoopsOnceOutside(Function& f, AllocaInst* outside) {
    if (loops_.empty()) return;
    BasicBlock* leave = BasicBlock::Create(f.getContext(), "cltrace.leave", &f);
    ReturnInst::Create(f.getContext(), leave);
    for (Loop* l : loops_) {
      BasicBlock* header = l->getHeader();  // the guards' splits keep it the block with the phis
      BasicBlock* rest = header->splitBasicBlock(header->getFirstInsertionPt(), header->getName() + ".inside");
      Instruction* toRest = header->getTerminator();
      IRBuilder<> b(toRest);
      Value* wentOutside = b.CreateICmpNE(b.CreateLoad(b.getInt32Ty(), outside), b.getInt32(~0u));
      b.CreateCondBr(wentOutside, leave, rest);
      toRest->eraseFromParent();
    }
  }

  static bool hasCycle(Function& f) {
    for (scc_iterator<Function*> scc = scc_begin(&f); !scc.isAtEnd(); ++scc)
      if (scc.hasCycle()) return true;
    return false;
  }

  // Whether a barrier, or a call that may wait for the whole workgroup, can be reached from `from`.
  static bool reachesGroupWait(BasicBlock* from) {
    DenseMap<const Function*, bool> known;
    for (BasicBlock* b : depth_first(from))
      for (Instruction& i : *b)
        if (auto* call = dyn_cast<CallBase>(&i); call && mayWaitForGroup(*call, known)) return true;
    return false;
  }

  // A barrier (also work_group_barrier, and wait_group_events, which cltrace defines with one), a
  // work-group or sub-group function, or a function of the module that calls one; `known` holds
  // the functions looked at (false while being looked at, so recursion ends).
  static bool mayWaitForGroup(const CallBase& call, DenseMap<const Function*, bool>& known) {
    const Function* callee = call.getCalledFunction();
    if (!callee) return !call.isInlineAsm();
    if (callee->isIntrinsic()) return false;
    const StringRef name = callee->getName();
    if (const FenceBuiltin* fence = fenceBuiltin(name); fence && fence->kind == AccessKind::Barrier) return true;
    if (name.contains("work_group") || name.contains("sub_group") || name.contains("wait_group_events") ||
        name.contains("barrier"))
      return true;
    if (callee->isDeclaration()) return false;
    if (auto it = known.find(callee); it != known.end()) return it->second;
    known[callee] = false;
    bool waits = false;
    for (const Instruction& i : instructions(*callee))
      if (auto* inner = dyn_cast<CallBase>(&i); inner && mayWaitForGroup(*inner, known)) {
        waits = true;
        break;
      }
    known[callee] = waits;
    return waits;
  }

  // The buffer bound to a global or constant pointer argument: [begin, begin + size).
  struct BufferRange {
    Argument* arg;
    Value* begin;
    Value* size;
  };

  // The ranges of the buffer arguments: each starts at its pointer and is as long as the host
  // says in the bounds buffer (bytes per original argument).
  std::vector<BufferRange> emitBufferRanges(Function& f, IRBuilder<>& b, uint32_t originalArgs) {
    Value* bounds = argByName(f, kBoundsParam);
    std::vector<BufferRange> ranges;
    for (uint32_t i = 0; i < originalArgs; ++i) {
      Argument* arg = f.getArg(i);
      if (!isBufferPointer(arg->getType())) continue;
      ranges.push_back({arg, b.CreatePtrToInt(arg, b.getInt64Ty()),
                        b.CreateLoad(b.getInt64Ty(), slotPointer(b, bounds, b.getInt64(i)))});
    }
    return ranges;
  }

  // A store or atomic whose pointer derives from a __local pointer argument.
  struct LocalAccess {
    Instruction* inst;
    Value* pointer;
    Argument* arg;
    uint64_t size;
  };

  // The stores and atomics of `f` through its __local pointer arguments (of the first
  // `originalArgs`): those would overwrite other memory. Loads are left alone: a check on each
  // kept the count kernel's tile loops, which it otherwise drops with the global stores they
  // feed (a 512 x 512 tiled multiply's count run took 0.19 s instead of 0.018 s).
  std::vector<LocalAccess> localArgumentAccesses(Function& f, uint32_t originalArgs) const {
    const DataLayout& dl = f.getParent()->getDataLayout();
    std::vector<LocalAccess> out;
    for (Instruction& inst : instructions(f)) {
      Value* pointer = nullptr;
      Type* type = nullptr;
      if (auto* store = dyn_cast<StoreInst>(&inst)) {
        pointer = store->getPointerOperand();
        type = store->getValueOperand()->getType();
      } else if (auto* rmw = dyn_cast<AtomicRMWInst>(&inst)) {
        pointer = rmw->getPointerOperand();
        type = rmw->getValOperand()->getType();
      } else if (auto* cas = dyn_cast<AtomicCmpXchgInst>(&inst)) {
        pointer = cas->getPointerOperand();
        type = cas->getNewValOperand()->getType();
      } else if (auto* call = dyn_cast<CallInst>(&inst)) {
        // atomic_inc(&counts[i]) and the other atomic builtins on __local memory.
        const Function* callee = call->getCalledFunction();
        if (callee && isAtomicBuiltin(callee->getName()) && call->arg_size() > 0)
          if (auto* pt = dyn_cast<PointerType>(call->getArgOperand(0)->getType()); pt && !pt->isOpaque()) {
            pointer = call->getArgOperand(0);
            type = pt->getNonOpaquePointerElementType();
          }
      }
      if (!pointer || !type || !type->isSized() || pointer->getType()->getPointerAddressSpace() != kLocalAddressSpace)
        continue;
      auto* arg = dyn_cast<Argument>(getUnderlyingObject(pointer));
      // (An argument number the diagnostics word cannot hold, 4095 on, is not checked.)
      if (!arg || arg->getParent() != &f || arg->getArgNo() >= originalArgs ||
          arg->getArgNo() >= kDiagLocalArgumentMask)
        continue;
      out.push_back({&inst, pointer, arg, dl.getTypeStoreSize(type).getFixedSize()});
    }
    return out;
  }

  // The ranges of the __local pointer arguments: the bytes the host gave each (bounds buffer).
  std::vector<BufferRange> emitLocalRanges(Function& f, IRBuilder<>& b, uint32_t originalArgs) {
    Value* bounds = argByName(f, kBoundsParam);
    std::vector<BufferRange> ranges;
    for (uint32_t i = 0; i < originalArgs; ++i) {
      Argument* arg = f.getArg(i);
      auto* pt = dyn_cast<PointerType>(arg->getType());
      if (!pt || pt->getAddressSpace() != kLocalAddressSpace) continue;
      ranges.push_back({arg, b.CreatePtrToInt(arg, b.getInt64Ty()),
                        b.CreateLoad(b.getInt64Ty(), slotPointer(b, bounds, b.getInt64(i)))});
    }
    return ranges;
  }

  // Notes `id` in the i32 slot `lowest` (all ones while empty) when it is lower than what the
  // slot holds; with `unless`, only where `unless` is false (a select, no branch).
  static void noteLowest(IRBuilder<>& b, AllocaInst* lowest, uint32_t id, Value* unless = nullptr) {
    Value* was = b.CreateLoad(b.getInt32Ty(), lowest);
    Value* lower = b.CreateSelect(b.CreateICmpULT(b.getInt32(id), was), b.getInt32(id), was);
    b.CreateStore(unless ? b.CreateSelect(unless, was, lower) : lower, lowest);
  }

  // The diagnostics word's field for a slot noteLowest filled: 0 when it holds none, else
  // `flags` | (its number + 1) << `shift`.
  static Value* lowestField(IRBuilder<>& b, Value* lowest, uint64_t flags, uint32_t shift) {
    Value* field = b.CreateShl(b.CreateAdd(b.CreateZExt(lowest, b.getInt64Ty()), b.getInt64(1)), shift);
    if (flags != 0) field = b.CreateOr(b.getInt64(flags), field);
    return b.CreateSelect(b.CreateICmpEQ(lowest, b.getInt32(~0u)), b.getInt64(0), field);
  }

  // Sends a plain load or store `inst` of `pointer` to `scratch` unless `inside` holds (a load
  // then yields zero), and notes it in `lowest` (an i32 slot) with id `id` as performOnlyIf's way
  // outside would. False, changing nothing, for any other access, one in another address space,
  // or one wider than the scratch. This keeps the kernel's branches its own where PoCL makes its
  // barrier regions from them: a guard's if/else after a barrier in a branch the whole workgroup
  // takes (`if (n > 0) { barrier(...); if (t == 0) out[i] = s; }`) made PoCL hang, or count paths
  // the trace run did not take (SHOC's spmv_csr_vector), where the plain kernel runs. (__local
  // stores keep their branch: redirected, to a __local scratch array or even to the argument's
  // own first element, they made PoCL crash in an async copy's loop.)
  bool redirectUnless(Value* inside, Instruction* inst, Value* pointer, Value* scratch, AllocaInst* lowest,
                      uint32_t id) {
    if (!scratch) return false;
    auto* load = dyn_cast<LoadInst>(inst);
    auto* store = dyn_cast<StoreInst>(inst);
    if (!load && !store) return false;
    if ((load ? load->getPointerOperand() : store->getPointerOperand()) != pointer) return false;
    Type* type = load ? load->getType() : store->getValueOperand()->getType();
    const DataLayout& dl = inst->getModule()->getDataLayout();
    if (dl.getTypeStoreSize(type).isScalable() || dl.getTypeStoreSize(type).getFixedSize() > kBoundsScratchBytes)
      return false;
    auto* pt = cast<PointerType>(pointer->getType());
    if (pt->getAddressSpace() != cast<PointerType>(scratch->getType())->getAddressSpace()) return false;
    IRBuilder<> b(inst);
    Value* instead = b.CreatePointerBitCastOrAddrSpaceCast(scratch, pt);
    Value* target = b.CreateSelect(inside, pointer, instead);
    noteLowest(b, lowest, id, inside);
    if (store) {
      store->setOperand(store->getPointerOperandIndex(), target);
      return true;
    }
    load->setOperand(load->getPointerOperandIndex(), target);
    b.SetInsertPoint(load->getNextNode());
    Value* value = b.CreateSelect(inside, load, Constant::getNullValue(type));
    load->replaceUsesWithIf(value, [&](Use& u) { return u.getUser() != value; });
    return true;
  }

  // Performs a __local store or atomic only when it lies inside the memory the host gave its
  // argument; otherwise the count run skips it (an atomic yields zero) and notes the argument in
  // `localOutside` (the lowest such argument), so that the host can say the __local size is too
  // small instead of letting the kernel overwrite other memory.
  void guardLocalAccess(const LocalAccess& a, const std::vector<BufferRange>& ranges, AllocaInst* localOutside) {
    const BufferRange* range = nullptr;
    for (const BufferRange& r : ranges)
      if (r.arg == a.arg) range = &r;
    if (!range) return;
    IRBuilder<> b(a.inst);
    Value* size = b.getInt64(a.size);
    Value* fits = b.CreateICmpUGE(range->size, size);
    Value* bound = b.CreateSelect(fits, b.CreateAdd(b.CreateSub(range->size, size), b.getInt64(1)), b.getInt64(0));
    Value* inside = b.CreateICmpULT(b.CreateSub(b.CreatePtrToInt(a.pointer, b.getInt64Ty()), range->begin), bound);
    performOnlyIf(inside, a.inst, [&](IRBuilder<>& e) { noteLowest(e, localOutside, a.arg->getArgNo()); });
  }

  // Moves `inst` into a branch taken when `inside` holds; the other way runs `outside`. A value
  // `inst` gave is zero when it did not run.
  template <typename OnOutside>
  void performOnlyIf(Value* inside, Instruction* inst, OnOutside outside) {
    Instruction* thenTerm = nullptr;
    Instruction* elseTerm = nullptr;
    SplitBlockAndInsertIfThenElse(inside, inst, &thenTerm, &elseTerm);
    BasicBlock* thenBlock = thenTerm->getParent();
    inst->moveBefore(thenTerm);
    IRBuilder<> e(elseTerm);
    outside(e);
    if (!inst->getType()->isVoidTy()) {
      IRBuilder<> m(&*thenTerm->getSuccessor(0)->getFirstInsertionPt());
      PHINode* phi = m.CreatePHI(inst->getType(), 2);
      inst->replaceAllUsesWith(phi);
      phi->addIncoming(inst, thenBlock);
      phi->addIncoming(Constant::getNullValue(inst->getType()), elseTerm->getParent());
    }
  }

  // Performs the access only when it lies inside its buffer (the argument its pointer derives
  // from; any buffer argument when that is not known statically); otherwise the count run skips
  // it (a load yields zero) and notes the access's id in `outside`, so the host can report it
  // instead of letting the kernel corrupt memory; it also sets `outsideWord`, when given, which
  // the host watches while the run lasts, to end a run that then waits forever (a plain store: a
  // volatile or atomic one made PoCL's count run of an async copy see accesses outside). The
  // common path is a subtraction, a compare and a branch; the bound is loop-invariant.
  void guardAccess(IRBuilder<>& b, const Access& a, const std::vector<BufferRange>& buffers, AllocaInst* outside,
                   Value* outsideWord, Value* scratch) {
    Value* address = addressOf(b, a);
    Value* size = a.dynamicSize ? b.CreateZExtOrTrunc(a.dynamicSize, b.getInt64Ty()) : b.getInt64(a.staticSize);
    const Value* origin = getUnderlyingObject(a.pointer);
    std::vector<BufferRange> candidates;
    for (const BufferRange& r : buffers)
      if (r.arg == origin) candidates.push_back(r);
    if (candidates.empty()) candidates = buffers;
    Value* inside = nullptr;
    for (const BufferRange& r : candidates) {
      // Inside when offset < buffer size - access size + 1 (no start fits a too-small buffer).
      Value* fits = b.CreateICmpUGE(r.size, size);
      Value* bound = b.CreateSelect(fits, b.CreateAdd(b.CreateSub(r.size, size), b.getInt64(1)), b.getInt64(0));
      Value* in = b.CreateICmpULT(b.CreateSub(address, r.begin), bound);
      inside = inside ? b.CreateOr(inside, in) : in;
    }
    if (!inside) inside = b.getFalse();
    // Only kernels that wait for their workgroup have scratch, and they have no outside word.
    if (redirectUnless(inside, a.inst, a.pointer, scratch, outside, a.id)) return;

    performOnlyIf(inside, a.inst, [&](IRBuilder<>& e) {
      noteLowest(e, outside, a.id);  // outside: the work-item's lowest outside id
      if (outsideWord) e.CreateStore(e.getInt64(1), outsideWord);
    });
  }

  void instrumentTrace(Function& f, uint32_t originalArgs) {
    IRBuilder<> b(f.getContext());
    EntryState s = emitEntry(f, b);
    Value* records = argByName(f, kRecordsParam);
    Value* control = argByName(f, kControlParam);
    Value* args = argByName(f, kArgsParam);
    Value* slot = b.CreateMul(s.linearId, b.getInt64(kControlSlotsPerWorkItem));
    Value* firstUnit = b.CreateLoad(b.getInt64Ty(), slotPointer(b, control, slot), "cltrace.first");
    Value* limitWord = b.CreateLoad(b.getInt64Ty(), slotPointer(b, control, b.CreateAdd(slot, b.getInt64(1))),
                                    "cltrace.limitword");
    Value* limit = b.CreateAnd(limitWord, b.getInt64((uint64_t{1} << kControlTagShift) - 1), "cltrace.limit");
    std::map<Loop*, AllocaInst*> counters;
    for (Loop* l : loops_) counters[l] = entryAlloca(f, b.getInt32Ty(), "cltrace.iter");

    emitArgumentAddresses(f, b, s.linearId, args, originalArgs);

    // Loop counters count header executions: -1 on every edge entering the loop, +1 at the
    // top of the header, so the body of iteration k sees k. This needs neither a preheader nor
    // a single latch, so loops with `continue` (several back edges) stay one loop. A counter
    // stops at kMaxIterationCounter (2^32 - 2; -1 is "before the loop"): wrapped to 0 it would
    // read as a loop entered again.
    for (Loop* l : loops_) {
      BasicBlock* header = l->getHeader();
      for (BasicBlock* pred : predecessors(header)) {
        if (l->contains(pred)) continue;
        b.SetInsertPoint(pred->getTerminator());
        b.CreateStore(b.getInt32(~0u), counters[l]);
      }
      b.SetInsertPoint(&*header->getFirstInsertionPt());
      Value* count = b.CreateLoad(b.getInt32Ty(), counters[l]);
      Value* atMost = b.CreateICmpEQ(count, b.getInt32(kMaxIterationCounter));
      b.CreateStore(b.CreateSelect(atMost, count, b.CreateAdd(count, b.getInt32(1))), counters[l]);
    }

    for (size_t i = 0; i < accesses_.size(); ++i)
      emitRecord(b, accesses_[i], packed_[i], s, records, firstUnit, limit, counters);

    for (ReturnInst* ret : returnsOf(f)) {
      b.SetInsertPoint(ret);
      b.CreateStore(b.CreateLoad(b.getInt64Ty(), s.recordCount),
                    slotPointer(b, control, b.CreateAdd(slot, b.getInt64(1))));
    }
    readGeometryFromArguments(f, args, originalArgs);
    printOnlyWhenAsked(f, args, originalArgs);
  }

  // The trace run's printf calls print only when the host's print word says so (record.h).
  void printOnlyWhenAsked(Function& f, Value* args, uint32_t originalArgs) {
    for (CallInst* c : printfCalls(f)) {
      IRBuilder<> b(c);
      Value* print = b.CreateICmpNE(b.CreateLoad(b.getInt64Ty(), slotPointer(b, args, b.getInt64(originalArgs + kPrintSlot))),
                                    b.getInt64(0));
      Instruction* then = SplitBlockAndInsertIfThen(print, c, false);
      BasicBlock* head = cast<Instruction>(print)->getParent();  // branches past the call when 0
      c->moveBefore(then);
      if (!c->use_empty()) {
        IRBuilder<> m(&*then->getParent()->getSingleSuccessor()->getFirstInsertionPt());
        PHINode* phi = m.CreatePHI(c->getType(), 2);
        c->replaceAllUsesWith(phi);
        phi->addIncoming(c, then->getParent());
        phi->addIncoming(ConstantInt::get(c->getType(), 0), head);
      }
    }
  }

  // The host may enqueue the trace run in slices of work-groups (each with its own global
  // offset and size), so every question about the launch's geometry, the kernel's and
  // cltrace's own (get_global_offset, get_global_size, get_num_groups, get_group_id,
  // get_global_linear_id), is answered from the slots the host fills (record.h) instead of the
  // device. get_global_id and get_local_size need no change: a slice's offset keeps global ids.
  void readGeometryFromArguments(Function& f, Value* args, uint32_t originalArgs) {
    static const char* const kOffset = "_Z17get_global_offsetj";
    static const char* const kSize = "_Z15get_global_sizej";
    static const char* const kGroups = "_Z14get_num_groupsj";
    static const char* const kGroupId = "_Z12get_group_idj";
    static const char* const kLinearId = "_Z20get_global_linear_idv";  // OpenCL C 2.0
    auto callsTo = [&](std::initializer_list<StringRef> names) {
      std::vector<CallInst*> calls;
      for (BasicBlock& bb : f)
        for (Instruction& i : bb)
          if (auto* c = dyn_cast<CallInst>(&i))
            if (Function* callee = c->getCalledFunction())
              if (std::find(names.begin(), names.end(), callee->getName()) != names.end()) calls.push_back(c);
      return calls;
    };
    Module& m = *f.getParent();
    // The linear id is cltrace's own formula, whose builtins are answered below.
    for (CallInst* c : callsTo({kLinearId})) {
      IRBuilder<> b(c);
      c->replaceAllUsesWith(b.CreateZExtOrTrunc(emitLinearGlobalId(b, m), c->getType()));
      c->eraseFromParent();
    }
    for (CallInst* c : callsTo({kOffset, kSize, kGroups, kGroupId})) {
      Value* dim = c->getArgOperand(0);
      const auto* constantDim = dyn_cast<ConstantInt>(dim);
      // Past dimension 2 the device answers as it does for the uninstrumented kernel (PoCL
      // says 0 where OpenCL says 1); there is nothing of the launch to emulate.
      if (constantDim && constantDim->getZExtValue() >= 3) continue;
      IRBuilder<> b(c);
      Value* valid = constantDim ? nullptr : b.CreateICmpULT(dim, b.getInt32(3));
      Value* knownDim = valid ? b.CreateSelect(valid, dim, b.getInt32(0)) : dim;  // 0..2
      auto slot = [&](uint32_t firstSlot) {
        Value* index = b.CreateAdd(b.getInt64(originalArgs + firstSlot), b.CreateZExt(knownDim, b.getInt64Ty()));
        return b.CreateLoad(b.getInt64Ty(), slotPointer(b, args, index));
      };
      auto device = [&](StringRef builtinName, Value* d) {
        CallInst* call = b.CreateCall(workItemBuiltin(m, builtinName), {d});
        call->setCallingConv(CallingConv::SPIR_FUNC);
        return call;
      };
      StringRef name = c->getCalledFunction()->getName();
      Value* v = nullptr;
      if (name == kOffset)
        v = slot(kGeometryOffsetSlot);
      else if (name == kSize)
        v = slot(kGeometrySizeSlot);
      else if (name == kGroups)
        v = b.CreateUDiv(slot(kGeometrySizeSlot), device("_Z14get_local_sizej", knownDim));
      else
        v = b.CreateUDiv(b.CreateSub(device("_Z13get_global_idj", knownDim), slot(kGeometryOffsetSlot)),
                         device("_Z14get_local_sizej", knownDim));
      if (valid) v = b.CreateSelect(valid, v, device(name, dim));
      c->replaceAllUsesWith(b.CreateZExtOrTrunc(v, c->getType()));
      c->eraseFromParent();
    }
  }

  // Work-item 0 stores the device address of every global/constant pointer argument.
  void emitArgumentAddresses(Function& f, IRBuilder<>& b, Value* linearId, Value* args,
                             uint32_t originalArgs) {
    std::vector<Argument*> pointers;
    for (uint32_t i = 0; i < originalArgs; ++i) {
      if (isBufferPointer(f.getArg(i)->getType())) pointers.push_back(f.getArg(i));
    }
    if (pointers.empty()) return;
    Instruction* then =
        SplitBlockAndInsertIfThen(b.CreateICmpEQ(linearId, b.getInt64(0)), &*b.GetInsertPoint(), false);
    IRBuilder<> tb(then);
    for (Argument* a : pointers)
      tb.CreateStore(tb.CreatePtrToInt(a, tb.getInt64Ty()),
                     slotPointer(tb, args, tb.getInt64(a->getArgNo())));
    b.SetInsertPoint(&*then->getParent()->getSingleSuccessor()->getFirstInsertionPt());
  }

  // The address the access starts at (its record's, and the count run's bound check).
  Value* addressOf(IRBuilder<>& b, const Access& a) {
    if (!a.pointer) return b.getInt64(0);
    return b.CreatePtrToInt(a.pointer, b.getInt64Ty());
  }

  // Writes the packed record of `a` (packed_record.h) just before the access.
  void emitRecord(IRBuilder<>& b, const Access& a, const PackedShape& shape, const EntryState& s, Value* records,
                  Value* firstUnit, Value* limit, std::map<Loop*, AllocaInst*>& counters) {
    b.SetInsertPoint(a.inst);
    std::vector<Value*> words = {b.getInt32(a.id)};
    if (packedAddressWords(shape) == 1) {
      // The count run checked that the access lies inside this argument's buffer.
      Value* base = b.CreatePtrToInt(a.inst->getFunction()->getArg(shape.bufferArgument), b.getInt64Ty());
      words.push_back(b.CreateTrunc(b.CreateSub(addressOf(b, a), base), b.getInt32Ty()));
    } else if (packedAddressWords(shape) == 2) {
      Value* address = addressOf(b, a);
      words.push_back(b.CreateTrunc(address, b.getInt32Ty()));
      words.push_back(b.CreateTrunc(b.CreateLShr(address, 32), b.getInt32Ty()));
    }
    if (a.dynamicSize) words.push_back(b.CreateZExtOrTrunc(a.dynamicSize, b.getInt32Ty()));
    if (a.fenceFlags) words.push_back(b.CreateZExtOrTrunc(a.fenceFlags, b.getInt32Ty()));
    for (size_t i = 0; i < a.loops.size() && i < kMaxLoopDepth; ++i)
      words.push_back(b.CreateLoad(b.getInt32Ty(), counters[a.loops[i]]));
    const uint32_t units = packedRecordUnits(shape);
    while (words.size() < size_t(units) * kPackedUnitWords) words.push_back(b.getInt32(0));

    Value* current = b.CreateLoad(b.getInt64Ty(), s.recordCount);
    Value* next = b.CreateAdd(current, b.getInt64(units));
    b.CreateStore(next, s.recordCount);
    // A record beyond the counted units goes to the sink at unit 0: no branch around the stores.
    Value* index = b.CreateSelect(b.CreateICmpULE(next, limit), b.CreateAdd(firstUnit, current), b.getInt64(0));
    Value* base = b.CreateInBoundsGEP(b.getInt8Ty(), records, b.CreateMul(index, b.getInt64(kPackedUnitBytes)));
    // Vector stores of up to 16 bytes (units are 8-byte aligned): fewer, wider stores trace faster.
    Value* wordsAt = b.CreateBitCast(base, b.getInt32Ty()->getPointerTo(kGlobalAddressSpace));
    for (uint32_t w = 0; w < words.size();) {
      const uint32_t n = std::min<uint32_t>(words.size() - w, 2 * kPackedUnitWords);
      auto* vec = FixedVectorType::get(b.getInt32Ty(), n);
      Value* v = UndefValue::get(vec);
      for (uint32_t i = 0; i < n; ++i) v = b.CreateInsertElement(v, words[w + i], b.getInt32(i));
      Value* at = b.CreateConstInBoundsGEP1_64(b.getInt32Ty(), wordsAt, w);
      b.CreateAlignedStore(v, b.CreateBitCast(at, PointerType::get(vec, kGlobalAddressSpace)), Align(kPackedUnitBytes));
      w += n;
    }
  }

  Function& kernel_;
  Mode mode_;
  // Kept alive for the Loop pointers below; describes the kernel as it was before changes.
  std::unique_ptr<DominatorTree> dominators_;
  std::unique_ptr<LoopInfo> loopInfo_;
  std::vector<Loop*> loops_;
  LoopContext loopContext_;  // which loop each block and loop runs in for the lanes
  std::vector<Access> accesses_;
  std::vector<PackedShape> packed_;  // per access: how its records are packed
  bool countRunWritesBuffers_ = true;
};

}  // namespace

std::vector<PackedShape> packedShapes(const KernelReport& report) {
  std::vector<PackedShape> shapes;
  for (const AccessInfo& a : report.accesses) shapes.push_back(a.packedShape());
  return shapes;
}

LoopNest loopNest(const KernelReport& report) {
  LoopNest nest;
  nest.parent = report.loopParents;
  for (const AccessInfo& a : report.accesses) nest.innermost.push_back(a.loop);
  return nest;
}

std::vector<InstructionShape> instructionShapes(const KernelReport& report) {
  std::vector<InstructionShape> shapes;
  for (const AccessInfo& a : report.accesses) shapes.push_back(a.shape());
  return shapes;
}

KernelReport analyseKernel(Function& kernel) {
  KernelReport report;
  std::string error;
  if (!KernelInstrumenter(kernel, Mode::Count).analyse(report, error)) report.warnings.push_back(error);
  return report;
}

std::string formatReport(const KernelReport& r) {
  std::string out = "kernel " + r.name + ": " + std::to_string(r.loops) + " loops (max depth " +
                    std::to_string(r.maxDepth) + "), " + std::to_string(r.accesses.size()) + " sites\n";
  for (const AccessInfo& a : r.accesses)
    out += "  [" + std::to_string(a.id) + "] " + accessKindName(a.kind) + " " +
           (a.dynamic == DynamicWord::Size ? std::string("?") : std::to_string(a.size)) +  // as dump says
           "B depth " + std::to_string(a.depth) +
           (a.loop != LoopNest::kNone ? " loop " + std::to_string(a.loop) : std::string()) + (a.flags ? " flags " + std::to_string(a.flags) : "") +
           ": " + a.text + "\n";
  for (const std::string& w : r.warnings) out += "  warning: " + w + "\n";
  return out;
}

bool instrumentModule(Module& m, Mode mode, const std::vector<std::string>& kernels,
                      std::vector<KernelReport>& reports, std::string& error) {
  std::vector<Function*> targets;
  if (kernels.empty()) {
    targets = kernelsOf(m);
  } else {
    for (const std::string& name : kernels) {
      Function* f = m.getFunction(name);
      if (!f || !isKernel(*f)) {
        std::string available;
        for (Function* k : kernelsOf(m)) available += (available.empty() ? "" : ", ") + k->getName().str();
        error = "no kernel named '" + cltrace::printable(name) + "'; kernels in this program: " +
                (available.empty() ? "(none)" : available);
        return false;
      }
      targets.push_back(f);
    }
  }
  for (Function* f : targets) {
    KernelReport report;
    if (!KernelInstrumenter(*f, mode).run(report, error)) return false;
    reports.push_back(std::move(report));
  }
  return true;
}

}  // namespace cltrace::passes
