// Accesses on the way out of a loop by `break` or `return`, before the ways meet again, carry
// the loop's iteration (SIMT lanes run them in the iteration they leave at); code after the
// loop does not, nor does a break path that every way of the loop goes through.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
__kernel void brk(__global int* a, int n) {
  size_t i = get_global_id(0);
  for (int j = 0; j < n; j++) {
    a[i] = j;
    if (j == (int)(i % 4)) {
      a[i] = 99;
      break;
    }
  }
  a[i + 64] = 1;
}

// CHECK: kernel brk: 1 loops (max depth 1), 3 sites
// CHECK-NEXT: [0] store 4B depth 1 loop 0:
// CHECK-NEXT: [1] store 4B depth 1 loop 0: {{.*}}store i32 99
// CHECK-NEXT: [2] store 4B depth 0:

__kernel void ret(__global int* a, int n) {
  size_t i = get_global_id(0);
  for (int j = 0; j < n; j++) {
    for (int k = 0; k < n; k++) {
      if (a[k] == (int)i) {
        a[i] = 7;
        return;
      }
    }
    a[i] += j;
  }
  a[i + 64] = 1;
}

// The return leaves both loops from the inner one: its store carries both counters.
// CHECK: kernel ret: 2 loops (max depth 2), 5 sites
// CHECK-NEXT: [0] load 4B depth 2 loop 1:
// CHECK-NEXT: [1] store 4B depth 2 loop 1: {{.*}}store i32 7
// CHECK-NEXT: [2] load 4B depth 1 loop 0:
// CHECK-NEXT: [3] store 4B depth 1 loop 0:
// CHECK-NEXT: [4] store 4B depth 0:

__kernel void only_exit(__global int* a) {
  size_t i = get_global_id(0);
  int j = 0;
  while (1) {
    if (a[j] == (int)i) {
      a[i] = 5;
      break;
    }
    j++;
  }
  a[i + 64] = j;
}

// Every way out of the loop goes through the break: lanes meet there, so it is after the loop.
// CHECK: kernel only_exit: 1 loops (max depth 1), 3 sites
// CHECK-NEXT: [0] load 4B depth 1 loop 0:
// CHECK-NEXT: [1] store 4B depth 0: {{.*}}store i32 5
// CHECK-NEXT: [2] store 4B depth 0:

// A block that a `goto` reaches from before the loop too, or that two loops both leave for,
// runs with no counter set on some ways: it stays after the loops.
__kernel void pre(__global int* a) {
  size_t i = get_global_id(0);
  if (i % 4 == 3) goto fail;
  for (int j = 0; j < 4; j++) {
    a[i] = j;
    if (j == (int)(i % 4)) goto fail;
  }
  a[i + 64] = 0;
  return;
fail:
  a[i + 96] = -1;
}

// The two stores the ways into the function's end finish with are one there, through a chosen
// address (SimplifyCFG's sinking, as in NVPTX's code).
// CHECK: kernel pre: 1 loops (max depth 1), 2 sites
// CHECK-NEXT: [0] store 4B depth 1 loop 0:
// CHECK-NEXT: [1] store 4B depth 0: {{.*}}store i32 %.sunk

__kernel void sib(__global int* a) {
  size_t i = get_global_id(0);
  for (int j = 0; j < 4; j++) {
    a[i] = j;
    if (j == (int)(i % 8)) goto X;
  }
  for (int k = 0; k < 4; k++) {
    a[i + 32] = k;
    if (k + 4 == (int)(i % 8)) goto X;
  }
  a[i + 64] = 0;
  return;
X:
  a[i + 96] = 5;
}

// CHECK: kernel sib: 2 loops (max depth 1), 3 sites
// CHECK-NEXT: [0] store 4B depth 1 loop 0:
// CHECK-NEXT: [1] store 4B depth 1 loop 1:
// CHECK-NEXT: [2] store 4B depth 0: {{.*}}store i32 %.sunk

// A do-while tests its count at the bottom (its latch exits): a break in the body's first block
// (the loop's header) is a break, not the loop's end, and its store carries the iteration.
__kernel void dw(__global int* a) {
  int i = get_global_id(0);
  int j = 0;
  do {
    if (j == i % 4) {
      a[i] = 99;
      break;
    }
    a[i + 32] = j;
    j++;
  } while (j < 4);
  a[i + 64] = 1;
}

// CHECK: kernel dw: 1 loops (max depth 1), 3 sites
// CHECK-NEXT: [0] store 4B depth 1 loop 0: {{.*}}store i32 99
// CHECK-NEXT: [1] store 4B depth 1 loop 0:
// CHECK-NEXT: [2] store 4B depth 0:

// for (;;) with its only exit in its first block: every lane leaves through the break, so the
// lanes meet there and it is after the loop: numbered after the loop's store, though laid out
// before it.
__kernel void forever(__global int* a) {
  int i = get_global_id(0);
  int j = 0;
  for (;;) {
    if (j == i % 4) {
      a[i] = 99;
      break;
    }
    a[i + 32] = j;
    j++;
  }
  a[i + 64] = 1;
}

// CHECK: kernel forever: 1 loops (max depth 1), 3 sites
// CHECK-NEXT: [0] store 4B depth 1 loop 0:
// CHECK-NEXT: [1] store 4B depth 0: {{.*}}store i32 99
// CHECK-NEXT: [2] store 4B depth 0: {{.*}}store i32 1,

// A loop on a break's way nests in the loop it leaves (its accesses carry both counters), and
// the way goes on after it (the store of 7 carries the outer counter too).
__kernel void inner(__global int* a) {
  int i = get_global_id(0);
  for (int j = 0; j < 4; j++) {
    a[i] = j;
    if (j == i % 4) {
      for (int k = 0; k < 2; k++) a[i + 32 * (k + 1)] = k;
      a[i + 96] = 7;
      break;
    }
  }
  a[i + 128] = 1;
}

