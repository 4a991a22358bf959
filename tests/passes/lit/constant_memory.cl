// Loads from __constant memory are their own kind; private and local accesses are not recorded.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
__kernel void coeffs(__constant float* c, __global float* out, __local float* scratch) {
  size_t g = get_global_id(0);
  float priv[4] = {1, 2, 3, 4};
  scratch[0] = priv[g % 4];
  out[g] = c[0] * c[1] + scratch[0];
}

// The private array's initialiser (program-scope constant data) is not a buffer access.
// CHECK: kernel coeffs: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] constant_load 4B depth 0: {{.*}} load float, float addrspace(2)*
// CHECK-NEXT: [1] constant_load 4B depth 0: {{.*}} load float, float addrspace(2)*
// CHECK-NEXT: [2] store 4B depth 0: store float {{.*}} addrspace(1)*
// CHECK-NOT: warning

// A program-scope __constant table is no buffer either: its reads are not recorded, and said so.
__constant float table[4] = {1, 2, 3, 4};
__kernel void lookup(__global float* out) {
  out[get_global_id(0)] = table[get_global_id(0) & 3];
}
// CHECK-LABEL: kernel lookup: 0 loops (max depth 0), 1 sites
// CHECK-NEXT: [0] store 4B depth 0:
// CHECK-NEXT: warning: kernel 'lookup' reads the program-scope __constant variable 'table' (1 load instruction): program-scope data is not recorded
