// Brings a freshly compiled (-O0) kernel module into the form both passes expect: helper
// functions inlined (so accesses through pointers passed to them are seen) and values in
// registers. loop-simplify is deliberately not run: it splits a loop with several back edges
// (a `continue`) into two nested loops, which would give its accesses a second, spurious
// iteration counter. The trace pass counts iterations at loop headers instead.
#include <llvm/Analysis/AliasAnalysis.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Transforms/Scalar/DCE.h>
#include <llvm/Transforms/Scalar/EarlyCSE.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/Transforms/IPO/AlwaysInliner.h>
#include <llvm/Transforms/Scalar/InferAddressSpaces.h>
#include <llvm/Transforms/Utils/Local.h>
#include <llvm/Transforms/Scalar/SROA.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Vectorize/VectorCombine.h>

#include <map>

#include "cltrace/passes/access_enumeration.h"
#include "cltrace/passes/block_copies.h"
#include "cltrace/passes/branch_motion.h"
#include "cltrace/passes/component_reads.h"
#include "cltrace/passes/instrument.h"
#include "cltrace/passes/invariant_loads.h"
#include "cltrace/passes/value_forwarding.h"

using namespace llvm;

namespace cltrace::passes {

namespace {

// A kernel may call another kernel as an ordinary function. The callee keeps its kernel calling
// convention, which the inliner will not cross: call a plain copy of it instead.
void callKernelsAsFunctions(Module& m) {
  std::map<Function*, Function*> copies;
  for (Function& f : m)
    for (BasicBlock& bb : f)
      for (Instruction& inst : bb) {
        auto* call = dyn_cast<CallInst>(&inst);
        Function* callee = call ? call->getCalledFunction() : nullptr;
        if (!callee || !isKernel(*callee)) continue;
        Function*& copy = copies[callee];
        if (!copy) {
          ValueToValueMapTy map;
          copy = CloneFunction(callee, map);
          copy->setName(callee->getName() + ".as_function");
          copy->setCallingConv(CallingConv::SPIR_FUNC);
          copy->setLinkage(GlobalValue::InternalLinkage);
          copy->clearMetadata();
        }
        call->setCalledFunction(copy);
        call->setCallingConv(CallingConv::SPIR_FUNC);
      }
}

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
        // A builtin given a generic pointer that useNamedSpaceOverloads could not resolve
        // (sincos into a pointer chosen at run time between global and local memory); the casts
        // to_global/to_local/to_private and get_fence only look at the pointer.
        if (auto* call = dyn_cast<CallInst>(&inst); call && !isa<IntrinsicInst>(call) && call->getCalledFunction() &&
                                                    call->getCalledFunction()->isDeclaration()) {
          const StringRef name = call->getCalledFunction()->getName();
          const StringRef stem = demangledStem(name);
          if (name.startswith("__to_") || stem.startswith("to_") || stem == "get_fence") continue;
          for (const Value* arg : call->args())
            if (generic(arg)) return &inst;
        }
      }
  }
  return nullptr;
}

// The named space a generic pointer argument was cast from, or null.
Value* castFromNamedSpace(Value* arg) {
  Value* named = nullptr;
  if (auto* cast = dyn_cast<AddrSpaceCastInst>(arg)) named = cast->getPointerOperand();
  if (auto* cast = dyn_cast<ConstantExpr>(arg); cast && cast->getOpcode() == Instruction::AddrSpaceCast)
    named = cast->getOperand(0);
  if (!named) return nullptr;
  const unsigned space = named->getType()->getPointerAddressSpace();
  return space <= 3 ? named : nullptr;  // private, global, constant, local
}

