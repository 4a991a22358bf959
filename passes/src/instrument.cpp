#include "cltrace/passes/instrument.h"

#include <llvm/Analysis/LoopInfo.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/CFG.h>
#include <llvm/IR/Module.h>
#include <llvm/Transforms/Utils/BasicBlockUtils.h>

#include <algorithm>
#include <array>
#include <memory>
#include <map>

#include "cltrace/passes/access_enumeration.h"
#include "cltrace/passes/kernel_rewriter.h"

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
  AllocaInst* recordCount = nullptr;  // i64: records this work-item produced so far
};

// Allocas go first in the entry block (SPIR-V requires all OpVariables there).
AllocaInst* entryAlloca(Function& f, Type* t, const char* name) {
  IRBuilder<> b(&f.getEntryBlock(), f.getEntryBlock().begin());
  return b.CreateAlloca(t, nullptr, name);
}

EntryState emitEntry(Function& f, IRBuilder<>& b) {
  EntryState s;
  b.SetInsertPoint(&*f.getEntryBlock().getFirstInsertionPt());
  s.recordCount = entryAlloca(f, b.getInt64Ty(), "cltrace.n");
  b.CreateStore(b.getInt64(0), s.recordCount);
  s.linearId = emitLinearGlobalId(b, *f.getParent());
  return s;
}

Value* argByName(Function& f, StringRef name) {
  for (Argument& a : f.args())
    if (a.getName() == name) return &a;
  return nullptr;
}

class KernelInstrumenter {
 public:
  KernelInstrumenter(Function& kernel, Mode mode) : kernel_(kernel), mode_(mode) {}

