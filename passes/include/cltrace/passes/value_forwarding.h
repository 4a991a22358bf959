// Loads whose value is already in a register on every way that reaches them (part of prepare).
//
// A GPU compiler's GVN replaces a load of an address whose value it holds on every incoming
// way: stored there, or loaded from there, with nothing in between that may write it. clang's
// -O0 code loads again, and EarlyCSE only sees a value from a block that dominates the load, so
// `c[i] = 0; for (k...) c[i] += a[k]; c[i] /= 3;` would load c[i] on every iteration and after
// the loop, where nvcc loads it never: the value comes round the loop's back edge or meets at a
// join (a phi). Here such a load is replaced by that value, built with phis in place; no block
// is added, split or merged (the loop and barrier analyses depend on the blocks as written).
//
// Same address means a pointer computed the same way (sameComputation) and the same type.
// Anything that may write the address ends what is known (alias analysis: a store to another
// buffer that may be this one, an atomic, a call that may write memory, barriers and fences
// included). An address from a loop's counter (c[k]) is never known round the back edge: the
// value must be known on every way in, and the way into the loop cannot hold a c[k] of a k
// not yet defined (so what one iteration stored is not taken for the next one's c[k]).
//
// A load whose value is known on some ways in is read instead at the end of each block where a
// way without it starts (after the write, or where nothing was read), when that block goes on to
// the load through blocks of one successor, and the address can be computed there: GVN's
// partial-redundancy elimination on the rotated loop, so `for (j...; j < lim[i]; ...) if (v[j])
// out[j] = i;` reads lim[i] before the loop and after the store only. No way reads more.
#pragma once

#include <llvm/IR/PassManager.h>

namespace llvm {
class AAResults;
class BasicBlock;
class DominatorTree;
class Function;
class Instruction;
class Value;
}  // namespace llvm

namespace cltrace::passes {

// Whether `a` and `b` compute the same value the same way: one value, or the same pure
// operation (arithmetic, casts, comparisons, address arithmetic, calls that touch no memory
// such as get_global_id) of operands that are the same in turn. clang's -O0 code computes
// `c[i]` anew at every mention, and where no mention dominates another EarlyCSE leaves them apart.
bool sameComputation(const llvm::Value* a, const llvm::Value* b, unsigned depth = 0);

// `pointer`, or a computation of it the same way, that is available at `end`: the pointer if
// it dominates `end`, else null unless its pure operations can be redone there from values that
// do (checked here, made by materialize, which inserts the copies before `end`).
llvm::Value* pointerAt(llvm::Value* pointer, llvm::Instruction* end, const llvm::DominatorTree& dt,
                       unsigned depth = 0);
llvm::Value* materialize(llvm::Value* pointer, llvm::Instruction* end, const llvm::DominatorTree& dt);

// The predecessors of the block where ways meet at `join`, as a GPU compiler's CFG has it: blocks
// that only go on to another are folded away (SimplifyCFG), so a join that only goes on counts
// the predecessors of where it goes, and each such predecessor counts its own.
unsigned mergedPredecessors(const llvm::BasicBlock& join);

// Returns whether any load was replaced.
bool forwardAvailableValues(llvm::Function& f, llvm::AAResults& aa);

// A store that an if's branch makes over the value its predecessor stored last, to the same
// address (`s[j] = v; if (s[j] <= eps) s[j] = 1.0f;`): one store of the value chosen, where
// the predecessor stored, as a GPU compiler's SimplifyCFG makes of it (the branch's cheap code,
// at most two instructions safe to run either way, moves before the choice; the branch's block
// stays, empty). Returns whether any was merged.
bool mergeConditionalOverwrites(llvm::Function& f);

// ForwardAvailableValuesPass reads a value on an edge out of a block of several ways in a block
// of its own, as GVN's load PRE does; once the reads there have moved on (SimplifyCFG's hoisting
// of what both ways start with, hoistCommonStarts), this removes those blocks left empty.
void removeEmptyEdgeBlocks(llvm::Function& f);

// Both, forwarding first.
struct ForwardAvailableValuesPass : llvm::PassInfoMixin<ForwardAvailableValuesPass> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

}  // namespace cltrace::passes
