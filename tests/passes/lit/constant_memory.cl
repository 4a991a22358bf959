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

// vloadN and vload_halfN from such a table likewise (they were refused as reads that might be
// of a buffer); the same element read through a buffer is recorded.
__constant float rows[8] = {1, 2, 3, 4, 5, 6, 7, 8};
__constant ushort halves[8] = {0x3c00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600, 0x4700, 0x4800};
__kernel void vectors(__global float* out, __constant float* c) {
  size_t g = get_global_id(0);
  out[g] = vload4(g & 1, rows).y + vload_half2(g & 3, (__constant half*)halves).x + vload2(g, c).y;
}
// CHECK-LABEL: kernel vectors: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] constant_load 4B depth 0: {{.*}} = load float, float addrspace(2)*
// CHECK-NEXT: [1] store 4B depth 0:
// CHECK-NEXT: warning: kernel 'vectors' reads the program-scope __constant variable 'halves' (1 load instruction)
// CHECK-NEXT: warning: kernel 'vectors' reads the program-scope __constant variable 'rows' (1 load instruction)
