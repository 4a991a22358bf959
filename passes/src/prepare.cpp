// Brings a freshly compiled (-O0) kernel module into the form both passes expect: helper
// functions inlined (so accesses through pointers passed to them are seen) and values in
// registers. loop-simplify is deliberately not run: it splits a loop with several back edges
// (a `continue`) into two nested loops, which would give its accesses a second, spurious
// iteration counter. The trace pass counts iterations at loop headers instead.
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
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
  // Helpers are now unused; drop them so only kernels remain to be built.
  for (Function& f : make_early_inc_range(m))
    if (!f.isDeclaration() && !isKernel(f) && f.use_empty()) f.eraseFromParent();
  return true;
}

}  // namespace cltrace::passes