// N of a vloadN (2 arguments) or vstoreN (3 arguments) call, or 0 for any other call.
unsigned vectorBuiltinWidth(const CallInst& call, bool& store) {
  const Function* callee = call.getCalledFunction();
  if (!callee || !callee->isDeclaration()) return 0;
  StringRef stem = demangledStem(callee->getName());
  store = stem.consume_front("vstore");
  if (!store && !stem.consume_front("vload")) return 0;
  unsigned n = 0;
  if (stem.consumeInteger(10, n) || !stem.empty() || (n != 2 && n != 3 && n != 4 && n != 8 && n != 16)) return 0;
  if (call.arg_size() != (store ? 3u : 2u)) return 0;
  const Value* vector = store ? call.getArgOperand(0) : &call;
  auto* type = dyn_cast<FixedVectorType>(vector->getType());
  return type && type->getNumElements() == n && call.getArgOperand(store ? 2 : 1)->getType()->isPointerTy() ? n : 0;
}

// The calls of `m` that `matches`, all found before any is rewritten.
template <typename Matches>
std::vector<CallInst*> callsWhere(Module& m, Matches matches) {
  std::vector<CallInst*> calls;
  for (Function& f : m)
    for (BasicBlock& bb : f)
      for (Instruction& i : bb)
        if (auto* call = dyn_cast<CallInst>(&i); call && matches(*call)) calls.push_back(call);
  return calls;
}

// The elements a vector builtin reads or writes: element k at p + offset * stride + k, through
// `p` taken as a pointer to the element. The address arithmetic goes where `b` stands.
class ElementAddresses {
 public:
  ElementAddresses(IRBuilder<>& b, Type* element, Value* p, Value* offset, unsigned stride)
      : b_(b),
        element_(element),
        base_(b.CreatePointerCast(p, PointerType::get(element, p->getType()->getPointerAddressSpace()))),
        first_(b.CreateMul(b.CreateZExtOrTrunc(offset, b.getInt64Ty()), b.getInt64(stride))) {}
  Value* at(unsigned k) const { return b_.CreateGEP(element_, base_, b_.CreateAdd(first_, b_.getInt64(k))); }

 private:
  IRBuilder<>& b_;
  Type* element_;
  Value* base_;
  Value* first_;
};

// vloadN(offset, p) and vstoreN(v, offset, p) as the N loads or stores of one element each at
// p + offset * N + k that a GPU compiler makes of them: OpenCL only requires p to be as aligned
// as its element, and a GPU's vector load needs the vector's alignment (PTX ld.v4: 16 bytes).
// As plain loads and stores, the elements a kernel does not use are dropped, same addresses
// merged and loop invariants hoisted like any other access's.
void expandVectorBuiltins(Module& m) {
  for (CallInst* call : callsWhere(m, [](const CallInst& c) {
         bool store = false;
         return vectorBuiltinWidth(c, store) != 0;
       })) {
    bool store = false;
    const unsigned n = vectorBuiltinWidth(*call, store);
    auto* vectorType = cast<FixedVectorType>(store ? call->getArgOperand(0)->getType() : call->getType());
    Type* element = vectorType->getElementType();
    const Align align(m.getDataLayout().getTypeStoreSize(element));
    IRBuilder<> b(call);  // at the call, with its source line
    const ElementAddresses elements(b, element, call->getArgOperand(store ? 2 : 1),
                                    call->getArgOperand(store ? 1 : 0), n);
    Value* loaded = PoisonValue::get(vectorType);
    for (unsigned k = 0; k < n; ++k) {
      Value* at = elements.at(k);
      if (store)
        b.CreateAlignedStore(b.CreateExtractElement(call->getArgOperand(0), k), at, align);
      else
        loaded = b.CreateInsertElement(loaded, b.CreateAlignedLoad(element, at, align), k);
    }
    if (!store) call->replaceAllUsesWith(loaded);
    call->eraseFromParent();
  }
}

// A half-precision load or store builtin: vload_half[N], vloada_half[N], vstore_half[N][_rM],
// vstorea_half[N][_rM] ("_Z16vstore_half4_rteDv4_fmPU3AS1Dh"). It reads or writes N halves at
// p + offset * stride halves, the stride N except for the aligned 3-vectors (4).
struct HalfBuiltin {
  bool store = false;
  bool aligned = false;  // vloada_halfN / vstorea_halfN: the pointer has the vector's alignment
  unsigned lanes = 0;    // 0: not such a call
  unsigned stride = 0;   // halves per offset step
  StringRef rounding;    // a store's "_rte", "_rtz", "_rtp", "_rtn" or ""
};

HalfBuiltin halfBuiltin(const CallInst& call) {
  HalfBuiltin h;
  const Function* callee = call.getCalledFunction();
  if (!callee || !callee->isDeclaration()) return h;
  StringRef stem = demangledStem(callee->getName());
  bool aligned = false, store = false;
  if (stem.consume_front("vloada_half")) {
    aligned = true;
  } else if (stem.consume_front("vstorea_half")) {
    aligned = store = true;
  } else if (stem.consume_front("vstore_half")) {
    store = true;
  } else if (!stem.consume_front("vload_half")) {
    return h;
  }
  for (StringRef rounding : {"_rte", "_rtz", "_rtp", "_rtn"})
    if (store && stem.consume_back(rounding)) {
      h.rounding = rounding;
      break;
    }
  unsigned n = 1;
  if (!stem.empty() && (stem.consumeInteger(10, n) || !stem.empty())) return h;
  if (n != 1 && n != 2 && n != 3 && n != 4 && n != 8 && n != 16) return h;
  // The shapes the builtins have: (offset, p) -> float[N]; (float[N] or double[N], offset, p).
  if (call.arg_size() != (store ? 3u : 2u)) return h;
  const Value* p = call.getArgOperand(store ? 2 : 1);
  const Value* offset = call.getArgOperand(store ? 1 : 0);
  Type* value = store ? call.getArgOperand(0)->getType() : call.getType();
  auto* vector = dyn_cast<FixedVectorType>(value);
  Type* element = vector ? vector->getElementType() : value;
  const unsigned lanes = vector ? vector->getNumElements() : 1;
  if (!p->getType()->isPointerTy() || !offset->getType()->isIntegerTy() || lanes != n ||
      !(element->isFloatTy() || (store && element->isDoubleTy())))
    return h;
  h.store = store;
  h.aligned = aligned;
  h.lanes = n;
  h.stride = aligned && n == 3 ? 4 : n;
  return h;
}

// `type` (i16 or a vector of them) with `element` in place of i16.
Type* sameShape(Type* type, Type* element) {
  if (auto* v = dyn_cast<FixedVectorType>(type)) return FixedVectorType::get(element, v->getNumElements());
  return element;
}

// The floats that half bit patterns `bits` (i16 or a vector of them) stand for, exactly: IEEE
// binary16 has 5 exponent bits (bias 15) and 10 mantissa bits; every half, subnormals
// included, is a normal float, and infinities and NaNs keep their sign and payload (NaNs quiet).
Value* halfBitsToFloat(IRBuilder<>& b, Value* bits) {
  Type* i32 = sameShape(bits->getType(), b.getInt32Ty());
  Type* f32 = sameShape(bits->getType(), b.getFloatTy());
  auto c = [&](uint32_t v) { return ConstantInt::get(i32, v); };
  Value* h = b.CreateZExt(bits, i32);
  Value* sign = b.CreateShl(b.CreateAnd(h, c(0x8000)), 16);
  Value* exponent = b.CreateAnd(b.CreateLShr(h, 10), c(0x1f));
  Value* mantissa = b.CreateAnd(h, c(0x3ff));
  Value* fraction = b.CreateShl(mantissa, 13);
  Value* normal = b.CreateOr(b.CreateShl(b.CreateAdd(exponent, c(127 - 15)), 23), fraction);
  // A signalling NaN comes out quiet, as IEEE 754 converts it (and the library's vload_half).
  Value* quiet = b.CreateSelect(b.CreateICmpNE(mantissa, c(0)), c(0x400000), c(0));
  Value* infOrNan = b.CreateOr(b.CreateOr(c(0x7f800000), fraction), quiet);
  // Zero and subnormals: mantissa * 2^-24, exact in a float.
  Value* small = b.CreateBitCast(b.CreateFMul(b.CreateUIToFP(mantissa, f32), ConstantFP::get(f32, 0x1p-24)), i32);
  Value* magnitude = b.CreateSelect(b.CreateICmpEQ(exponent, c(0)), small,
                                    b.CreateSelect(b.CreateICmpEQ(exponent, c(0x1f)), infOrNan, normal));
  return b.CreateBitCast(b.CreateOr(sign, magnitude), f32);
}

