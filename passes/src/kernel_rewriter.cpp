#include "cltrace/passes/kernel_rewriter.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Metadata.h>
#include <llvm/IR/Module.h>

#include "cltrace/passes/access_enumeration.h"

using namespace llvm;

namespace cltrace::passes {

namespace {

// kernel_arg_* metadata lists and the entry each added parameter gets in them.
MDNode* extendedList(LLVMContext& ctx, MDNode* old, StringRef kind, const AddedParameter& p) {
  SmallVector<Metadata*, 16> items(old->op_begin(), old->op_end());
  if (kind == "kernel_arg_addr_space")
    items.push_back(ConstantAsMetadata::get(
        ConstantInt::get(Type::getInt32Ty(ctx), kGlobalAddressSpace)));
  else if (kind == "kernel_arg_access_qual")
    items.push_back(MDString::get(ctx, "none"));
  else if (kind == "kernel_arg_type" || kind == "kernel_arg_base_type")
    items.push_back(MDString::get(ctx, p.typeName));
  else if (kind == "kernel_arg_type_qual")
    items.push_back(MDString::get(ctx, ""));
  else if (kind == "kernel_arg_name")
    items.push_back(MDString::get(ctx, p.name));
  else
    return nullptr;
  return MDNode::get(ctx, items);
}

}  // namespace

Function* appendKernelParameters(Function& kernel, const std::vector<AddedParameter>& added,
                                 std::string& error) {
  if (!kernel.use_empty()) {
    error = "kernel '" + kernel.getName().str() +
            "' is called from another function; cltrace cannot add parameters to it";
    return nullptr;
  }
  LLVMContext& ctx = kernel.getContext();
  FunctionType* oldType = kernel.getFunctionType();
  SmallVector<Type*, 16> params(oldType->param_begin(), oldType->param_end());
  for (const AddedParameter& p : added)
    params.push_back(PointerType::get(p.elementType, kGlobalAddressSpace));
  auto* newType = FunctionType::get(oldType->getReturnType(), params, oldType->isVarArg());

  std::string name = kernel.getName().str();
  kernel.setName(name + ".cltrace.old");
  Function* nf = Function::Create(newType, kernel.getLinkage(), kernel.getAddressSpace(), name,
                                  kernel.getParent());
  nf->copyAttributesFrom(&kernel);
  nf->setCallingConv(kernel.getCallingConv());
  nf->setComdat(kernel.getComdat());
  nf->setSubprogram(kernel.getSubprogram());

  // Metadata: copy, extending kernel_arg_* lists by one entry per added parameter.
  SmallVector<std::pair<unsigned, MDNode*>, 8> mds;
  kernel.getAllMetadata(mds);
  SmallVector<StringRef, 32> names;
  ctx.getMDKindNames(names);
  for (auto& [kindId, node] : mds) {
    StringRef kind = kindId < names.size() ? names[kindId] : StringRef();
    MDNode* md = node;
    if (kind.startswith("kernel_arg_")) {
      for (const AddedParameter& p : added)
        if (MDNode* ext = extendedList(ctx, md, kind, p)) md = ext;
    }
    nf->setMetadata(kindId, md);
  }

  nf->getBasicBlockList().splice(nf->begin(), kernel.getBasicBlockList());
  auto newArg = nf->arg_begin();
  for (Argument& oldArg : kernel.args()) {
    newArg->setName(oldArg.getName());
    oldArg.replaceAllUsesWith(&*newArg);
    ++newArg;
  }
  for (const AddedParameter& p : added) (newArg++)->setName(p.name);
  // Parameter attributes of the original parameters stay with them.
  for (unsigned i = 0; i < oldType->getNumParams(); ++i)
    nf->addParamAttrs(i, AttrBuilder(ctx, kernel.getAttributes().getParamAttrs(i)));
  // The added buffers are cltrace's own, reached through no other parameter: saying so lets the
  // device's compiler keep their loads (the launch geometry, the bounds) out of its work-item
  // loop and the kernel's loads across the stores to them.
  for (unsigned i = oldType->getNumParams(); i < newType->getNumParams(); ++i)
    nf->addParamAttr(i, Attribute::NoAlias);
  kernel.eraseFromParent();
  return nf;
}

FunctionCallee workItemBuiltin(Module& m, StringRef name) {
  LLVMContext& ctx = m.getContext();
  auto* type = FunctionType::get(Type::getInt64Ty(ctx), {Type::getInt32Ty(ctx)}, false);
  FunctionCallee callee = m.getOrInsertFunction(name, type);
  if (auto* f = dyn_cast<Function>(callee.getCallee())) {
    f->setCallingConv(CallingConv::SPIR_FUNC);
    f->addFnAttr(Attribute::NoUnwind);
    f->addFnAttr(Attribute::ReadNone);
  }
  return callee;
}

Value* emitLinearGlobalId(IRBuilder<>& b, Module& m) {
  FunctionCallee globalId = workItemBuiltin(m, "_Z13get_global_idj");
  FunctionCallee globalSize = workItemBuiltin(m, "_Z15get_global_sizej");
  FunctionCallee globalOffset = workItemBuiltin(m, "_Z17get_global_offsetj");
  auto call = [&](FunctionCallee f, unsigned dim) {
    CallInst* c = b.CreateCall(f, {b.getInt32(dim)});
    c->setCallingConv(CallingConv::SPIR_FUNC);
    return c;
  };
  auto local = [&](unsigned dim) { return b.CreateSub(call(globalId, dim), call(globalOffset, dim)); };
  // ((z * Gy) + y) * Gx + x
  Value* id = local(2);
  id = b.CreateAdd(b.CreateMul(id, call(globalSize, 1)), local(1));
  id = b.CreateAdd(b.CreateMul(id, call(globalSize, 0)), local(0), "cltrace.linear_id");
  return id;
}

Value* slotPointer(IRBuilder<>& b, Value* buffer, Value* index) {
  return b.CreateInBoundsGEP(b.getInt64Ty(), buffer, index);
}

std::vector<ReturnInst*> returnsOf(Function& f) {
  std::vector<ReturnInst*> rets;
  for (BasicBlock& bb : f)
    if (auto* r = dyn_cast<ReturnInst>(bb.getTerminator())) rets.push_back(r);
  return rets;
}

}  // namespace cltrace::passes
