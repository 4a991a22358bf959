// Adding parameters to an OpenCL kernel and the helpers both passes share to emit code.
#pragma once

#include <llvm/IR/Function.h>
#include <llvm/IR/IRBuilder.h>

#include <string>
#include <vector>

namespace cltrace::passes {

// A __global buffer parameter appended to a kernel.
struct AddedParameter {
  std::string name;      // kernel_arg_name, e.g. "cltrace_counts"
  std::string typeName;  // kernel_arg_type / base_type, e.g. "ulong*"
  llvm::Type* elementType = nullptr;
};

// Replaces `kernel` by a kernel of the same name whose parameters are the old ones followed by
// `added` (all `__global T*`), moves the body over and extends every kernel_arg_* metadata list.
// Returns the new function; `kernel` is erased. Fails (returns null, `error` set) when the
// kernel is called from elsewhere in the module.
llvm::Function* appendKernelParameters(llvm::Function& kernel,
                                       const std::vector<AddedParameter>& added,
                                       std::string& error);

// Emits the linear global id (x fastest, relative to the global offset) at the builder's point.
llvm::Value* emitLinearGlobalId(llvm::IRBuilder<>& b, llvm::Module& m);
// Declares (once) the work-item function `name` (size_t f(uint), e.g. "_Z13get_global_idj").
llvm::FunctionCallee workItemBuiltin(llvm::Module& m, llvm::StringRef name);

// Builds an i64 pointer to slot `index` of a __global ulong buffer.
llvm::Value* slotPointer(llvm::IRBuilder<>& b, llvm::Value* buffer, llvm::Value* index);

// Every `ret` of the function.
std::vector<llvm::ReturnInst*> returnsOf(llvm::Function& f);

}  // namespace cltrace::passes
