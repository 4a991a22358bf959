// Reading components of a global vector: clang loads the whole vector and extracts; clang -O2
// for NVPTX loads the components used where the extracts are in the load's block with no write
// in between (VectorCombine with NVPTX's costs makes them loads of the components themselves,
// neighbours joined again by the load-store vectorizer). Otherwise (a write in between, a
// swizzle passed on as a vector) the whole vector is loaded, as NVPTX loads it.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
__kernel void one(__global const float4* v, __global float* out) {
  size_t i = get_global_id(0);
  out[i] = v[i].y;
}
// CHECK: kernel one: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float, float addrspace(1)* {{.*}}, align 4
// CHECK-NEXT: [1] store 4B depth 0: store float

// .zw read with a store in between: the whole vector (NVPTX: ld.global.v4.f32).
__kernel void stored_between(__global const float4* v, __global float* out) {
  size_t i = get_global_id(0);
  float4 t = v[i];
  out[i] = t.z;
  out[i + 1] = t.w;
}
// CHECK: kernel stored_between: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 16B depth 0: {{.*}} = load <4 x float>
// CHECK-NEXT: [1] store 4B depth 0: store float
// CHECK-NEXT: [2] store 4B depth 0: store float

// A swizzle stored as a vector (.zw): the whole vector (NVPTX: ld.global.v4.f32); through a
// swizzle of a swizzle (.xz.y is .z) and a whole vector of which only .w is used later: one
// load of v[i] once the loads clang repeats are merged (out may be v: the first load is not
// reused after the store), extracts only: .z and .w, 8 bytes at +8 (NVPTX: ld.global.v2.f32).
__kernel void swizzles(__global const float4* v, __global float2* out, __global float* s) {
  size_t i = get_global_id(0);
  out[i] = v[i].zw;
  float4 whole = v[i];
  s[i] = v[i].xz.y + whole.w;
}
// CHECK: kernel swizzles: 0 loops (max depth 0), 4 sites
// CHECK-NEXT: [0] load 16B depth 0: {{.*}} = load <4 x float>
// CHECK-NEXT: [1] store 8B depth 0: store <2 x float>
// CHECK-NEXT: [2] load 8B depth 0: {{.*}} = load <2 x float>, <2 x float> addrspace(1)* {{.*}}, align 8
// CHECK-NEXT: [3] store 4B depth 0: store float

// Stay whole: components apart (.xz), every component (.xy and .zw of one v[i], loaded once),
// a component picked at run time, the vector passed on whole (stored, or as an operand), and a
// volatile load.
__kernel void whole(__global const float4* v, __global float2* out, __global float4* w, int k,
                    __global volatile float4* u) {
  size_t i = get_global_id(0);
  out[i] = v[i].xz;
  out[i + 1] = v[i].xy + v[i].zw;
  out[i + 2].x = v[i][k];
  w[i] = v[i] * 2.0f;
  out[i + 3].x = u[i].x;
}
// CHECK: kernel whole: 0 loops (max depth 0), 10 sites
// CHECK-NEXT: [0] load 16B depth 0: {{.*}} = load <4 x float>
// CHECK-NEXT: [1] store 8B depth 0: store <2 x float>
// CHECK-NEXT: [2] load 16B depth 0: {{.*}} = load <4 x float>
// CHECK-NEXT: [3] store 8B depth 0: store <2 x float>
// CHECK-NEXT: [4] load 16B depth 0: {{.*}} = load <4 x float>
// CHECK-NEXT: [5] store 4B depth 0: store float
// CHECK-NEXT: [6] load 16B depth 0: {{.*}} = load <4 x float>
// CHECK-NEXT: [7] store 16B depth 0: store <4 x float>
// CHECK-NEXT: [8] load 16B depth 0: {{.*}} = load volatile
// CHECK-NEXT: [9] store 4B depth 0: store float

// Read in the load's block: the components used, joined where their alignment allows one load
// (as NVPTX: .yz of a float4 two loads of 4 bytes; .xyz of a ushort4 4 bytes and 2; .xy of a
// ushort4 one of 4; .s4567 of a float8 one of 16 at +16); v[i].xyz passed whole to dot() stays
// 16 bytes.
__kernel void aligned(__global const float4* v, __global const ushort4* u, __global const float8* w,
                      __global float* out) {
  size_t i = get_global_id(0);
  float2 t = v[i].yz;
  out[i] = t.x + t.y;
  out[i + 1] = dot(v[i].xyz, (float3)(1.0f));
  ushort3 s = u[i].xyz;
  out[i + 2] = s.x + s.y + s.z;
  ushort2 p = u[i].xy;
  out[i + 3] = p.x + p.y;
  float4 q = w[i].s4567;
  out[i + 4] = q.x + q.y + q.z + q.w;
}
// CHECK: kernel aligned: 0 loops (max depth 0), 12 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float, float addrspace(1)* {{.*}}, align 4
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float, float addrspace(1)* {{.*}}, align 8
// CHECK-NEXT: [2] store 4B
// CHECK-NEXT: [3] load 16B depth 0: {{.*}} = load <4 x float>
// CHECK-NEXT: [4] store 4B
// CHECK-NEXT: [5] load 4B depth 0: {{.*}} = load <2 x i16>, <2 x i16> addrspace(1)* {{.*}}, align 8
// CHECK-NEXT: [6] load 2B depth 0: {{.*}} = load i16, i16 addrspace(1)* {{.*}}, align 4
// CHECK-NEXT: [7] store 4B
// CHECK-NEXT: [8] load 4B depth 0: {{.*}} = load <2 x i16>, <2 x i16> addrspace(1)* {{.*}}, align 8
// CHECK-NEXT: [9] store 4B
// CHECK-NEXT: [10] load 16B depth 0: {{.*}} = load <4 x float>, <4 x float> addrspace(1)* {{.*}}, align 16
// CHECK-NEXT: [11] store 4B

// vloadN through an element pointer: one load per element used (vload4(i, p).w: 4 bytes at
// +12, which the scalar read of the same element shares; .x and .z: two loads, not a run of
// 12 bytes).
__kernel void vl(__global const float* p, __global float* out) {
  size_t i = get_global_id(0);
  out[i] = vload4(i, p).w + p[4 * i + 3];
  float4 v = vload4(i + 1, p);
  out[i + 1] = v.x + v.z;
}
// CHECK: kernel vl: 0 loops (max depth 0), 5 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float, float addrspace(1)*
// CHECK-NEXT: [1] store 4B depth 0: store float
// CHECK-NEXT: [2] load 4B depth 0: {{.*}} = load float, float addrspace(1)*
// CHECK-NEXT: [3] load 4B depth 0: {{.*}} = load float, float addrspace(1)*
// CHECK-NEXT: [4] store 4B depth 0: store float

// A 3-vector kept in a variable: clang -O0 stores it through a <4 x float> view of its alloca,
// which SROA (not mem2reg) takes apart, so only .z is read.
__kernel void v3(__global const float* p, __global float* out) {
  size_t i = get_global_id(0);
  float3 v = vload3(i, p);
  out[i] = v.z;
}
// CHECK: kernel v3: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float, float addrspace(1)*
// CHECK-NEXT: [1] store 4B depth 0: store float
