#include "cltrace/passes/access_enumeration.h"

#include <llvm/ADT/DenseMap.h>
#include <llvm/ADT/DepthFirstIterator.h>
#include <llvm/ADT/SmallPtrSet.h>
#include <llvm/Analysis/LoopInfo.h>
#include <llvm/Analysis/PostDominators.h>
#include <llvm/IR/CFG.h>
#include <llvm/Analysis/ValueTracking.h>
#include <llvm/IR/CallingConv.h>
#include <llvm/IR/Constants.h>
#include <llvm/IR/DataLayout.h>
#include <llvm/IR/DebugInfoMetadata.h>
#include <llvm/IR/Dominators.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/IntrinsicInst.h>
#include <llvm/Support/raw_ostream.h>

#include <algorithm>
#include <cctype>

using namespace llvm;

namespace cltrace::passes {

StringRef demangledStem(StringRef mangled) {
  if (!mangled.consume_front("_Z")) return "";
  unsigned length = 0;
  if (mangled.consumeInteger(10, length) || length > mangled.size()) return "";
  return mangled.take_front(length);
}

bool isAtomicBuiltin(StringRef name) {
  // _Z10atomic_addPU3AS1Vjj, _Z8atom_incPU3AS1j, _Z14atomic_cmpxchgPU3AS1Vjjj, ...
  StringRef stem = demangledStem(name);
  return stem.startswith("atomic_") || stem.startswith("atom_");
}

const Value* branchCondition(const Instruction* terminator) {
  if (const auto* br = dyn_cast<BranchInst>(terminator)) return br->isConditional() ? br->getCondition() : nullptr;
  if (const auto* sw = dyn_cast<SwitchInst>(terminator)) return sw->getCondition();
  return nullptr;
}

bool runsEveryIteration(const Loop& loop, const BasicBlock* block, const DominatorTree& dt) {
  SmallVector<BasicBlock*, 4> latches;
  loop.getLoopLatches(latches);
  for (const BasicBlock* latch : latches)
    if (!dt.dominates(block, latch)) return false;
  return !latches.empty();
}

StringRef openclObjectOf(const Type* t) {
  auto* pt = dyn_cast<PointerType>(t);
  if (!pt || pt->isOpaque()) return {};
  auto* st = dyn_cast<StructType>(pt->getNonOpaquePointerElementType());
  if (!st || !st->hasName() || !st->getName().startswith("opencl.")) return {};
  return st->getName().drop_front(7);
}

bool isKernel(const Function& f) {
  return !f.isDeclaration() && f.getCallingConv() == CallingConv::SPIR_KERNEL;
}

std::vector<Function*> kernelsOf(Module& m) {
  std::vector<Function*> kernels;
  for (Function& f : m)
    if (isKernel(f)) kernels.push_back(&f);
  return kernels;
}

namespace {

// Reading program-scope data is not a buffer access.
bool isProgramScopeData(const Value* pointer) { return onlyProgramScopeData(pointer); }

unsigned addressSpaceOf(const Value* pointer) {
  return cast<PointerType>(pointer->getType())->getAddressSpace();
}

AccessKind loadKind(const Value* pointer) {
  return addressSpaceOf(pointer) == kConstantAddressSpace ? AccessKind::ConstantLoad
                                                          : AccessKind::Load;
}

uint64_t storeSize(const DataLayout& dl, Type* t) { return dl.getTypeStoreSize(t).getFixedSize(); }

// Element type of a typed pointer (clang-15 for SPIR keeps typed pointers).
Type* pointeeOf(const Value* pointer) {
  auto* pt = cast<PointerType>(pointer->getType());
  return pt->isOpaque() ? nullptr : pt->getNonOpaquePointerElementType();
}


// The math builtins that write a result through a pointer parameter: its index, or -1.
// sincos(x, &c), fract(x, &i), modf(x, &i), frexp(x, &e), lgamma_r(x, &s), remquo(x, y, &q).
int outPointerIndex(StringRef name, size_t args) {
  const StringRef stem = demangledStem(name);
  if (args == 2 && (stem == "sincos" || stem == "fract" || stem == "modf" || stem == "frexp" || stem == "lgamma_r"))
    return 1;
  if (args == 3 && stem == "remquo") return 2;
  return -1;
}

struct Enumerator {
  const DataLayout& dl;
  LoopInfo& loopInfo;
  const LoopContext& context;
  std::vector<Access> out;

