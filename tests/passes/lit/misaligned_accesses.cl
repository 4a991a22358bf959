// A load or store less aligned than its size is made in pieces as wide as its alignment, as
// NVPTX (which has no misaligned access) makes it: each piece a request of its own for the L1.
// The kernels were compiled with clang -O2 for nvptx64: f1 is four ld.global.u8, f2 two
// ld.global.u16, w1 four st.global.u8, v1 sixteen ld.global.u8 and one st.global.v4.f32.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
typedef struct __attribute__((packed)) { char c; float f; short s; } P;
typedef struct __attribute__((packed, aligned(2))) { short a; float f; } Q;
typedef struct __attribute__((packed)) { char c; float4 v; } S;

// CHECK: kernel f1: 0 loops (max depth 0), 5 sites
// CHECK-NEXT: [0] load 1B depth 0: {{.*}} = load i8, i8 addrspace(1)* {{.*}}, align 1
// CHECK-NEXT: [1] load 1B depth 0:
// CHECK-NEXT: [2] load 1B depth 0:
// CHECK-NEXT: [3] load 1B depth 0:
// CHECK-NEXT: [4] store 4B depth 0: store float
__kernel void f1(__global const P* in, __global float* out) {
  int i = get_global_id(0);
  out[i] = in[i].f;
}

// CHECK: kernel f2: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 2B depth 0: {{.*}} = load i16, i16 addrspace(1)* {{.*}}, align 2
// CHECK-NEXT: [1] load 2B depth 0: {{.*}} = load i16, i16 addrspace(1)* {{.*}}, align 2
// CHECK-NEXT: [2] store 4B depth 0: store float
__kernel void f2(__global const Q* in, __global float* out) {
  int i = get_global_id(0);
  out[i] = in[i].f;
}

// CHECK: kernel w1: 0 loops (max depth 0), 5 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] store 1B depth 0: store i8 {{.*}}, align 1
// CHECK-NEXT: [2] store 1B depth 0: store i8
// CHECK-NEXT: [3] store 1B depth 0: store i8
// CHECK-NEXT: [4] store 1B depth 0: store i8
__kernel void w1(__global P* o, __global const float* in) {
  int i = get_global_id(0);
  o[i].f = in[i];
}

// A vector's pieces: bytes at alignment 1; the aligned store stays whole.
// CHECK: kernel v1: 0 loops (max depth 0), 17 sites
// CHECK-COUNT-16: load 1B depth 0:
// CHECK-NEXT: [16] store 16B depth 0: store <4 x float>
__kernel void v1(__global const S* in, __global float4* out) {
  int i = get_global_id(0);
  out[i] = in[i].v;
}
