// A while loop with break and continue, and a do-while: both found through LoopInfo.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
__kernel void wbc(__global const int* in, __global int* out, int n) {
  size_t g = get_global_id(0);
  int i = 0, acc = 0;
  while (i < n) {
    int v = in[i];
    ++i;
    if (v < 0) continue;
    if (v > 100) break;
    acc += v;
  }
  do {
    acc += in[g];
  } while (acc < 10);
  out[g] = acc;
}

// The while loop with continue stays one loop (two back edges), the do-while is the other;
// its in[g], the same every time round and with nothing written, is read once before it.
// CHECK: kernel wbc: 2 loops (max depth 1), 3 sites
// CHECK-NEXT: [0] load 4B depth 1 loop 0:
// CHECK-NEXT: [1] load 4B depth 0:
// CHECK-NEXT: [2] store 4B depth 0:
