// Loads moved across branches as a GPU compiler moves them (part of prepare, after the
// loop-invariant loads are settled; only the guard before a loop, below, adds blocks), and the
// cheap branches it flattens into selects first (before private variables become registers).
//
// - A conditional whose ways only compute or read private variables (`c ? v : w`, v and w
//   loaded before it) is a select, as the GPU compiler's first SimplifyCFG makes it, so that no
//   load is later moved into one of its ways: `v = a[i]; w = b[i]; o[i] = f[i] ? v : w;` reads
//   both a[i] and b[i] (NVPTX: selp), where `r = 0; if (f[i]) r = v;` (a store to r in its way)
//   keeps its branch and reads a[i] only where f[i] is set.
// - Both ways of a branch starting with the same code, loads included (`if (f[i]) x = a[i] * 2;
//   else x = a[i] + 1;`): it is done once, before the branch (SimplifyCFG's hoisting of common
//   code), so a warp whose lanes go both ways reads a[i] in one step, not two.
// - Both ways ending with a store to one address (`if (x > 0) o[i] = x; else o[i] = 0;` after
//   x = a[i]): one store where they meet, of the value each way chose (MergedLoadStoreMotion),
//   so a warp whose lanes go both ways writes o[i] in one step.
// - Ways that end alike, but for operands (`if (f[i]) v = a[i]; else v = b[i];`, or `if (x < 1) {
//   o[y * w + x] = 0; return; } ... o[y * w + x] = g;`): one load or store where they meet,
//   through a phi of what differs (SimplifyCFG's sinking of common code; NVPTX then reads through
//   a selected address), so a warp whose lanes go both ways makes one step, not two.
// - A load whose value only one way of a branch uses (`float v = a[i]; if (f[i]) o[i] = v;`) is
//   made on that way only (NVPTX's MachineSink), so lanes that do not take it read nothing.
// - A load before a loop whose value only the loop's iterations use (`v = a[i]; for (j = 0; j <
//   n; ++j) s += v * j;`) is made only when the loop runs an iteration: a GPU compiler rotates
//   the loop, guarding it with its first test, and sinks the load below that guard.
#pragma once

#include <llvm/Analysis/TargetTransformInfo.h>
#include <llvm/IR/Function.h>
#include <llvm/IR/PassManager.h>

namespace cltrace::passes {

// Replaces each if-then or if-then-else whose ways only compute, with instructions safe to run
// either way (loads of private variables, arithmetic) and worth at most SimplifyCFG's budget
// under `tti`'s costs, and which merges them through at most three phis, by selects in the block
// that branches (SimplifyCFG's folding of two-entry phis, as clang runs it on a function before
// SROA). Loads of __global or __constant memory are not safe to run either way: such a branch
// stays. Returns whether anything changed.
bool foldCheapBranchesToSelects(llvm::Function& f, const llvm::TargetTransformInfo& tti);

// Replaces a phi whose every incoming value is a plain __global or __constant load made in the
// block it comes from, used only by the phi, with nothing after it there that may write memory,
// by one load where they meet through a phi of their addresses (InstCombine's folding of a phi of
// loads, which clang -O2 runs right after SROA): `r = a[i]; if (f[i]) r = b[i];` is one load of
// a[i] or b[i], as NVPTX reads it through a selected address. Returns whether any was folded.
bool loadThroughPhiOfAddresses(llvm::Function& f);

struct LoadThroughPhiOfAddressesPass : llvm::PassInfoMixin<LoadThroughPhiOfAddressesPass> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

// Moves a plain __global or __constant load into the block that holds all its uses (a phi's
// use lies in the block the value comes from) when that block's one predecessor is the load's
// and nothing after the load in its block may write memory, as InstCombine sinks it
// (TryToSinkInstruction) early in clang -O2, before LICM and before the later SimplifyCFG folds
// cheap branches: `v = a[i]; if (f[i] > 0) r = v;` reads a[i] in that way, which so keeps its
// branch. Returns whether any moved.
bool sinkSingleBlockLoads(llvm::Function& f);

struct SinkSingleBlockLoadsPass : llvm::PassInfoMixin<SinkSingleBlockLoadsPass> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

// foldCheapBranchesToSelects with the target's costs, as a pass.
struct FoldCheapBranchesPass : llvm::PassInfoMixin<FoldCheapBranchesPass> {
  llvm::PreservedAnalyses run(llvm::Function& f, llvm::FunctionAnalysisManager& am);
};

// Replaces the stores the two ways of a branch end with, just before going on to the block they
// alone lead to, by one store there when both write one address (one pointer, or address arithmetic of the
// same values, redone there) with a value of one type: a phi of the two values. Returns whether
// any was merged.
bool sinkCommonStores(llvm::Function& f);

// Hoists the instructions both successors of a conditional branch start with, when they are
// identical, read no memory but through plain loads, write none, and each successor has the
// branch's block as its only predecessor. Returns whether anything moved.
bool hoistCommonStarts(llvm::Function& f);

// Replaces the instructions all ways into a block end with, when each way is an unconditional
// branch and the block is no loop header, by one instruction each in that block, as SimplifyCFG
// sinks common code (where other ways come in too, a conditional branch or an empty block, the
// ways that end so get a block of their own first, SimplifyCFG's `.sink.split`): from the end,
// while the instructions are the same operation, each used once (by a phi there, or by what
// follows), loads, stores (not of private variables) and their arithmetic, and each needs at
// most one phi for the operands that differ; only where a load or
// store of __global or __constant memory is among them. Returns whether any was sunk.
bool sinkCommonTails(llvm::Function& f);

// Moves a plain __global or __constant load down into the successor of its block that holds
// every use, when that successor is entered from the load's block alone, lies in the same loop,
// and nothing after the load in its block may write memory; repeated while it goes further. A
// kernel with a barrier inside a branch keeps its loads in place (PoCL counts accesses moved
// there wrongly). Returns whether anything moved.
bool sinkLoadsToUses(llvm::Function& f);

// Moves the plain __global or __constant loads at the end of the block before a loop (nothing
// after them in it may write memory) whose values only the loop's iterations use into a block
// that runs when the loop's first test lets it run, as clang -O2 for NVPTX reads them (a loop
// that runs no iteration reads nothing). Only loops tested at the top by instructions that touch
// no memory, entered from one block; not in a kernel with a barrier inside a branch (as above).
// Returns whether anything moved.
bool loadBeforeLoopsWhenTheyRun(llvm::Function& f);

}  // namespace cltrace::passes