// The Itanium mangling of a parameter of `type`: f, d, Dv4_f, m (64-bit size_t), j.
std::string mangledType(Type* type) {
  if (auto* v = dyn_cast<FixedVectorType>(type))
    return "Dv" + std::to_string(v->getNumElements()) + "_" + mangledType(v->getElementType());
  if (type->isDoubleTy()) return "d";
  if (type->isFloatTy()) return "f";
  return type->getIntegerBitWidth() == 64 ? "m" : "j";
}

// The half builtins as the loads and stores of halves a GPU compiler makes of them: through a
// pointer to half, which OpenCL only requires to be 2-byte aligned, vload_half4 is four loads of
// 2 bytes; vloada_halfN, whose pointer has the vector's alignment, one load of the vector. As
// plain loads and stores they are recorded, bound-checked, merged and hoisted like any other,
// and the halves a kernel does not use are not read. A load's halves become floats in the IR;
// a store's floats become halves through the builtin itself, on private memory (its rounding
// modes are the library's), whose halves are then stored.
void expandHalfBuiltins(Module& m) {
  LLVMContext& ctx = m.getContext();
  Type* i16 = Type::getInt16Ty(ctx);
  for (CallInst* call : callsWhere(m, [](const CallInst& c) { return halfBuiltin(c).lanes != 0; })) {
    const HalfBuiltin h = halfBuiltin(*call);
    IRBuilder<> b(call);  // at the call, with its source line
    Value* offset = call->getArgOperand(h.store ? 1 : 0);
    Value* p = call->getArgOperand(h.store ? 2 : 1);
    const unsigned space = p->getType()->getPointerAddressSpace();
    // Where half k is; the aligned forms' whole vector as one value.
    const ElementAddresses halves(b, i16, p, offset, h.stride);
    Type* whole = h.lanes == 1 ? i16 : static_cast<Type*>(FixedVectorType::get(i16, h.lanes));
    const Align wholeAlign(h.aligned ? 2 * h.stride : 2);  // the aligned forms' vector's
    auto wholeAt = [&] { return b.CreatePointerCast(halves.at(0), PointerType::get(whole, space)); };
    if (!h.store) {
      Value* value;
      if (h.aligned || h.lanes == 1) {
        value = halfBitsToFloat(b, b.CreateAlignedLoad(whole, wholeAt(), wholeAlign));
      } else {
        value = PoisonValue::get(call->getType());
        for (unsigned k = 0; k < h.lanes; ++k)
          value = b.CreateInsertElement(value, halfBitsToFloat(b, b.CreateAlignedLoad(i16, halves.at(k), Align(2))), k);
      }
      call->replaceAllUsesWith(value);
      call->eraseFromParent();
      continue;
    }
    // The halves, from the same builtin writing private memory (it only writes its argument).
    Function& f = *call->getFunction();
    IRBuilder<> entry(&f.getEntryBlock(), f.getEntryBlock().getFirstInsertionPt());
    AllocaInst* scratch = entry.CreateAlloca(ArrayType::get(i16, h.lanes));
    Value* data = call->getArgOperand(0);
    const std::string name = "vstore_half" + (h.lanes > 1 ? std::to_string(h.lanes) : "") + h.rounding.str();
    const std::string mangled = "_Z" + std::to_string(name.size()) + name + mangledType(data->getType()) +
                                mangledType(offset->getType()) + "PDh";
    Type* privateHalf = PointerType::get(Type::getHalfTy(ctx), 0);
    FunctionCallee convert = m.getOrInsertFunction(
        mangled, FunctionType::get(b.getVoidTy(), {data->getType(), offset->getType(), privateHalf}, false));
    if (auto* g = dyn_cast<Function>(convert.getCallee())) g->setCallingConv(call->getCallingConv());
    CallInst* conversion = b.CreateCall(
        convert, {data, ConstantInt::get(offset->getType(), 0), b.CreatePointerCast(scratch, privateHalf)});
    conversion->setCallingConv(call->getCallingConv());
    for (Attribute::AttrKind kind :
         {Attribute::NoUnwind, Attribute::WillReturn, Attribute::ArgMemOnly, Attribute::WriteOnly})
      conversion->addFnAttr(kind);
    Value* scratchHalves = b.CreatePointerCast(scratch, PointerType::get(i16, 0));
    if (h.aligned || h.lanes == 1) {
      Value* bits = b.CreateLoad(whole, b.CreatePointerCast(scratchHalves, PointerType::get(whole, 0)));
      b.CreateAlignedStore(bits, wholeAt(), wholeAlign);
    } else {
      for (unsigned k = 0; k < h.lanes; ++k)
        b.CreateAlignedStore(b.CreateLoad(i16, b.CreateConstGEP1_64(i16, scratchHalves, k)), halves.at(k), Align(2));
    }
    call->eraseFromParent();
  }
}