// CHECK: kernel inner: 2 loops (max depth 2), 4 sites
// CHECK-NEXT: [0] store 4B depth 1 loop 0:
// CHECK-NEXT: [1] store 4B depth 2 loop 1:
// CHECK-NEXT: [2] store 4B depth 1 loop 0: {{.*}}store i32 7
// CHECK-NEXT: [3] store 4B depth 0:

// A short-circuit condition ends the loop from a block that is neither header nor latch (the
// `&&`'s last block); it leads to what follows the loop, laid out after it, so it is the loop's
// end and the store after the loop is after it, even though a `return` in the body means the
// ways meet only at the function's end.
__kernel void andcond(__global int* a, int never) {
  int l = get_local_id(0);
  for (int i = 0; i < 3 && i <= l % 4; ++i) {
    a[l + 32 * i] = i;
    if (i == never) {
      a[l] = 7;
      return;
    }
  }
  a[l + 128] = 1;
}

// The return's store and the one after the loop, both ending ways into the function's end, are
// one store there, through a chosen address, as in NVPTX's code (SimplifyCFG's sinking).
// CHECK: kernel andcond: 1 loops (max depth 1), 2 sites
// CHECK-NEXT: [0] store 4B depth 1 loop 0:
// CHECK-NEXT: [1] store 4B depth 0: {{.*}}store i32 %.sunk

// With ends that differ (`+=` after the loop), the return's store stays on its way and carries
// the iteration.
__kernel void andcond_apart(__global int* a, int never) {
  int l = get_local_id(0);
  for (int i = 0; i < 3 && i <= l % 4; ++i) {
    a[l + 32 * i] = i;
    if (i == never) {
      a[l] = 7;
      return;
    }
  }
  a[l + 128] += 1;
}

// CHECK: kernel andcond_apart: 1 loops (max depth 1), 4 sites
// CHECK-NEXT: [0] store 4B depth 1 loop 0:
// CHECK-NEXT: [1] store 4B depth 1 loop 0: {{.*}}store i32 7
// CHECK-NEXT: [2] load 4B depth 0:
// CHECK-NEXT: [3] store 4B depth 0:

// A while (1) ended by `if (...) break;` at its top, with a return in its body: the break leads
// to code laid out after the loop, which stays after it (the ways meet only at the function's
// end, and the code after the loop was taken into the break's way).
__kernel void while_return(__global int* a, int never) {
  int i = get_local_id(0);
  int j = 0;
  while (1) {
    if (j >= i % 4 + 1) break;
    a[i + 32 * j] = 1;
    if (j == never) {
      a[i + 160] = 9;
      return;
    }
    j++;
  }
  a[i + 256] = 3;
}

// (The return's store and the last one are one where the ways meet, as above.)
// CHECK: kernel while_return: 1 loops (max depth 1), 2 sites
// CHECK-NEXT: [0] store 4B depth 1 loop 0:
// CHECK-NEXT: [1] store 4B depth 0: {{.*}}store i32 %.sunk

// A break's way that only unreachable code also jumps to is still the break's way.
__kernel void unreachable_jump(__global int* a) {
  int i = get_local_id(0);
  for (int j = 0; j < 4; j++) {
    a[i + 32 * j] = 1;
    if (j == i % 4) {
    target:
      a[i + 160] = 9;
      break;
    }
  }
  a[i + 256] = 3;
  return;
unused:
  a[i + 300] = 4;
  goto target;
}

// CHECK: kernel unreachable_jump: 1 loops (max depth 1), 4 sites
// CHECK-NEXT: [0] store 4B depth 1 loop 0:
// CHECK-NEXT: [1] store 4B depth 1 loop 0: {{.*}}store i32 9
// CHECK-NEXT: [2] store 4B depth 0: {{.*}}store i32 3

// A retry loop whose last block is a `continue`: the body's code after it (up to the break) is
// laid out past the loop's last block but before its end block, and is the break's way.
__kernel void retry(__global int* a, int n) {
  int i = get_local_id(0);
  int j = 0;
  while (j < n) {
    a[i + 32 * j] = 1;
    if (j < i % 4) {
      j++;
      continue;
    }
    a[i + 512] = j;
    break;
  }
  a[i + 768] = 3;
}

// CHECK: kernel retry: 1 loops (max depth 1), 3 sites
// CHECK-NEXT: [0] store 4B depth 1 loop 0:
// CHECK-NEXT: [1] store 4B depth 1 loop 0:
// CHECK-NEXT: [2] store 4B depth 0: {{.*}}store i32 3

// The way out of a loop that lies on another loop's way out stays the inner loop's.
__kernel void adopted_break(__global int* a) {
  int i = get_local_id(0);
  for (int j = 0; j < 4; j++) {
    a[i + 32 * j] = 1;
    if (j == i % 4) {
      for (int t = 0; t < 3; t++) {
        a[i + 600 + 32 * t] = t;
        if (t == (i / 4) % 3) {
          a[i + 300 + 32 * t] = t;
          break;
        }
      }
      a[i + 900] = j;
      break;
    }
  }
  a[i + 960] = 5;
}

// CHECK: kernel adopted_break: 2 loops (max depth 2), 5 sites
// CHECK-NEXT: [0] store 4B depth 1 loop 0:
// CHECK-NEXT: [1] store 4B depth 2 loop 1:
// CHECK-NEXT: [2] store 4B depth 2 loop 1:
// CHECK-NEXT: [3] store 4B depth 1 loop 0:
// CHECK-NEXT: [4] store 4B depth 0: {{.*}}store i32 5
