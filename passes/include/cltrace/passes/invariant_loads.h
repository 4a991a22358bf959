// Loop-invariant loads, read once per entry into their loop as a GPU compiler's loop-invariant
// code motion reads them (part of prepare).
//
// clang's -O0 code loads `w[0]` or `p->n` again on every iteration of `for (k...) s += w[0] *
// in[k];`; nvcc hoists such a load out of the loop (into the guard of the rotated loop, so a loop
// that runs no iteration reads nothing), and the L1 sees one read per entry, not one hit per
// iteration. Here the load stays where it is but runs only the first time its block runs after
// the loop was entered; later iterations reuse the value. A load qualifies when, for its loop:
//  - it is a plain (not volatile, not atomic) load of __global or __constant memory;
//  - its address is computed from values defined outside the loop (arithmetic, casts, calls
//    that touch no memory, such as get_global_id, and loads that qualify themselves and that
//    the loop does not store to: w[idx[0]]);
//  - its block runs on every iteration (it dominates the loop's latches), or it is in an inner
//    loop that runs in every iteration and whose first iteration runs it: no exit before it, and
//    the inner loop's first test implied by the outer loop's (`for (j < m) for (k < m)`);
//  - nothing in the loop may write __global memory (a store or atomic to __global or generic
//    memory, a fence, or a call that may write memory and is given a pointer to other than
//    private or __local memory, or none: barriers and mem_fence included) — for __constant
//    memory nothing can — but plain stores to the load's own address: later iterations then
//    take the value last stored (`for (i...) y[j] += A[i][j] * x[i];` reads y[j] once, as the
//    GPU compiler's GVN carries it round the rotated loop's back edge, and stores it each time),
//    and plain stores that alias analysis shows never touch the load's address (several
//    accumulators in one loop: `f[2*i] += ..; f[2*i+1] += ..;`, or fields of one struct).
// It is hoisted out of the outermost enclosing loop for which all of this holds. A load of the
// same address just after that loop reads only when the loop did not (`o[i] = c[i];` after
// `for (k...) c[i] += a[k];`).
// A load of what the previous iteration of its loop stored (`c[x] = w[x] + c[x - 1];`) is read
// the same way, once per entry into the loop, later iterations taking the value stored, as a
// GPU compiler's GVN keeps it in a register; and a load of what another load read the previous
// iteration (`s += a[j] * a[j + 1];`), later iterations taking that load's value (conditions at
// Carried).
#pragma once

namespace llvm {
class AAResults;
class Function;
}

namespace cltrace::passes {

// Returns whether any load changed. `aa` must be the alias analysis of `kernel` as it is on entry
// (it is not used once the function changes).
bool loadInvariantsOnce(llvm::Function& kernel, llvm::AAResults& aa);

}  // namespace cltrace::passes
