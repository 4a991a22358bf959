// Pass plugin for opt-15:
//   opt-15 -load-pass-plugin=libCLTracePasses.so -passes='cltrace-prepare,cltrace-count' in.bc
// cltrace-count and cltrace-trace take an optional kernel list: cltrace-trace<kernel=mm>.
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Passes/PassPlugin.h>
#include <llvm/Support/raw_ostream.h>

#include "cltrace/passes/access_enumeration.h"
#include "cltrace/passes/instrument.h"

using namespace llvm;

namespace cltrace::passes {

namespace {

PreservedAnalyses runInstrument(Module& m, Mode mode, const std::vector<std::string>& kernels) {
  std::vector<KernelReport> reports;
  std::string error;
  if (!instrumentModule(m, mode, kernels, reports, error)) {
    m.getContext().emitError("cltrace: " + error);
    return PreservedAnalyses::all();
  }
  for (const KernelReport& r : reports)
    for (const std::string& w : r.warnings) errs() << "cltrace: warning: " << w << "\n";
  return PreservedAnalyses::none();
}

// "cltrace-count<kernel=a;kernel=b>" -> {a, b}; false when the text is not for `pass`.
bool parsePassName(StringRef text, StringRef pass, std::vector<std::string>& kernels) {
  if (!text.consume_front(pass)) return false;
  if (text.empty()) return true;
  if (!text.consume_front("<") || !text.consume_back(">")) return false;
  SmallVector<StringRef, 4> items;
  text.split(items, ';', -1, false);
  for (StringRef item : items) {
    if (!item.consume_front("kernel=")) return false;
    kernels.push_back(item.str());
  }
  return true;
}

}  // namespace

PreservedAnalyses PreparePass::run(Module& m, ModuleAnalysisManager&) {
  std::string error;
  if (!prepareModule(m, error)) m.getContext().emitError("cltrace: " + error);
  return PreservedAnalyses::none();
}

PreservedAnalyses PrintAccessesPass::run(Module& m, ModuleAnalysisManager&) {
  for (Function* f : kernelsOf(m)) outs() << formatReport(analyseKernel(*f));
  return PreservedAnalyses::all();
}

PreservedAnalyses CountPass::run(Module& m, ModuleAnalysisManager&) {
  return runInstrument(m, Mode::Count, kernels);
}

PreservedAnalyses TracePass::run(Module& m, ModuleAnalysisManager&) {
  return runInstrument(m, Mode::Trace, kernels);
}

}  // namespace cltrace::passes

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  using namespace cltrace::passes;
  return {LLVM_PLUGIN_API_VERSION, "cltrace", "0.1.0", [](PassBuilder& pb) {
            pb.registerPipelineParsingCallback(
                [](StringRef name, ModulePassManager& mpm, ArrayRef<PassBuilder::PipelineElement>) {
                  std::vector<std::string> kernels;
                  if (name == "cltrace-prepare") {
                    mpm.addPass(PreparePass());
                    return true;
                  }
                  if (name == "cltrace-print-accesses") {
                    mpm.addPass(PrintAccessesPass());
                    return true;
                  }
                  if (parsePassName(name, "cltrace-count", kernels)) {
                    mpm.addPass(CountPass{{}, kernels});
                    return true;
                  }
                  if (parsePassName(name, "cltrace-trace", kernels)) {
                    mpm.addPass(TracePass{{}, kernels});
                    return true;
                  }
                  return false;
                });
          }};
}