// The lanes of vector `v` whose values its users may observe, a bit per lane (all for vectors
// of more than 64 lanes): constant-index extracts take one, shuffles the lanes their own users
// take, an insert at a constant index the lanes its users take but that one; any other use takes
// every lane.
uint64_t observedLanes(const Value* v, unsigned depth = 0) {
  const auto* type = cast<FixedVectorType>(v->getType());
  const unsigned n = type->getNumElements();
  const uint64_t every = n >= 64 ? ~uint64_t(0) : (uint64_t(1) << n) - 1;
  if (n > 64 || depth > 8) return every;
  uint64_t observed = 0;
  for (const Use& use : v->uses()) {
    const User* user = use.getUser();
    if (const auto* extract = dyn_cast<ExtractElementInst>(user)) {
      const auto* index = dyn_cast<ConstantInt>(extract->getIndexOperand());
      if (!index || index->getZExtValue() >= n) return every;
      observed |= uint64_t(1) << index->getZExtValue();
    } else if (const auto* insert = dyn_cast<InsertElementInst>(user); insert && use.getOperandNo() == 0) {
      const auto* index = dyn_cast<ConstantInt>(insert->getOperand(2));
      uint64_t through = observedLanes(insert, depth + 1);
      if (index && index->getZExtValue() < n) through &= ~(uint64_t(1) << index->getZExtValue());
      observed |= through;
    } else if (const auto* shuffle = dyn_cast<ShuffleVectorInst>(user)) {
      const uint64_t taken = observedLanes(shuffle, depth + 1);
      const ArrayRef<int> mask = shuffle->getShuffleMask();
      for (size_t j = 0; j < mask.size(); ++j) {
        const int from = mask[j];
        if (from < 0 || (j < 64 && (taken >> j & 1) == 0)) continue;
        const Value* source = static_cast<unsigned>(from) < n ? shuffle->getOperand(0) : shuffle->getOperand(1);
        if (source == v) observed |= uint64_t(1) << (static_cast<unsigned>(from) % n);
      }
    } else {
      return every;
    }
  }
  return observed;
}

