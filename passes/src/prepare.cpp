// Brings a freshly compiled (-O0) kernel module into the form both passes expect: helper
// functions inlined (so accesses through pointers passed to them are seen) and values in
// registers. loop-simplify is deliberately not run: it splits a loop with several back edges
// (a `continue`) into two nested loops, which would give its accesses a second, spurious
// iteration counter. The trace pass counts iterations at loop headers instead.
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/Scalar/InferAddressSpaces.h>
#include <llvm/Transforms/Utils/Mem2Reg.h>

#include "cltrace/passes/access_enumeration.h"
#include "cltrace/passes/instrument.h"

using namespace llvm;

namespace cltrace::passes {

namespace {

// A call to a function with a body that survived inlining (recursion, indirect calls).
const CallBase* remainingCall(Module& m, const Function*& callee) {
  for (Function& f : m) {
    if (!isKernel(f)) continue;
    for (BasicBlock& bb : f)
      for (Instruction& inst : bb)
        if (auto* call = dyn_cast<CallBase>(&inst)) {
          Function* target = call->getCalledFunction();
          if (call->isInlineAsm()) continue;
          if (!target || !target->isDeclaration()) {
            callee = target;
            return call;
          }
        }
  }
  return nullptr;
}

// OpenCL C 2.0's generic address space (4 in SPIR): pointers that may point anywhere.
constexpr unsigned kGenericAddressSpace = 4;

// A memory access in a kernel through a generic pointer, left after address-space inference.
const Instruction* genericAccess(Module& m) {
  auto generic = [](const Value* p) {
    return p->getType()->isPointerTy() && p->getType()->getPointerAddressSpace() == kGenericAddressSpace;
  };
  for (Function& f : m) {
    if (!isKernel(f)) continue;
    for (BasicBlock& bb : f)
      for (Instruction& inst : bb) {
        if (auto* l = dyn_cast<LoadInst>(&inst); l && generic(l->getPointerOperand())) return &inst;
        if (auto* s = dyn_cast<StoreInst>(&inst); s && generic(s->getPointerOperand())) return &inst;
        if (auto* a = dyn_cast<AtomicRMWInst>(&inst); a && generic(a->getPointerOperand())) return &inst;
        if (auto* a = dyn_cast<AtomicCmpXchgInst>(&inst); a && generic(a->getPointerOperand())) return &inst;
        if (auto* mi = dyn_cast<MemIntrinsic>(&inst); mi && generic(mi->getRawDest())) return &inst;
        if (auto* mt = dyn_cast<MemTransferInst>(&inst); mt && generic(mt->getRawSource())) return &inst;
      }
  }
  return nullptr;
}

}  // namespace

bool prepareModule(Module& m, std::string& error) {
  for (Function& f : m) {
    if (f.isDeclaration() || isKernel(f)) continue;
    f.removeFnAttr(Attribute::NoInline);
    f.removeFnAttr(Attribute::OptimizeNone);
    f.addFnAttr(Attribute::AlwaysInline);
  }

  LoopAnalysisManager lam;
  FunctionAnalysisManager fam;
  CGSCCAnalysisManager cgam;
  ModuleAnalysisManager mam;
  PassBuilder pb;
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);

  ModulePassManager mpm;
  mpm.addPass(AlwaysInlinerPass(/*InsertLifetimeIntrinsics=*/false));
  FunctionPassManager fpm;
  fpm.addPass(PromotePass());
  // OpenCL C 2.0 and later pass pointers to helpers as generic ones: once the helpers are
  // inlined, most point back to a named address space (a kernel's __global parameter, say),
  // and the passes see the access as the global access it is.
  fpm.addPass(InferAddressSpacesPass(kGenericAddressSpace));
  mpm.addPass(createModuleToFunctionPassAdaptor(std::move(fpm)));
  mpm.run(m, mam);

  const Function* callee = nullptr;
  if (const CallBase* call = remainingCall(m, callee)) {
    error = "cannot inline " +
            (callee ? "function '" + callee->getName().str() + "'" : std::string("an indirect call")) +
            " into kernel '" + call->getFunction()->getName().str() +
            "' (recursive or indirect calls are not supported)";
    return false;
  }
  if (const Instruction* access = genericAccess(m)) {
    std::string text;
    raw_string_ostream os(text);
    access->print(os);
    error = "kernel '" + access->getFunction()->getName().str() +
            "' accesses memory through a generic pointer whose address space cannot be told from the code (" +
            StringRef(os.str()).trim().str() +
            "): cltrace cannot know whether it reaches global memory; give the pointer a named address space "
            "(__global, __local)";
    return false;
  }
  // Helpers are now unused; drop them so only kernels remain to be built.
  for (Function& f : make_early_inc_range(m))
    if (!f.isDeclaration() && !isKernel(f) && f.use_empty()) f.eraseFromParent();
  return true;
}

}  // namespace cltrace::passes
