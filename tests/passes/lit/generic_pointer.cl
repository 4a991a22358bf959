// OpenCL C 2.0: helpers without address space qualifiers take generic pointers. Once inlined,
// prepare infers that they point into the kernel's buffers, so their accesses are recorded as
// the global accesses they are (before, none of them was).
// RUN: %clang-spir -cl-std=CL2.0 %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
// RUN: %opt -passes=cltrace-prepare -S %t.bc -o - | FileCheck %s --check-prefix=INFERRED
float get(float* p, int i) { return p[i]; }
void put(float* p, int i, float v) { p[i] = v; }

__kernel void helpers(__global float* in, __global float* out, __local float* tile) {
  int g = get_global_id(0);
  put(tile, get_local_id(0), get(in, g));
  barrier(CLK_LOCAL_MEM_FENCE);
  put(out, g, get(tile, get_local_id(0)));
}

// Two global accesses (the local ones are not recorded) and the barrier.
// CHECK: kernel helpers: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float, float addrspace(1)*
// CHECK-NEXT: [1] barrier 0B depth 0 flags 1:
// CHECK-NEXT: [2] store 4B depth 0: store float {{.*}}, float addrspace(1)*
// INFERRED-NOT: addrspace(4)
