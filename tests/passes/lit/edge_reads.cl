// A value read after an if whose way reads it too: GVN reads it on the edge that skips the if
// (splitting that edge, its load PRE), and SimplifyCFG then makes the two reads one before the
// branch, so every work-item reads it once. Not where GVN cannot follow the address onto the
// edge (an index computed again after the if), nor on a loop's exit. Each kernel's ld.global,
// selp and st.global checked against clang -O2 for nvptx64 (sm_20).
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
// RUN: %opt -passes=cltrace-prepare %t.bc -S -o - | FileCheck %s --check-prefix=IR

// NVPTX: ld f[i], ld a[i], selp, st: one read of a[i] (was a[i] in the if and again after it).
__kernel void used_after(__global const float* a, __global const int* f, __global float* o) {
  int i = get_global_id(0);
  float x = 0.0f;
  if (f[i]) x = a[i] * 2.0f;
  o[i] = x + a[i];
}
// CHECK-LABEL: kernel used_after: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B
// IR-LABEL: define {{.*}} @used_after(
// IR: load i32
// IR: load float
// IR-NOT: br i1
// IR: select i1
// IR-NOT: cltrace.edge
// IR: ret void

// The same in a loop: one read of a[i*n+k] an iteration (NVPTX, unrolled: ld f, ld a, selp).
__kernel void used_after_in_loop(__global const float* a, __global const int* f, __global float* o, int n) {
  int i = get_global_id(0);
  float s = 0.0f, t = 0.0f;
  for (int k = 0; k < n; k++) {
    if (f[i * n + k]) s += a[i * n + k];
    t += a[i * n + k] * 2.0f;
  }
  o[i] = s + t;
}
// CHECK-LABEL: kernel used_after_in_loop: 1 loops (max depth 1), 3 sites
// CHECK-NEXT: [0] load 4B depth 1 loop 0: {{.*}} = load i32
// CHECK-NEXT: [1] load 4B depth 1 loop 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B depth 0

// The index computed again after the if: GVN makes a phi of it and reads after the if (NVPTX:
// ld c[i], st d[i], bra, st c[i+1], ld c[i+1], st d[i+1]).
__kernel void index_after(__global float* c, __global float* d, int n) {
  int i = get_global_id(0);
  d[i] = c[i];
  if (n > 2) c[i + 1] = 2.0f;
  d[i + 1] = c[i + 1];
}
// CHECK-LABEL: kernel index_after: 0 loops (max depth 0), 5 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] store 4B
// CHECK-NEXT: [2] store 4B depth 0: store float 2.000000e+00
// CHECK-NEXT: [3] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [4] store 4B

// A read after a loop left by break or by its test: read after the loop on both ways (NVPTX: ld
// in the loop, ld after it), not taken from the loop's read on the break.
__kernel void after_break(__global const float* a, __global float* o, int n) {
  int i = get_global_id(0);
  int k = 0;
  for (; k < n; k++)
    if (a[i * n + k] < 0.0f) break;
  o[i] = a[i * n + k];
}
// CHECK-LABEL: kernel after_break: 1 loops (max depth 1), 3 sites
// CHECK-NEXT: [0] load 4B depth 1 loop 0: {{.*}} = load float
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B depth 0
