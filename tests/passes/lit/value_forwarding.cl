// A load whose value is known on every way that reaches it (stored there or loaded from there,
// nothing in between that may write it) is that value, carried round a loop's back edge or met
// at a join, as a GPU compiler's GVN finds it: c[i] is loaded by none of the first four
// kernels. A write that may be to the same address (another buffer, a barrier) or a way in
// without the value keeps the load.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s

__kernel void round_the_loop(__global const float* a, __global float* c, int n) {
  int i = get_global_id(0);
  c[i] = 0.0f;
  for (int k = 0; k < n; k++) c[i] += a[k];
  c[i] /= 3.0f;
}
// The one load is a[k].
// CHECK-LABEL: kernel round_the_loop: 1 loops (max depth 1), 4 sites
// CHECK-NEXT: [0] store 4B depth 0: store float 0.000000e+00, float addrspace(1)* [[C:%[0-9]+]]
// CHECK-NEXT: [1] load 4B depth 1 loop 0: {{.*}} = load float, float addrspace(1)* %{{[0-9]+}}
// CHECK-NEXT: [2] store 4B depth 1 loop 0: store float %{{[0-9]+}}, float addrspace(1)* [[C]]
// CHECK-NEXT: [3] store 4B depth 0: store float %{{[0-9]+}}, float addrspace(1)* [[C]]

__kernel void after_branch(__global const float* a, __global float* c, int n) {
  int i = get_global_id(0);
  if (n > 2)
    c[i] = a[i];
  else
    c[i] = 1.0f;
  c[i] *= 3.0f;
}
// The one load is a[i]; c[i] is not read. The stores both ways end with are one where they meet,
// of the value each chose (branch_motion; the index both ways start with computed before the
// branch), then the store of c[i] * 3.
// CHECK-LABEL: kernel after_branch: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: [[A:%[0-9]+]] = load float
// CHECK-NEXT: [1] store 4B depth 0: store float %cltrace.stored, float addrspace(1)*
// CHECK-NEXT: [2] store 4B depth 0: store float

// A value loaded on both ways, or loaded before a loop that only reads.
__kernel void loaded_before(__global const float* a, __global float* d, int n) {
  int i = get_global_id(0);
  float s = 0;
  if (n > 2)
    s = a[i] * 2.0f;
  else
    s = a[i] + 1.0f;
  for (int k = 0; k < n; k++) s += a[k];
  d[i] = s + a[i];
}
// The a[i] both ways start with, one load before the branch (branch_motion), and a[k]; the last
// a[i] is no load.
// CHECK-LABEL: kernel loaded_before: 1 loops (max depth 1), 3 sites
// CHECK-NEXT: [0] load 4B depth 0:
// CHECK-NEXT: [1] load 4B depth 1 loop 0:
// CHECK-NEXT: [2] store 4B depth 0:

// A store to another buffer (which may be c) in the loop, a barrier, a way in that has no value.
__kernel void kept(__global const float* a, __global float* c, __global float* d, int n) {
  int i = get_global_id(0);
  c[i] = 0.0f;
  for (int k = 0; k < n; k++) {
    c[i] += a[k];
    d[k] = 1.0f;
  }
  c[i] += 1.0f;
  barrier(CLK_GLOBAL_MEM_FENCE);
  d[i] = c[i];
  if (n > 2) c[i + 1] = 2.0f;
  d[i + 1] = c[i + 1];
}
// c[i] in the loop and after it, c[i] after the barrier, c[i + 1] after the branch.
// CHECK-LABEL: kernel kept: 1 loops (max depth 1), 13 sites
// CHECK-NEXT: [0] store 4B depth 0: store float 0.000000e+00, float addrspace(1)* [[C:%[0-9]+]]
// CHECK-NEXT: [1] load 4B depth 1 loop 0: {{.*}} = load float, float addrspace(1)* %{{[0-9]+}}
// CHECK-NEXT: [2] load 4B depth 1 loop 0: {{.*}} = load float, float addrspace(1)* [[C]]
// CHECK-NEXT: [3] store 4B depth 1 loop 0: store float %{{[0-9]+}}, float addrspace(1)* [[C]]
// CHECK-NEXT: [4] store 4B depth 1 loop 0: store float 1.000000e+00
// CHECK-NEXT: [5] load 4B depth 0: {{.*}} = load float, float addrspace(1)* [[C]]
// CHECK-NEXT: [6] store 4B depth 0: store float %{{[0-9]+}}, float addrspace(1)* [[C]]
// CHECK-NEXT: [7] barrier
// CHECK-NEXT: [8] load 4B depth 0: {{.*}} = load float, float addrspace(1)* [[C]]
// CHECK-NEXT: [9] store 4B depth 0:
// CHECK-NEXT: [10] store 4B depth 0: store float 2.000000e+00
// CHECK-NEXT: [11] load 4B depth 0:
// CHECK-NEXT: [12] store 4B depth 0:

