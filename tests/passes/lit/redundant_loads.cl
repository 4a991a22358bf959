// A GPU compiler loads a value once where clang at -O0 loads it at every mention, and forwards
// a value stored to a load of it: such loads are merged before the accesses are recorded, so the
// L1 does not see reads the GPU never makes. Only while nothing in between may write the memory:
// a store through another global pointer (which may point to the same place), a barrier, a
// volatile access.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
__kernel void square(__global const float* a, __global float* out) {
  size_t i = get_global_id(0);
  out[i] = a[i] * a[i];
}
// CHECK: kernel square: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] store 4B depth 0: store float

typedef struct { float lat, lng; } LatLong;
__kernel void distance(__global const LatLong* p, __global float* out, float lat, float lng) {
  size_t i = get_global_id(0);
  out[i] = (lat - p[i].lat) * (lat - p[i].lat) + (lng - p[i].lng) * (lng - p[i].lng);
}
// CHECK: kernel distance: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B depth 0: store float

// Stored, then read back: the value stored is used.
__kernel void forward(__global float* out) {
  size_t i = get_global_id(0);
  out[i] = 2.0f;
  out[i + 1] = out[i] + 1.0f;
}
// CHECK: kernel forward: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] store 4B depth 0: store float 2.0
// CHECK-NEXT: [1] store 4B depth 0: store float

// Kept: a store through `out` (which may be `a`), a barrier, a volatile pointer in between.
__kernel void kept(__global const float* a, __global float* out, __global volatile float* v) {
  size_t i = get_global_id(0);
  float x = a[i];
  out[i] = x;
  x += a[i];
  barrier(CLK_GLOBAL_MEM_FENCE);
  x += a[i];
  out[i + 1] = x + v[i] + v[i];
}
// CHECK: kernel kept: 0 loops (max depth 0), 8 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] store 4B depth 0: store float
// CHECK-NEXT: [2] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [3] barrier 0B depth 0
// CHECK-NEXT: [4] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [5] load 4B depth 0: {{.*}} = load volatile float
// CHECK-NEXT: [6] load 4B depth 0: {{.*}} = load volatile float
// CHECK-NEXT: [7] store 4B depth 0: store float

// Each iteration of a loop still loads (the loop's blocks are not changed).
__kernel void loop(__global const float* a, __global float* out, int n) {
  float s = 0.0f;
  for (int k = 0; k < n; k++) s += a[k] * a[k];
  out[get_global_id(0)] = s;
}
// CHECK: kernel loop: 1 loops (max depth 1), 2 sites
// CHECK-NEXT: [0] load 4B depth 1 loop 0: {{.*}} = load float
// CHECK-NEXT: [1] store 4B depth 0: store float
