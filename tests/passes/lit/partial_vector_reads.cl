// A vector read of which only some components are used, in the load's block with no write in
// between (or with the components' extracts gathered there), is the loads of those components,
// neighbours joined where NVPTX's alignment rules allow one load: what clang -O2 for NVPTX
// makes of each kernel below (ld.global.v2.f32 + ld.global.f32 for .xyz of a float4, three
// ld.global.u8 for .xyz of a uchar4, ...).
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s

// .xyz of a float4: 8 bytes at +0 (16-byte aligned), 4 at +8.
__kernel void xyz(__global const float4* p, __global float* o) {
  int i = get_global_id(0);
  float4 v = p[i];
  o[i] = v.x + v.y + v.z;
}
// CHECK: kernel xyz: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 8B depth 0: {{.*}} = load <2 x float>, <2 x float> addrspace(1)* {{.*}}, align 16
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float, float addrspace(1)* {{.*}}, align 8
// CHECK-NEXT: [2] store 4B

// .x and .w: two loads of 4 bytes (not 16 for the run between them).
__kernel void xw(__global const float4* p, __global float* o) {
  int i = get_global_id(0);
  float4 v = p[i];
  o[i] = v.x + v.w;
}
// CHECK: kernel xw: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float, float addrspace(1)* {{.*}}, align 16
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float, float addrspace(1)* {{.*}}, align 4
// CHECK-NEXT: [2] store 4B

// Every component: one load of 16 bytes.
__kernel void all(__global const float4* p, __global float* o) {
  int i = get_global_id(0);
  float4 v = p[i];
  o[i] = v.x + v.y + v.z + v.w;
}
// CHECK: kernel all: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 16B depth 0: {{.*}} = load <4 x float>, <4 x float> addrspace(1)* {{.*}}, align 16
// CHECK-NEXT: [1] store 4B

// RGB of an RGBA pixel: three loads of a byte (NVPTX does not join bytes); all four: one of 4.
__kernel void rgb(__global const uchar4* img, __global uchar* o) {
  int i = get_global_id(0);
  uchar4 p = img[i];
  o[i] = (uchar)(0.299f * p.x + 0.587f * p.y + 0.114f * p.z);
}
// CHECK: kernel rgb: 0 loops (max depth 0), 4 sites
// CHECK-NEXT: [0] load 1B depth 0: {{.*}} = load i8, i8 addrspace(1)* {{.*}}, align 4
// CHECK-NEXT: [1] load 1B depth 0: {{.*}} = load i8, i8 addrspace(1)* {{.*}}, align 1
// CHECK-NEXT: [2] load 1B depth 0: {{.*}} = load i8, i8 addrspace(1)* {{.*}}, align 2
// CHECK-NEXT: [3] store 1B
__kernel void rgba(__global const uchar4* img, __global uchar* o) {
  int i = get_global_id(0);
  uchar4 p = img[i];
  o[i] = p.x + p.y + p.z + p.w;
}
// CHECK: kernel rgba: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load <4 x i8>, <4 x i8> addrspace(1)* {{.*}}, align 4
// CHECK-NEXT: [1] store 1B

// A float3 (read as a float4 and swizzled to three components): 8 bytes and 4.
__kernel void three(__global const float3* p, __global float* o) {
  int i = get_global_id(0);
  float3 v = p[i];
  o[i] = v.x + v.y + v.z;
}
// CHECK: kernel three: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 8B depth 0: {{.*}} = load <2 x float>, <2 x float> addrspace(1)* {{.*}}, align 16
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float, float addrspace(1)* {{.*}}, align 8
// CHECK-NEXT: [2] store 4B

// Components used in a loop (a molecular-dynamics position): read before it as 8 bytes and 4,
// as in the loop, where each neighbour's position is read the same way.
__kernel void neighbours(__global const float4* pos, __global const int* list, __global float* o, int n) {
  int i = get_global_id(0);
  float4 me = pos[i];
  float s = 0.0f;
  for (int k = 0; k < n; ++k) {
    float4 other = pos[list[k]];
    float dx = me.x - other.x, dy = me.y - other.y, dz = me.z - other.z;
    s += dx * dx + dy * dy + dz * dz;
  }
  o[i] = s;
}
// CHECK: kernel neighbours: 1 loops (max depth 1), 6 sites
// CHECK-NEXT: [0] load 8B depth 0: {{.*}} = load <2 x float>, <2 x float> addrspace(1)* {{.*}}, align 16
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float, float addrspace(1)* {{.*}}, align 8
// CHECK-NEXT: [2] load 4B depth 1 loop 0: {{.*}} = load i32
// CHECK-NEXT: [3] load 8B depth 1 loop 0: {{.*}} = load <2 x float>, <2 x float> addrspace(1)* {{.*}}, align 16
// CHECK-NEXT: [4] load 4B depth 1 loop 0: {{.*}} = load float, float addrspace(1)* {{.*}}, align 8
// CHECK-NEXT: [5] store 4B