// Inserts of a lane that nothing observes go, as a GPU compiler drops them, so that the element
// loads of a vloadN or vload_halfN whose value reaches the kernel only through swizzles
// (`vload4(i, p).xyz`) are read only for the lanes used. Returns whether anything changed.
bool dropUnobservedInserts(Function& f) {
  bool changed = false;
  for (bool again = true; again;) {
    again = false;
    for (BasicBlock& bb : f)
      for (Instruction& inst : make_early_inc_range(bb)) {
        auto* insert = dyn_cast<InsertElementInst>(&inst);
        const auto* index = insert ? dyn_cast<ConstantInt>(insert->getOperand(2)) : nullptr;
        if (!index || index->getZExtValue() >= 64 || (observedLanes(insert) >> index->getZExtValue() & 1) != 0) continue;
        insert->replaceAllUsesWith(insert->getOperand(0));
        RecursivelyDeleteTriviallyDeadInstructions(insert);
        again = changed = true;
      }
  }
  return changed;
}

}  // namespace

// The generic pointer parameters are the "PU3AS4" qualifiers of the mangled name, in order.
// Another named space's qualifier (U3AS1) takes its place, or none for private ("P" alone), with
// the same substitution candidates: clang's SPIR mangling counts a private pointee as a
// qualified type of its own, written as nothing (sincos(float4, private float4*) is
// _Z6sincosDv4_fPS_, and a float4 parameter after a private float* pointer is S1_, as after a
// generic one), so the substitutions after it keep their numbers.
bool useNamedSpaceOverloads(Module& m) {
  bool changed = false;
  std::vector<Function*> declarations;
  for (Function& f : m)
    if (f.isDeclaration() && f.getName().startswith("_Z")) declarations.push_back(&f);
  for (Function* f : declarations) {
    const std::string name = f->getName().str();
    std::vector<size_t> qualifiers;  // positions of "PU3AS4"
    for (size_t at = name.find("PU3AS4"); at != std::string::npos; at = name.find("PU3AS4", at + 1))
      qualifiers.push_back(at);
    std::vector<unsigned> pointers;  // generic pointer parameters, in order
    for (unsigned i = 0; i < f->arg_size(); ++i)
      if (auto* t = dyn_cast<PointerType>(f->getArg(i)->getType()); t && t->getAddressSpace() == kGenericAddressSpace)
        pointers.push_back(i);
    if (qualifiers.empty() || qualifiers.size() != pointers.size()) continue;
    for (User* user : make_early_inc_range(f->users())) {
      auto* call = dyn_cast<CallInst>(user);
      if (!call || call->getCalledFunction() != f) continue;
      std::vector<Value*> args(call->arg_begin(), call->arg_end());
      std::vector<Type*> params(f->getFunctionType()->param_begin(), f->getFunctionType()->param_end());
      std::string overload;
      size_t from = 0, k = 0;
      for (; k < pointers.size(); ++k) {
        Value* named = castFromNamedSpace(args[pointers[k]]);
        if (!named) break;  // not every generic pointer resolves: the call stays as it is
        const unsigned space = named->getType()->getPointerAddressSpace();
        overload += name.substr(from, qualifiers[k] - from) + (space == 0 ? "P" : "PU3AS" + std::to_string(space));
        from = qualifiers[k] + 6;
        args[pointers[k]] = named;
        params[pointers[k]] = named->getType();
      }
      if (k < pointers.size()) continue;
      overload += name.substr(from);
      FunctionType* type = FunctionType::get(f->getReturnType(), params, f->isVarArg());
      FunctionCallee callee = m.getOrInsertFunction(overload, type, f->getAttributes());
      if (auto* g = dyn_cast<Function>(callee.getCallee())) g->setCallingConv(f->getCallingConv());
      CallInst* replacement = CallInst::Create(callee, args, "", call);
      replacement->setCallingConv(call->getCallingConv());
      replacement->setAttributes(call->getAttributes());
      replacement->setDebugLoc(call->getDebugLoc());  // the source line its accesses are reported at
      replacement->takeName(call);
      call->replaceAllUsesWith(replacement);
      call->eraseFromParent();
      changed = true;
    }
    if (f->use_empty()) f->eraseFromParent();
  }
  return changed;
}

}  // namespace cltrace::passes

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
}

