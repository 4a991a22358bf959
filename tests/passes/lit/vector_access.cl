// Vector accesses through vector pointers keep their byte size: float4 = 16 bytes. vload2 and
// vstore2 through a float pointer, which is only 4-byte aligned, are two 4-byte accesses each,
// as a GPU compiler issues them (a vector load needs the vector's alignment).
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
__kernel void vec(__global const float4* in, __global float4* out, __global const float* s,
                  __global float* d) {
  size_t i = get_global_id(0);
  out[i] = in[i] * 2.0f;
  float2 v = vload2(i, s);
  vstore2(v, i + 1, d);
}

// CHECK: kernel vec: 0 loops (max depth 0), 6 sites
// CHECK-NEXT: [0] load 16B depth 0: {{.*}} load <4 x float>
// CHECK-NEXT: [1] store 16B depth 0: store <4 x float>
// CHECK-NEXT: [2] load 4B depth 0: {{.*}} = load float, float addrspace(1)* {{.*}}, align 4
// CHECK-NEXT: [3] load 4B depth 0: {{.*}} = load float, float addrspace(1)* {{.*}}, align 4
// CHECK-NEXT: [4] store 4B depth 0: store float {{.*}}, float addrspace(1)* {{.*}}, align 4
// CHECK-NEXT: [5] store 4B depth 0: store float {{.*}}, float addrspace(1)* {{.*}}, align 4

// A swizzle passes on only the lanes it takes: the .w of vload4 is not read.
__kernel void swizzled(__global const float* s, __global float* d) {
  size_t i = get_global_id(0);
  vstore3(vload4(i, s).xyz, i, d);
}
// CHECK: kernel swizzled: 0 loops (max depth 0), 6 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [3] store 4B depth 0: store float
// CHECK-NEXT: [4] store 4B depth 0: store float
// CHECK-NEXT: [5] store 4B depth 0: store float
