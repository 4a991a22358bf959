// A load of a 3-component vector (clang loads a swizzle of a global float3 or uchar3 as one)
// is made as NVPTX's type legalization makes it: components of 4 bytes or more each a load of
// its own, only those used; narrower ones one load of the padded vector (4 components). The
// kernels were compiled with clang -O2 for nvptx64: xy two ld.global.f32, zyx three, c16 one
// ld.global.u64, c8 one ld.global.u32.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s

// CHECK: kernel xy: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float, float addrspace(1)* {{.*}}, align 16
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float, float addrspace(1)* {{.*}}, align 4
// CHECK-NEXT: [2] store 8B depth 0: store <2 x float>
__kernel void xy(__global const float3* in, __global float2* out) {
  int i = get_global_id(0);
  out[i] = in[i].xy;
}

// CHECK: kernel zyx: 0 loops (max depth 0), 4 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float, float addrspace(1)* {{.*}}, align 16
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float, float addrspace(1)* {{.*}}, align 4
// CHECK-NEXT: [2] load 4B depth 0: {{.*}} = load float, float addrspace(1)* {{.*}}, align 8
// CHECK-NEXT: [3] store 16B depth 0: store <4 x float>
__kernel void zyx(__global const float3* in, __global float3* out) {
  int i = get_global_id(0);
  out[i] = in[i].zyx;
}

// CHECK: kernel c16: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 8B depth 0: {{.*}} = load i64, i64 addrspace(1)* {{.*}}, align 8
// CHECK-NEXT: [1] store 8B depth 0: store <4 x i16>
__kernel void c16(__global const short3* in, __global short3* out) {
  int i = get_global_id(0);
  out[i] = in[i].zyx;
}

// CHECK: kernel c8: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load i32, i32 addrspace(1)* {{.*}}, align 4
// CHECK-NEXT: [1] store 4B depth 0: store <4 x i8>
__kernel void c8(__global const uchar3* in, __global uchar3* out) {
  int i = get_global_id(0);
  out[i] = in[i].zyx;
}