// An address that moves with the loop's counter: what the last iteration stored at c[k] is not
// what this one loads from c[k].
__kernel void moving_address(__global float* c, __global float* d, int n) {
  float s = 0;
  for (int k = 0; k < n; k++) {
    s += c[k];
    c[k] = 0.0f;
  }
  d[get_global_id(0)] = s;
}
// CHECK-LABEL: kernel moving_address: 1 loops (max depth 1), 3 sites
// CHECK-NEXT: [0] load 4B depth 1 loop 0:
// CHECK-NEXT: [1] store 4B depth 1 loop 0:
// CHECK-NEXT: [2] store 4B depth 0:

// A branch that only overwrites what was just stored there: one store of the value chosen (a
// GPU compiler's select), PolyBench correlation's std_kernel. A branch that also reads memory,
// or a store followed by an access, keeps both stores.
__kernel void overwrite(__global float* s, __global float* t, float eps) {
  int j = get_global_id(0);
  s[j] = sqrt(s[j]);
  if (s[j] <= eps) s[j] = 1.0f;
  t[j] = 2.0f;
  if (eps > 3.0f) t[j] = s[j + 1];
  s[j + 2] = 4.0f;
  t[j + 2] = 0.0f;
  if (eps > 5.0f) s[j + 2] = 6.0f;
}
// CHECK-LABEL: kernel overwrite: 0 loops (max depth 0), 8 sites
// CHECK-NEXT: [0] load 4B depth 0:
// CHECK-NEXT: [1] store 4B depth 0: store float %{{[0-9]+}}, float addrspace(1)*
// CHECK-NEXT: [2] store 4B depth 0: store float 2.000000e+00
// CHECK-NEXT: [3] load 4B depth 0:
// CHECK-NEXT: [4] store 4B depth 0:
// CHECK-NEXT: [5] store 4B depth 0: store float 4.000000e+00
// CHECK-NEXT: [6] store 4B depth 0: store float 0.000000e+00
// CHECK-NEXT: [7] store 4B depth 0: store float 6.000000e+00

// Inside an enclosing if, whose other way meets the two there once empty blocks are folded (as
// the GPU compiler's CFG has it): both stores stay, as in the GPU's code (a store, then a
// predicated one).
__kernel void overwrite_guarded(__global float* s, float eps, int m) {
  int j = get_global_id(0);
  if (j < m) {
    s[j] = sqrt(s[j]);
    if (s[j] <= eps) s[j] = 1.0f;
  }
}
// CHECK-LABEL: kernel overwrite_guarded: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0:
// CHECK-NEXT: [1] store 4B depth 0: store float %{{[0-9]+}}, float addrspace(1)*
// CHECK-NEXT: [2] store 4B depth 0: store float 1.000000e+00

// A loop's bound loaded at every test, in a loop that stores on one way only (out may be lim):
// the value read at one test is still known at the next unless the store ran, so lim[i] is read
// once before the loop and again only after the store (as the GPU's rotated loop reads it, GVN
// removing the partial redundancy), at the store's source line. Where every way stores, every
// test reads.
__kernel void reread_after_store(__global const int* lim, __global const int* v, __global int* out) {
  int i = get_global_id(0);
  for (int j = 0; j < lim[i]; j++)
    if (v[j] > 0) out[j] = i;
}
// CHECK-LABEL: kernel reread_after_store: 1 loops (max depth 1), 4 sites
// CHECK-NEXT: [0] load 4B depth 0: %{{.*}} = load i32, i32 addrspace(1)* [[LIM:%[0-9]+]]
// CHECK-NEXT: [1] load 4B depth 1 loop 0:
// CHECK-NEXT: [2] store 4B depth 1 loop 0:
// CHECK-NEXT: [3] load 4B depth 1 loop 0: %{{.*}} = load i32, i32 addrspace(1)* [[LIM2:%[0-9]+]]
__kernel void every_way_stores(__global const int* lim, __global int* out) {
  int i = get_global_id(0);
  for (int j = 0; j < lim[i]; j++) out[j] = i;
}
// CHECK-LABEL: kernel every_way_stores: 1 loops (max depth 1), 2 sites
// CHECK-NEXT: [0] load 4B depth 1 loop 0:
// CHECK-NEXT: [1] store 4B depth 1 loop 0:
