// Writing components of a global vector: clang loads the whole vector, inserts and stores it
// back; a GPU compiler stores the components alone. One component is a store of it (VectorCombine
// makes it one); more, side by side, are recorded as the bytes the store changes, and the load is
// not recorded (nor counted).
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
// The trace kernel writes the store's record at the components' address (+8 for .zw).
// RUN: %opt -passes=cltrace-prepare,cltrace-trace %t.bc -S -o - | FileCheck %s --check-prefix=TRACE
__kernel void one(__global float4* v) { v[get_global_id(0)].y = 1.0f; }
// CHECK: kernel one: 0 loops (max depth 0), 1 sites
// CHECK-NEXT: [0] store 4B depth 0: store float 1.000000e+00

__kernel void two(__global float4* v) { v[get_global_id(0)].zw = (float2)(1.0f, 2.0f); }
// CHECK: kernel two: 0 loops (max depth 0), 1 sites
// CHECK-NEXT: [0] store 8B depth 0: store <4 x float>
// TRACE-LABEL: define {{.*}} @two(
// TRACE: shufflevector <4 x float> %{{[0-9]+}}, <4 x float> <float 1.000000e+00, float 2.000000e+00
// TRACE-NEXT: ptrtoint <4 x float> addrspace(1)* %0 to i64
// TRACE-NEXT: [[ELEMENT:%[0-9]+]] = ptrtoint <4 x float> addrspace(1)* %{{[0-9]+}} to i64
// TRACE-NEXT: [[COMPONENT:%[0-9]+]] = add i64 [[ELEMENT]], 8
// TRACE-NEXT: sub i64 [[COMPONENT]], %{{[0-9]+}}

// Components apart (.xz) stay as clang wrote them: the whole vector loaded and stored.
__kernel void apart(__global float4* v) { v[get_global_id(0)].xz = (float2)(1.0f, 2.0f); }
// CHECK: kernel apart: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 16B depth 0: {{.*}} = load <4 x float>
// CHECK-NEXT: [1] store 16B depth 0: store <4 x float>

// A read-modify-write of a component: the read is the component too (component_reads.cl), as
// is the write; ids count the recorded accesses only.
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