  Access& add(Instruction& inst, AccessKind kind, Value* pointer, uint64_t size) {
    Access a;
    a.id = static_cast<uint32_t>(out.size());
    a.inst = &inst;
    a.kind = kind;
    a.pointer = pointer;
    a.staticSize = size;
    for (Loop* l = context.loopFor(inst.getParent(), loopInfo); l; l = context.parentOf(l)) a.loops.push_back(l);
    std::reverse(a.loops.begin(), a.loops.end());
    out.push_back(std::move(a));
    return out.back();
  }

  void addTransfer(Instruction& inst, AccessKind kind, Value* pointer, Value* length) {
    auto* constLength = dyn_cast<ConstantInt>(length);
    Access& a = add(inst, kind, pointer, constLength ? constLength->getZExtValue() : 0);
    if (!constLength) a.dynamicSize = length;
  }

  void addFence(CallInst& call, AccessKind kind, uint8_t extraFlags) {
    Access& a = add(call, kind, nullptr, 0);
    a.flags = extraFlags;
    Value* arg = call.arg_size() > 0 ? call.getArgOperand(0) : nullptr;
    if (auto* c = dyn_cast_or_null<ConstantInt>(arg))
      a.flags |= static_cast<uint8_t>(c->getZExtValue() & (kFenceLocal | kFenceGlobal));
    else if (arg)
      a.fenceFlags = arg;
  }

  void visitCall(CallInst& call) {
    if (auto* mt = dyn_cast<MemTransferInst>(&call)) {
      if (isRecordedSpace(mt->getSourceAddressSpace()) && !isProgramScopeData(mt->getRawSource()))
        addTransfer(call, loadKind(mt->getRawSource()), mt->getRawSource(), mt->getLength());
      if (mt->getDestAddressSpace() == kGlobalAddressSpace)
        addTransfer(call, AccessKind::Store, mt->getRawDest(), mt->getLength());
      return;
    }
    if (auto* ms = dyn_cast<MemSetInst>(&call)) {
      if (ms->getDestAddressSpace() == kGlobalAddressSpace)
        addTransfer(call, AccessKind::Store, ms->getRawDest(), ms->getLength());
      return;
    }
    Function* callee = call.getCalledFunction();
    if (!callee) return;
    StringRef name = callee->getName();
    if (const FenceBuiltin* fence = fenceBuiltin(name)) {
      addFence(call, fence->kind, fence->flags);
    } else if (demangledStem(name) == "atomic_init" && call.arg_size() == 2 &&
               call.getArgOperand(0)->getType()->isPointerTy()) {
      // OpenCL C 2.0's atomic_init is a plain store of the initial value, not an atomic operation.
      Value* p = call.getArgOperand(0);
      if (addressSpaceOf(p) == kGlobalAddressSpace)
        add(call, AccessKind::Store, p, storeSize(dl, call.getArgOperand(1)->getType()));
    } else if (isAtomicBuiltin(name) && call.arg_size() > 0 &&
               call.getArgOperand(0)->getType()->isPointerTy()) {
      Value* p = call.getArgOperand(0);
      if (addressSpaceOf(p) == kGlobalAddressSpace)
        add(call, AccessKind::Atomic, p, pointeeOf(p) ? storeSize(dl, pointeeOf(p)) : 4);
    } else if (int out = outPointerIndex(name, call.arg_size());
               out >= 0 && call.getArgOperand(out)->getType()->isPointerTy()) {
      // The builtin stores its second result (a gentype, or an int per lane) through the pointer.
      Value* p = call.getArgOperand(out);
      if (addressSpaceOf(p) != kGlobalAddressSpace) return;
      uint64_t size = pointeeOf(p) ? storeSize(dl, pointeeOf(p)) : 0;
      if (size == 0) {
        const StringRef stem = demangledStem(name);
        const bool sameType = stem == "sincos" || stem == "fract" || stem == "modf";
        auto* vec = dyn_cast<FixedVectorType>(call.getType());
        size = sameType ? storeSize(dl, call.getType()) : 4 * (vec ? vec->getNumElements() : 1);
      }
      add(call, AccessKind::Store, p, size);
    }
  }

