// Accesses whose pointer is a kernel argument itself (no address arithmetic), including an
// atomic and a vload4 on the argument, are recorded against the new kernel's arguments.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
// RUN: %opt -passes=cltrace-prepare,cltrace-trace %t.bc -S -o - | FileCheck %s --check-prefix=TRACE
// RUN: %opt -passes=cltrace-prepare,cltrace-count %t.bc -S -o - | FileCheck %s --check-prefix=COUNT

__kernel void direct(__global const float* in, __global float* out, __global uint* counter,
                     __global const float* v) {
  *out = *in;
  atomic_inc(counter);
  float4 x = vload4(0, v);
  out[1] = x.y;  // only .y is used: its load alone, v[1]
}

// CHECK: kernel direct: 0 loops (max depth 0), 5 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} load float, float addrspace(1)* %0
// CHECK-NEXT: [1] store 4B depth 0: store float {{.*}}, float addrspace(1)* %1
// CHECK-NEXT: [2] atomic 4B depth 0: {{.*}}@_Z10atomic_incPU3AS1Vj(i32 addrspace(1)* noundef %2)
// CHECK-NEXT: [3] load 4B depth 0: {{.*}} = load float, float addrspace(1)* %{{[0-9]+}}, align 4
// CHECK-NEXT: [4] store 4B depth 0:
// TRACE: define {{.*}}spir_kernel void @direct(float addrspace(1)* {{[^%]*}}[[IN:%[0-9]+]], float addrspace(1)* {{[^%]*}}[[OUT:%[0-9]+]],
// TRACE: ptrtoint float addrspace(1)* [[IN]] to i64
// TRACE: ptrtoint float addrspace(1)* [[OUT]] to i64
// COUNT: define {{.*}}spir_kernel void @direct(
// COUNT: ret void
