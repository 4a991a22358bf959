// Writing components of a global vector: clang loads the whole vector, inserts and stores it
// back. One component is a store of it (VectorCombine makes it one, as clang -O2 for NVPTX
// does); more stay the whole vector's load and store, as NVPTX keeps them (ld.global.v4.f32,
// st.global.v4.f32), unless later writes replace every component the load kept.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
__kernel void one(__global float4* v) { v[get_global_id(0)].y = 1.0f; }
// CHECK: kernel one: 0 loops (max depth 0), 1 sites
// CHECK-NEXT: [0] store 4B depth 0: store float 1.000000e+00

__kernel void two(__global float4* v) { v[get_global_id(0)].zw = (float2)(1.0f, 2.0f); }
// CHECK: kernel two: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 16B depth 0: {{.*}} = load <4 x float>
// CHECK-NEXT: [1] store 16B depth 0: store <4 x float>

__kernel void three(__global int4* v, __global const int* in) {
  size_t i = get_global_id(0);
  v[i].xyz = (int3)(in[i], 2, 3);
}
// CHECK: kernel three: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [1] load 16B depth 0: {{.*}} = load <4 x i32>
// CHECK-NEXT: [2] store 16B depth 0: store <4 x i32>

// .xy then .zw: the second load takes the first store's value, that store is overwritten
// unread, and no component of the first load is left: one store of the whole vector, no load
// of it (NVPTX: one st.global.v4.f32).
__kernel void halves(__global float4* v, __global const float2* a) {
  size_t i = get_global_id(0);
  float2 x = a[i];
  v[i].xy = x;
  v[i].zw = x * 2.0f;
}
// CHECK: kernel halves: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 8B depth 0: {{.*}} = load <2 x float>
// CHECK-NEXT: [1] store 16B depth 0: store <4 x float>

// Every component written one by one (inserts): likewise one store of the whole vector, no
// load (NVPTX: st.global.v4.f32; st.global.v4.u8 for a uchar4).
__kernel void each(__global float4* v, __global uchar4* u, __global const float* a) {
  size_t i = get_global_id(0);
  float x = a[i];
  v[i].x = x;
  v[i].y = x + 1.0f;
  v[i].z = x + 2.0f;
  v[i].w = x + 3.0f;
  u[i].s0 = 1;
  u[i].s1 = 2;
  u[i].s2 = 3;
  u[i].s3 = 4;
}
// CHECK: kernel each: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] store 16B depth 0: store <4 x float>
// CHECK-NEXT: [2] store 4B depth 0: store <4 x i8>

// Components apart (.xz) stay as clang wrote them: the whole vector loaded and stored.
__kernel void apart(__global float4* v) { v[get_global_id(0)].xz = (float2)(1.0f, 2.0f); }
// CHECK: kernel apart: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 16B depth 0: {{.*}} = load <4 x float>
// CHECK-NEXT: [1] store 16B depth 0: store <4 x float>

// A read-modify-write of a component: the read is the component too (component_reads.cl), as
// is the write.
__kernel void rmw(__global float4* v, __global const float* s) {
  size_t i = get_global_id(0);
  v[i].w += s[i];
}
// CHECK: kernel rmw: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B depth 0: store float

// Not component writes: the load's own components move (a swizzle of the vector onto itself
// reads it), or something writes memory between the load and the store (the store puts back
// what was read). Both stay the whole vector's load and store.
__kernel void swap(__global float4* v) {
  __global float4* p = v + get_global_id(0);
  *p = p->yxzw;
}
// CHECK: kernel swap: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 16B depth 0: {{.*}} = load <4 x float>
// CHECK-NEXT: [1] store 16B depth 0: store <4 x float>

__kernel void clobber(__global float4* v, __global float4* w) {
  __global float4* p = v + get_global_id(0);
  float4 t = *p;
  w[0] = (float4)(0.0f);  // w may be v
  t.y = 1.0f;
  *p = t;
}
// CHECK: kernel clobber: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 16B depth 0: {{.*}} = load <4 x float>
// CHECK-NEXT: [1] store 16B depth 0: store <4 x float> zeroinitializer
// CHECK-NEXT: [2] store 16B depth 0: store <4 x float>

// A store to the same place overwritten before anything reads it is dropped, as a GPU compiler
// drops it: what is left is t with .y replaced, a component write.
__kernel void overwritten(__global float4* v) {
  __global float4* p = v + get_global_id(0);
  float4 t = *p;
  *p = (float4)(0.0f);
  t.y = 1.0f;
  *p = t;
}
// CHECK: kernel overwritten: 0 loops (max depth 0), 1 sites
// CHECK-NEXT: [0] store 4B depth 0: store float 1.000000e+00

// A load whose value nothing uses is one a GPU compiler drops: clang emits one for a vector
// written whole through a swizzle, and for a discarded read.
__kernel void whole(__global float4* v, __global const float* s) {
  size_t i = get_global_id(0);
  v[i].wzyx = (float4)(1.0f, 2.0f, 3.0f, 4.0f);
  (void)s[i];
}
// CHECK: kernel whole: 0 loops (max depth 0), 1 sites
// CHECK-NEXT: [0] store 16B depth 0: store <4 x float>