  // Reads the loop structure and the accesses; changes nothing.
  bool analyse(KernelReport& report, std::string&) {
    report.name = kernel_.getName().str();
    report.originalArgs = static_cast<uint32_t>(kernel_.arg_size());
    dominators_ = std::make_unique<DominatorTree>(kernel_);
    loopInfo_ = std::make_unique<LoopInfo>(*dominators_);
    loops_ = allLoops(*loopInfo_);
    accesses_ = enumerateAccesses(kernel_, *loopInfo_);
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
    } else {
      params.push_back({kRecordsParam, "uchar*", Type::getInt8Ty(ctx)});
      params.push_back({kControlParam, "ulong*", Type::getInt64Ty(ctx)});
      params.push_back({kArgsParam, "ulong*", Type::getInt64Ty(ctx)});
    }
    // Instructions survive the move of the body into the new function; the old function's
    // arguments do not, so accesses that use an argument directly are pointed at the new one.
    std::vector<std::vector<std::pair<Value**, unsigned>>> argumentUses(accesses_.size());
    for (size_t i = 0; i < accesses_.size(); ++i)
      for (Value** v : {&accesses_[i].pointer, &accesses_[i].dynamicSize, &accesses_[i].fenceFlags,
                        &accesses_[i].vectorOffset})
        if (auto* a = dyn_cast_or_null<Argument>(*v)) argumentUses[i].push_back({v, a->getArgNo()});
    Function* f = appendKernelParameters(kernel_, params, error);
    if (!f) return nullptr;
    for (auto& uses : argumentUses)
      for (auto [v, argNo] : uses) *v = f->getArg(argNo);
    if (mode_ == Mode::Count)
      instrumentCount(*f);
    else
      instrumentTrace(*f, report.originalArgs);
    return f;
  }

 private:
  void fillReport(KernelReport& report) {
    report.loops = static_cast<uint32_t>(loops_.size());
    for (Loop* l : loops_)
      report.maxDepth = std::max<uint32_t>(report.maxDepth, l->getLoopDepth());
    if (report.maxDepth > kMaxLoopDepth)
      report.warnings.push_back("kernel '" + report.name + "': loops nested " +
                                std::to_string(report.maxDepth) + " deep; records keep the " +
                                std::to_string(kMaxLoopDepth) +
                                " outermost iteration counters and are flagged truncated");
    for (const Access& a : accesses_)
      report.accesses.push_back({a.id, a.kind, a.staticSize, a.flags,
                                 static_cast<uint32_t>(a.loops.size()), describe(*a.inst)});
  }

  void instrumentCount(Function& f) {
    IRBuilder<> b(f.getContext());
    EntryState s = emitEntry(f, b);
    AllocaInst* diag = entryAlloca(f, b.getInt64Ty(), "cltrace.diag");
    b.CreateStore(b.getInt64(0), diag);
    for (const Access& a : accesses_) {
      b.SetInsertPoint(a.inst);
      b.CreateStore(b.CreateAdd(b.CreateLoad(b.getInt64Ty(), s.recordCount), b.getInt64(1)),
                    s.recordCount);
      if (a.loops.size() > kMaxLoopDepth)
        b.CreateStore(b.CreateOr(b.CreateLoad(b.getInt64Ty(), diag),
                                 b.getInt64(kDiagDepthTruncated)),
                      diag);
    }
    Value* counts = argByName(f, kCountsParam);
    for (ReturnInst* ret : returnsOf(f)) {
      b.SetInsertPoint(ret);
      Value* slot = b.CreateMul(s.linearId, b.getInt64(kCountSlotsPerWorkItem));
      b.CreateStore(b.CreateLoad(b.getInt64Ty(), s.recordCount), slotPointer(b, counts, slot));
      b.CreateStore(b.CreateLoad(b.getInt64Ty(), diag),
                    slotPointer(b, counts, b.CreateAdd(slot, b.getInt64(1))));
    }
  }

  void instrumentTrace(Function& f, uint32_t originalArgs) {
    IRBuilder<> b(f.getContext());
    EntryState s = emitEntry(f, b);
    Value* records = argByName(f, kRecordsParam);
    Value* control = argByName(f, kControlParam);
    Value* args = argByName(f, kArgsParam);
    Value* slot = b.CreateMul(s.linearId, b.getInt64(kControlSlotsPerWorkItem));
    Value* firstRecord = b.CreateLoad(b.getInt64Ty(), slotPointer(b, control, slot), "cltrace.first");
    Value* limit = b.CreateLoad(b.getInt64Ty(),
                                slotPointer(b, control, b.CreateAdd(slot, b.getInt64(1))),
                                "cltrace.limit");
    std::map<Loop*, AllocaInst*> counters;
    for (Loop* l : loops_) counters[l] = entryAlloca(f, b.getInt32Ty(), "cltrace.iter");

    emitArgumentAddresses(f, b, s.linearId, args, originalArgs);

    // Loop counters count header executions: -1 on every edge entering the loop, +1 at the
    // top of the header, so the body of iteration k sees k. This needs neither a preheader nor
    // a single latch, so loops with `continue` (several back edges) stay one loop.
    for (Loop* l : loops_) {
      BasicBlock* header = l->getHeader();
      for (BasicBlock* pred : predecessors(header)) {
        if (l->contains(pred)) continue;
        b.SetInsertPoint(pred->getTerminator());
        b.CreateStore(b.getInt32(~0u), counters[l]);
      }
      b.SetInsertPoint(&*header->getFirstInsertionPt());
      b.CreateStore(b.CreateAdd(b.CreateLoad(b.getInt32Ty(), counters[l]), b.getInt32(1)),
                    counters[l]);
    }

    for (const Access& a : accesses_) emitRecord(b, a, s, records, firstRecord, limit, counters);

    for (ReturnInst* ret : returnsOf(f)) {
      b.SetInsertPoint(ret);
      b.CreateStore(b.CreateLoad(b.getInt64Ty(), s.recordCount),
                    slotPointer(b, control, b.CreateAdd(slot, b.getInt64(1))));
    }
  }

  // Work-item 0 stores the device address of every global/constant pointer argument.
  void emitArgumentAddresses(Function& f, IRBuilder<>& b, Value* linearId, Value* args,
                             uint32_t originalArgs) {
    std::vector<Argument*> pointers;
    for (uint32_t i = 0; i < originalArgs; ++i) {
      Argument* a = f.getArg(i);
      if (auto* pt = dyn_cast<PointerType>(a->getType()))
        if (pt->getAddressSpace() == kGlobalAddressSpace ||
            pt->getAddressSpace() == kConstantAddressSpace)
          pointers.push_back(a);
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

  Value* addressOf(IRBuilder<>& b, const Access& a) {
    if (!a.pointer) return b.getInt64(0);
    Value* p = a.pointer;
    if (a.vectorOffset) {
      auto* pt = cast<PointerType>(p->getType());
      Value* elements = b.CreateMul(b.CreateZExtOrTrunc(a.vectorOffset, b.getInt64Ty()),
                                    b.getInt64(a.vectorWidth));
      p = b.CreateGEP(pt->getNonOpaquePointerElementType(), p, elements);
    }
    return b.CreatePtrToInt(p, b.getInt64Ty());
  }

  void emitRecord(IRBuilder<>& b, const Access& a, const EntryState& s, Value* records,
                  Value* firstRecord, Value* limit, std::map<Loop*, AllocaInst*>& counters) {
    b.SetInsertPoint(a.inst);
    // Everything the record needs is computed before the branch, where it dominates.
    Value* address = addressOf(b, a);
    Value* size = a.dynamicSize ? b.CreateZExtOrTrunc(a.dynamicSize, b.getInt32Ty())
                                : b.getInt32(static_cast<uint32_t>(a.staticSize));
    Value* flags = b.getInt8(a.flags);
    if (a.fenceFlags)
      flags = b.CreateOr(b.CreateAnd(b.CreateZExtOrTrunc(a.fenceFlags, b.getInt8Ty()),
                                     b.getInt8(kFenceLocal | kFenceGlobal)),
                         flags);
    if (a.loops.size() > kMaxLoopDepth) flags = b.CreateOr(flags, b.getInt8(kRecordDepthTruncated));
    std::vector<Value*> iterations;
    for (size_t i = 0; i < a.loops.size() && i < kMaxLoopDepth; ++i)
      iterations.push_back(b.CreateLoad(b.getInt32Ty(), counters[a.loops[i]]));

    Value* current = b.CreateLoad(b.getInt64Ty(), s.recordCount);
    Value* inBounds = b.CreateICmpULT(current, limit);
    Instruction* then = SplitBlockAndInsertIfThen(inBounds, a.inst, false);
    b.SetInsertPoint(a.inst);
    b.CreateStore(b.CreateAdd(current, b.getInt64(1)), s.recordCount);

    IRBuilder<> w(then);
    Value* index = w.CreateAdd(firstRecord, current);
    Value* base = w.CreateInBoundsGEP(w.getInt8Ty(), records,
                                      w.CreateMul(index, w.getInt64(sizeof(Record))));
    // The 48-byte record as three 16-byte vector stores (fewer, wider stores trace faster).
    auto* vec4 = FixedVectorType::get(w.getInt32Ty(), 4);
    auto pack = [&](std::array<Value*, 4> lanes) {
      Value* v = UndefValue::get(vec4);
      for (unsigned i = 0; i < 4; ++i) v = w.CreateInsertElement(v, lanes[i], w.getInt32(i));
      return v;
    };
    Value* kindFlagsDepth = w.CreateOr(
        w.CreateOr(w.getInt32(static_cast<uint32_t>(a.kind)),
                   w.CreateShl(w.CreateZExt(flags, w.getInt32Ty()), 8)),
        w.getInt32(static_cast<uint32_t>(std::min<size_t>(a.loops.size(), 255)) << 16));
    auto iteration = [&](uint32_t i) { return i < iterations.size() ? iterations[i] : w.getInt32(0); };
    static_assert(offsetof(Record, kind) == 16 && offsetof(Record, flags) == 17 &&
                  offsetof(Record, depth) == 18 && offsetof(Record, iterations) == 20 &&
                  kMaxLoopDepth == 7, "the packing below follows the record layout");
    std::array<Value*, 3> parts = {
        pack({w.CreateTrunc(address, w.getInt32Ty()), w.CreateTrunc(w.CreateLShr(address, 32), w.getInt32Ty()),
              w.getInt32(a.id), size}),
        pack({kindFlagsDepth, iteration(0), iteration(1), iteration(2)}),
        pack({iteration(3), iteration(4), iteration(5), iteration(6)})};
    Value* vectors = w.CreateBitCast(base, PointerType::get(vec4, kGlobalAddressSpace));
    for (unsigned i = 0; i < 3; ++i)
      w.CreateAlignedStore(parts[i], w.CreateConstInBoundsGEP1_64(vec4, vectors, i), Align(16));
  }

  Function& kernel_;
  Mode mode_;
  // Kept alive for the Loop pointers below; describes the kernel as it was before changes.
  std::unique_ptr<DominatorTree> dominators_;
  std::unique_ptr<LoopInfo> loopInfo_;
  std::vector<Loop*> loops_;
  std::vector<Access> accesses_;
};

}  // namespace

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
    out += "  [" + std::to_string(a.id) + "] " + accessKindName(a.kind) + " " + std::to_string(a.size) +
           "B depth " + std::to_string(a.depth) + (a.flags ? " flags " + std::to_string(a.flags) : "") +
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
        error = "no kernel named '" + name + "'; kernels in this program: " +
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
