// A helper taking a global pointer is inlined so its accesses are recorded in the kernel.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
// RUN: %opt -passes=cltrace-prepare -S %t.bc -o - | FileCheck %s --check-prefix=INLINED
float load_twice(__global const float* p, int i) { return p[i] + p[i + 1]; }
void store_one(__global float* q, int i, float v) { q[i] = v; }

__kernel void use_helpers(__global const float* in, __global float* out) {
  int g = get_global_id(0);
  store_one(out, g, load_twice(in, g));
}

// CHECK: kernel use_helpers: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0:
// CHECK-NEXT: [1] load 4B depth 0:
// CHECK-NEXT: [2] store 4B depth 0:
// INLINED-NOT: define {{.*}}@load_twice
// INLINED-NOT: call {{.*}}@store_one