  void visit(Instruction& inst) {
    if (auto* load = dyn_cast<LoadInst>(&inst)) {
      // A load whose value nothing uses (clang's for `(void)a[i]`, or for a vector written whole
      // through a swizzle, v[i].wzyx = x) is one a GPU compiler drops: not recorded.
      if (load->use_empty() && !load->isVolatile()) return;
      Value* p = load->getPointerOperand();
      if (isRecordedSpace(addressSpaceOf(p)) && !isProgramScopeData(p))
        add(inst, loadKind(p), p, storeSize(dl, load->getType()));
    } else if (auto* store = dyn_cast<StoreInst>(&inst)) {
      Value* p = store->getPointerOperand();
      if (addressSpaceOf(p) == kGlobalAddressSpace)
        add(inst, AccessKind::Store, p, storeSize(dl, store->getValueOperand()->getType()));
    } else if (auto* rmw = dyn_cast<AtomicRMWInst>(&inst)) {
      Value* p = rmw->getPointerOperand();
      if (addressSpaceOf(p) == kGlobalAddressSpace)
        add(inst, AccessKind::Atomic, p, storeSize(dl, rmw->getValOperand()->getType()));
    } else if (auto* cas = dyn_cast<AtomicCmpXchgInst>(&inst)) {
      Value* p = cas->getPointerOperand();
      if (addressSpaceOf(p) == kGlobalAddressSpace)
        add(inst, AccessKind::Atomic, p, storeSize(dl, cas->getNewValOperand()->getType()));
    } else if (auto* call = dyn_cast<CallInst>(&inst)) {
      visitCall(*call);
    }
  }
};

// The outermost loop around `in` (`in` included) that does not enclose `loop`: the loop of `in`'s
// that lies on a way out of `loop`.
Loop* outermostApartFrom(Loop* in, const Loop* loop) {
  while (in->getParentLoop() && !in->getParentLoop()->contains(loop)) in = in->getParentLoop();
  return in;
}

// A block laid out among a loop's blocks that runs after the loop (LoopContext::programOrder).
struct LaidOutEarly {
  const BasicBlock* block;
  uint32_t before;  // the layout position it is numbered before
};

// LoopContext::programOrder: layout order, with each block of `early` just before the block at
// its `before` (the latest, where several loops move it), unless it runs on some loop's way out
// after all.
std::vector<BasicBlock*> programOrder(Function& kernel, const DenseMap<const BasicBlock*, uint32_t>& position,
                                      const std::vector<LaidOutEarly>& early, const LoopContext& context) {
  DenseMap<const BasicBlock*, uint32_t> movedBefore;
  for (const LaidOutEarly& e : early) {
    if (context.breakPaths.count(e.block)) continue;
    uint32_t& before = movedBefore[e.block];
    before = std::max(before, e.before);
  }
  std::vector<BasicBlock*> order;
  if (movedBefore.empty()) return order;
  std::vector<std::vector<BasicBlock*>> movedTo(position.size() + 1);
  for (BasicBlock& bb : kernel)
    if (auto it = movedBefore.find(&bb); it != movedBefore.end())
      movedTo[std::min<size_t>(it->second, position.size())].push_back(&bb);
  size_t at = 0;
  for (BasicBlock& bb : kernel) {
    order.insert(order.end(), movedTo[at].begin(), movedTo[at].end());
    ++at;
    if (!movedBefore.count(&bb)) order.push_back(&bb);
  }
  order.insert(order.end(), movedTo.back().begin(), movedTo.back().end());
  return order;
}

}  // namespace

// The blocks on the way out of a loop by a `break` or `return` in its body, before the ways
// meet again, mapped to that loop (the innermost, where loops nest). LoopInfo leaves such a
// block out of the loop (it cannot reach the loop's header), but on a SIMT machine the lanes
// that take it run it in the iteration they leave at, apart from the others (they reconverge
// where the ways meet: the exiting branch's immediate post-dominator): their accesses must
// carry that iteration. The way of a break or return is the body's code laid out outside the
// loop's blocks (the body's `if (...) { ...; break; }`), up to the loop's end block; code laid out
// from there on (or before the loop) follows the loop, whichever exit leads there, and so does
// code the loop's other exits reach. (A `goto` to a label laid out elsewhere is taken for the
// loop's end; docs/scheduler.md.)
// A loop on the way (one that does not enclose this loop) is adopted by it whole, and the way
// goes on after it.
LoopContext loopContext(Function& kernel, LoopInfo& loopInfo, const DominatorTree& dominators) {
  LoopContext context;
  if (loopInfo.empty()) return context;
  PostDominatorTree postDominators(kernel);
  std::vector<Loop*> loops;
  for (Loop* top : loopInfo)
    for (Loop* l : top->getLoopsInPreorder()) loops.push_back(l);  // outer first: inner ones override
  // Blocks are laid out in source order (clang emits them so, and the passes keep it): what a
  // `break` or `return` in a loop's body runs first is laid out among the loop's blocks, where
  // the body has it, and what follows the loop after them. Which block tests the count (the
  // header of a `for`, a do-while's latch, the last block of an `&&` condition, an
  // `if (...) break;` of a `while (1)`) does not matter then.
  DenseMap<const BasicBlock*, uint32_t> position;
  for (const BasicBlock& bb : kernel) position[&bb] = static_cast<uint32_t>(position.size());
  // Blocks the kernel's entry reaches: an unreachable one jumping onto a break's way does not
  // make that way's code reached from elsewhere.
  SmallPtrSet<const BasicBlock*, 32> reachable;
  for (const BasicBlock* b : depth_first(&kernel.getEntryBlock())) reachable.insert(b);
  std::vector<LaidOutEarly> laidOutEarly;
  for (Loop* loop : loops) {
    uint32_t first = UINT32_MAX, last = 0;
    for (const BasicBlock* b : loop->blocks()) {
      first = std::min(first, position.lookup(b));
      last = std::max(last, position.lookup(b));
    }
    // The body's code may be laid out past the loop's last block (a `continue` as that block,
    // then `...; break;`): it runs up to the loop's end block, where the loop's count test goes
    // when it fails. That test is an exit from a block every iteration passes (it dominates each
    // latch), as a break at the top of the body is; the end block comes after all the body's code.
    SmallVector<BasicBlock*, 4> latches;
    loop->getLoopLatches(latches);
    SmallVector<BasicBlock*, 4> exiting;
    loop->getExitingBlocks(exiting);
    // Where the header or a latch leads straight past the loop, that is the end block. Otherwise
    // (a `while (1)`, an `&&` condition) a bare `break;` at the top, a block holding only the
    // jump to the end block, leads to it.
    const auto passesEveryIteration = [&](BasicBlock* e) {
      return std::all_of(latches.begin(), latches.end(), [&](BasicBlock* l) { return dominators.dominates(e, l); });
    };
    const auto countTest = [&](const BasicBlock* e) {
      return e == loop->getHeader() || std::find(latches.begin(), latches.end(), e) != latches.end();
    };
    bool endKnown = false;
    for (BasicBlock* e : exiting)
      for (const BasicBlock* s : successors(e))
        if (!loop->contains(s) && countTest(e) && position.lookup(s) > last) endKnown = true;
    uint32_t end = last;
    for (BasicBlock* e : exiting) {
      if (!passesEveryIteration(e)) continue;
      for (const BasicBlock* s : successors(e)) {
        if (loop->contains(s)) continue;
        if (const BasicBlock* next = s->getSingleSuccessor(); !endKnown && next && s->size() == 1) s = next;
        end = std::max(end, position.lookup(s));
      }
    }
    auto amongTheLoops = [&](const BasicBlock* b) {
      const uint32_t at = position.lookup(b);
      return at > first && at < end;
    };
    // Everything the exits to code after (or before) the loop reach without entering the loop
    // again lies after it.
    SmallPtrSet<const BasicBlock*, 32> afterLoop;
    std::vector<const BasicBlock*> work;
    for (BasicBlock* e : exiting)
      for (const BasicBlock* s : successors(e))
        if (!loop->contains(s) && !amongTheLoops(s) && afterLoop.insert(s).second) work.push_back(s);
    while (!work.empty()) {
      const BasicBlock* b = work.back();
      work.pop_back();
      for (const BasicBlock* s : successors(b))
        if (!loop->contains(s) && afterLoop.insert(s).second) work.push_back(s);
    }
    SmallPtrSet<const BasicBlock*, 16> path;  // the blocks on the ways out by break or return
    SmallPtrSet<Loop*, 4> onPath;             // loops on those ways, whole
    for (BasicBlock* e : exiting) {
      DomTreeNode* node = postDominators.getNode(e);
      DomTreeNode* idom = node ? node->getIDom() : nullptr;
      const BasicBlock* meet = idom ? idom->getBlock() : nullptr;  // null: the ways end apart
      SmallPtrSet<const BasicBlock*, 16> seen;
      for (const BasicBlock* s : successors(e))
        if (!loop->contains(s) && amongTheLoops(s)) work.push_back(s);
      while (!work.empty()) {
        const BasicBlock* b = work.back();
        work.pop_back();
        if (b == meet || !amongTheLoops(b) || loop->contains(b) || afterLoop.count(b) || !seen.insert(b).second)
          continue;
        if (Loop* in = loopInfo.getLoopFor(b); in && !in->contains(loop)) {
          // A loop on the way: the outermost one that does not enclose this loop, whole, then
          // the way on from its exits.
          in = outermostApartFrom(in, loop);
          if (b != in->getHeader() || !onPath.insert(in).second) continue;
          for (const BasicBlock* inside : in->blocks()) path.insert(inside);
          SmallVector<BasicBlock*, 4> exits;
          in->getExitBlocks(exits);
          for (const BasicBlock* x : exits) work.push_back(x);
          continue;
        }
        path.insert(b);
        for (const BasicBlock* next : successors(b)) work.push_back(next);
      }
    }
    // Only blocks that nothing but the loop and these ways leads to: one also reached from before
    // the loop (a `goto fail` there too) or from another loop would run with counters that were
    // never set.
    for (;;) {
      std::vector<const BasicBlock*> outside;  // reached from elsewhere too
      for (const BasicBlock* b : path)
        for (const BasicBlock* p : predecessors(b))
          if (!loop->contains(p) && !path.count(p) && reachable.count(p)) {
            outside.push_back(b);
            break;
          }
      if (outside.empty()) break;
      for (const BasicBlock* b : outside) path.erase(b);
    }
    // The rest of the code laid out among the loop's blocks lies after the loop (where the ways
    // out meet, or a label reached from before the loop too): it is numbered after the loop's
    // code and its ways out, before the end block's (or after the loop's last block).
    // A loop there (one that does not enclose this loop) moves whole, or not at all.
    const uint32_t after = end > last ? end : last + 1;
    SmallPtrSet<const BasicBlock*, 16> early;
    for (const BasicBlock& bb : kernel)
      if (amongTheLoops(&bb) && !loop->contains(&bb) && !path.count(&bb)) early.insert(&bb);
    for (const BasicBlock& bb : kernel) {
      if (!early.count(&bb)) continue;
      if (Loop* in = loopInfo.getLoopFor(&bb); in && !in->contains(loop)) {
        const Loop* top = outermostApartFrom(in, loop);
        if (!std::all_of(top->block_begin(), top->block_end(), [&](const BasicBlock* b) { return early.count(b); }))
          continue;
      }
      laidOutEarly.push_back({&bb, after});
    }
    for (Loop* adopted : onPath)
      if (path.count(adopted->getHeader())) context.adoptedParents[adopted] = loop;
    for (const BasicBlock* b : path) {
      if (const Loop* in = loopInfo.getLoopFor(b); in && !in->contains(loop)) continue;  // in an adopted loop
      // The way out of an adopted loop (found when that loop came first) stays that loop's.
      if (auto known = context.breakPaths.find(b); known != context.breakPaths.end()) {
        const Loop* top = outermostApartFrom(known->second, loop);
        if (top != loop && !top->contains(loop) && onPath.count(top) && path.count(top->getHeader())) continue;
      }
      context.breakPaths[b] = loop;
    }
  }
  context.programOrder = programOrder(kernel, position, laidOutEarly, context);
  return context;
}


const GlobalVariable* programScopeVariable(const Value* pointer) {
  // Every object the pointer may point into: a select or a phi may pick a variable or a buffer.
  SmallVector<const Value*, 4> objects;
  getUnderlyingObjects(pointer, objects);
  for (const Value* o : objects)
    if (const auto* variable = dyn_cast<GlobalVariable>(o)) return variable;
  return nullptr;
}

bool mayReachGlobal(const Value* pointer) {
  const unsigned space = pointer->getType()->getPointerAddressSpace();
  if (space == kGlobalAddressSpace || space == kGenericAddressSpace) return true;
  if (space != 0 /* private */) return false;
  SmallVector<const Value*, 4> objects;
  getUnderlyingObjects(pointer, objects);
  return !std::all_of(objects.begin(), objects.end(), [](const Value* o) { return isa<AllocaInst>(o); });
}

bool onlyProgramScopeData(const Value* pointer) {
  SmallVector<const Value*, 4> objects;
  getUnderlyingObjects(pointer, objects);
  return !objects.empty() && std::all_of(objects.begin(), objects.end(), [](const Value* o) {
    return isa<GlobalVariable>(o);
  });
}

const FenceBuiltin* fenceBuiltin(StringRef mangledName) {
  static const std::pair<const char*, FenceBuiltin> kBuiltins[] = {
      {"_Z7barrierj", {AccessKind::Barrier, 0}},        {"_Z18work_group_barrierj", {AccessKind::Barrier, 0}},
      {"_Z9mem_fencej", {AccessKind::Fence, 0}},        {"_Z14read_mem_fencej", {AccessKind::Fence, kFenceRead}},
      {"_Z15write_mem_fencej", {AccessKind::Fence, kFenceWrite}},
      {"_Z22atomic_work_item_fencej", {AccessKind::Fence, 0}}};  // (flags, order, scope)
  for (const auto& [prefix, builtin] : kBuiltins)
    if (mangledName.startswith(prefix)) return &builtin;
  return nullptr;
}

std::vector<Access> enumerateAccesses(Function& kernel, LoopInfo& loops, const LoopContext& context) {
  Enumerator e{kernel.getParent()->getDataLayout(), loops, context, {}};
  if (context.programOrder.empty()) {
    for (BasicBlock& bb : kernel)
      for (Instruction& inst : bb) e.visit(inst);
  } else {
    for (BasicBlock* bb : context.programOrder)
      for (Instruction& inst : *bb) e.visit(inst);
  }
  return std::move(e.out);
}

std::string sourceLocation(const Instruction& inst) {
  const DILocation* loc = inst.getDebugLoc().get();
  // Code of cltrace's async-copy prelude is inlined where the kernel calls it: that line.
  while (loc && loc->getFilename().startswith("<cltrace") && loc->getInlinedAt()) loc = loc->getInlinedAt();
  if (!loc || loc->getLine() == 0) return "";
  StringRef file = loc->getFilename();
  std::string where;
  if (file != "kernel.cl") {
    std::string path = file.str();
    if (file.consume_front("embedded/")) {
      path = file.str();  // an embedded header, by its name in the program
    } else if (!path.empty() && path[0] != '/' && !loc->getDirectory().empty() && !file.startswith("unit")) {
      // Clang names a header under its working directory relative to it: the whole path,
      // whatever directory cltrace ran in.
      path = (loc->getDirectory() + "/" + path).str();
    }
    where = path + " ";
  }
  where += "line " + std::to_string(loc->getLine());
  if (loc->getColumn() != 0) where += ":" + std::to_string(loc->getColumn());
  return where;
}

std::string describe(const Instruction& inst) {
  std::string text;
  raw_string_ostream os(text);
  inst.print(os);
  os.flush();
  StringRef ir = StringRef(text).trim();
  // Metadata attachments (", !dbg !27") say nothing to a reader and vary with the build options.
  for (;;) {
    const size_t comma = ir.rfind(", !");
    if (comma == StringRef::npos) break;
    StringRef tail = ir.substr(comma + 3);  // "dbg !27"
    StringRef name = tail.take_while([](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; });
    StringRef rest = tail.drop_front(name.size());
    if (name.empty() || !rest.consume_front(" !") || rest.empty() ||
        !std::all_of(rest.begin(), rest.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      break;
    ir = ir.take_front(comma);
  }
  const std::string where = sourceLocation(inst);
  return where.empty() ? ir.str() : where + ": " + ir.str();
}

}  // namespace cltrace::passes
