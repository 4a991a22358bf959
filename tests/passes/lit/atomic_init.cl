// OpenCL C 2.0's atomic_init is a plain store of the initial value (not an atomic operation, so
// it does not go around the L1 as atomics do); atomic_store and atomic_fetch_add are atomics.
// RUN: %clang-spir -cl-std=CL2.0 %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
__kernel void init(__global atomic_int* a, __global atomic_long* b, __local atomic_int* l) {
  int i = get_global_id(0);
  atomic_init(&a[i], 5);
  atomic_init(&b[i], 6);
  atomic_init(&l[i], 7);
  atomic_store(&a[i + 1], 8);
  atomic_fetch_add(&b[i + 1], 9);
}

// CHECK: kernel init: 0 loops (max depth 0), 4 sites
// CHECK-NEXT: [0] store 4B depth 0: call {{.*}}atomic_init
// CHECK-NEXT: [1] store 8B depth 0: call {{.*}}atomic_init
// CHECK-NEXT: [2] atomic 4B depth 0: call {{.*}}atomic_store
// CHECK-NEXT: [3] atomic 8B depth 0: {{.*}}call {{.*}}atomic_fetch_add
