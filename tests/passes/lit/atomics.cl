// OpenCL atomic builtins on global memory are recorded as atomics; local atomics are not.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
__kernel void hist(__global const uint* data, __global uint* bins, __local uint* lbins) {
  size_t g = get_global_id(0);
  atomic_inc(&bins[data[g] % 16]);
  atomic_add(&bins[0], 2u);
  atomic_cmpxchg(&bins[1], 0u, 1u);
  atomic_inc(&lbins[0]);
}

// CHECK: kernel hist: 0 loops (max depth 0), 4 sites
// CHECK-NEXT: [0] load 4B depth 0:
// CHECK-NEXT: [1] atomic 4B depth 0: {{.*}}@_Z10atomic_incPU3AS1Vj
// CHECK-NEXT: [2] atomic 4B depth 0: {{.*}}@_Z10atomic_addPU3AS1Vjj
// CHECK-NEXT: [3] atomic 4B depth 0: {{.*}}@_Z14atomic_cmpxchgPU3AS1Vjjj
// CHECK-NOT: PU3AS3