namespace cltrace::passes {

namespace {

// A machine for NVPTX (Fermi, sm_20; the target is part of LLVM 15 as Debian builds it): its cost
// model decides, as in a GPU compiler, which vector loads are split into the components used
// (VectorCombine) and which neighbouring accesses are one (the load-store vectorizer). Should
// it not be made, the passes take LLVM's target-independent costs.
std::unique_ptr<TargetMachine> fermiMachine() {
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  const std::string triple = "nvptx64-nvidia-cuda";
  std::string error;
  const Target* target = TargetRegistry::lookupTarget(triple, error);
  if (!target) return nullptr;
  return std::unique_ptr<TargetMachine>(
      target->createTargetMachine(triple, "sm_20", "", TargetOptions(), None));
}

}  // namespace

bool prepareModule(Module& m, std::string& error) {
  callKernelsAsFunctions(m);
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
  // Made once and never destroyed: destroyed at exit it could outlive LLVM's own statics (opt's
  // llvm_shutdown, a host program's exit with the layer loaded).
  static TargetMachine* const fermi = fermiMachine().release();
  PassBuilder pb(fermi);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);

  expandVectorBuiltins(m);
  expandHalfBuiltins(m);
  ModulePassManager mpm;
  mpm.addPass(AlwaysInlinerPass(/*InsertLifetimeIntrinsics=*/false));
  FunctionPassManager fpm;
  // Conditionals whose ways only compute as selects, before SROA, where clang -O2 makes them
  // (its first SimplifyCFG): no load is then moved into one of their ways below.
  fpm.addPass(FoldCheapBranchesPass());
  // Private variables into registers. SROA rather than mem2reg: clang -O0 keeps a float3 in a
  // <4 x float> view of its alloca, which mem2reg leaves in memory, so every component of a
  // vload3 kept in a variable would count as used.
  fpm.addPass(SROAPass());
  // OpenCL C 2.0 and later pass pointers to helpers as generic ones: once the helpers are
  // inlined, most point back to a named address space (a kernel's __global parameter, say),
  // and the passes see the access as the global access it is.
  fpm.addPass(InferAddressSpacesPass(kGenericAddressSpace));
  // Small block copies and fills as the loads and stores a GPU compiler makes of them, once the
  // pointers' spaces are known.
  fpm.addPass(ExpandSmallMemoryBlocksPass());
  // The private side of those copies into registers too: fields never used are then never
  // loaded, and padding copied from a private struct is an undefined value, not stored.
  fpm.addPass(SROAPass());
  fpm.addPass(DropUndefinedStoresPass());
  // A GPU compiler loads a value once where clang at -O0 loads it at every mention
  // (`(p->x - a) * (p->x - a)`: two loads of p->x), and forwards a stored value to a load of it:
  // the same loads are recorded here, or the L1 would see reads the GPU never makes (each a hit).
  // Only what no store, barrier or call in between may change; the blocks stay as they are.
  fpm.addPass(EarlyCSEPass(/*UseMemorySSA=*/true));
  // A load whose uses are all in one successor entered from its block alone goes there, as
  // InstCombine sinks it; then conditionals whose ways only compute now that private variables
  // are registers are selects, as the later SimplifyCFG of clang -O2 makes them: `t = v[i]; o[i]
  // = f[i] ? t.x : t.w;` reads both components (NVPTX: two ld, selp), while `v = a[i]; if (f[i] >
  // 0) r = v;` keeps its branch, a[i] read on that way.
  fpm.addPass(SinkSingleBlockLoadsPass());
  fpm.addPass(FoldCheapBranchesPass());
  // A value loaded on every way into a join, each way's load its last access, is one load there
  // through a phi of the addresses, as InstCombine makes it next in clang -O2 (before GVN, below,
  // could take one way's load for a later one).
  fpm.addPass(LoadThroughPhiOfAddressesPass());
  // And a value that reaches a load on every way in, round a loop's back edge or through a join
  // (`c[i] = 0; for (...) c[i] += a[k];` loads c[i] never), as a GPU compiler's GVN finds it.
  fpm.addPass(ForwardAvailableValuesPass());
  // What EarlyCSE's folds left unused (the elements of an expanded vloadN no component of which
  // is read) goes, as in a GPU compiler.
  fpm.addPass(DCEPass());
  // A vector read whose components are only extracted (the extracts gathered in its block), with
  // no write in between, as the loads of the components used (`float4 v = p[i]; v.x + v.y + v.z`
  // reads 12 bytes, not 16), where NVPTX's costs say so; the vectorizer then joins neighbours
  // again (.xy one 8-byte load, .z one of 4).
  fpm.addPass(GatherComponentReadsPass());
  fpm.addPass(DCEPass());
  fpm.addPass(VectorCombinePass());
  fpm.addPass(DCEPass());
  // The load-store vectorizer, which leaves the pieces of longer block copies apart.
  fpm.addPass(VectorizeApartFromCopyPiecesPass());
  // What is less aligned than its size, in pieces as NVPTX splits it.
  fpm.addPass(SplitMisalignedAccessesPass());
  // Loads of 3-component vectors, a size no GPU load has, as NVPTX makes them.
  fpm.addPass(SplitThreeComponentLoadsPass());
  mpm.addPass(createModuleToFunctionPassAdaptor(std::move(fpm)));
  mpm.run(m, mam);
  forgetCopyPieces(m);
  for (Function& f : m)
    if (!f.isDeclaration()) dropUnobservedInserts(f);
  // Once the pointers' spaces are known, builtins given one (sincos, atomic_fetch_add) are the
  // named-space calls the passes recognise as accesses.
  useNamedSpaceOverloads(m);
  // A branch on a constant (the latch of a `do { ... } while (1)`) has one way: folded, the way
  // no work-item takes is no loop exit (it would make a break's block, where every lane leaves,
  // look like a break's own way).
  for (Function& f : m)
    if (isKernel(f))
      for (BasicBlock& bb : f) ConstantFoldTerminator(&bb);
  // Loop-invariant loads are read once per entry into their loop, as a GPU compiler hoists them.
  for (Function& f : m)
    if (isKernel(f)) {
      fam.invalidate(f, PreservedAnalyses::none());  // the function changed since the passes ran
      loadInvariantsOnce(f, fam.getResult<AAManager>(f));
      fam.invalidate(f, PreservedAnalyses::none());
      // Then code across branches, as late in a GPU compiler (SimplifyCFG's hoisting and
      // sinking after LICM, MachineSink in code generation): what both ways start with (a load,
      // an index) is done before the branch; a store both ways end with, where they meet, and
      // loads and stores they end with that differ in an operand, through a phi of it; a load only
      // one way uses, on that way.
      hoistCommonStarts(f);
      removeEmptyEdgeBlocks(f);
      sinkCommonStores(f);
      // Ways left only computing once their stores are one are selects (SimplifyCFG again), so
      // no load moves into them below: `if (f[i]) o[i] = t.x + t.y; else o[i] = t.z;` reads t.z
      // on both ways, as NVPTX's selp.
      foldCheapBranchesToSelects(f, fam.getResult<TargetIRAnalysis>(f));
      sinkCommonTails(f);
      sinkLoadsToUses(f);
      // And a load only a loop's iterations use, below the test a rotated loop starts with.
      loadBeforeLoopsWhenTheyRun(f);
    }

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
