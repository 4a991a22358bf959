// Neighbouring fields read or written together, where their alignment allows one vector access,
// are one access, as NVPTX's load-store vectorizer makes them (ld.global.v4.f32); where it does
// not (a float array, 4-byte aligned), each stays a 4-byte access.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s

typedef struct __attribute__((aligned(16))) { float a, b, c, d; } quad;

// CHECK: kernel read_fields: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 16B depth 0: {{.*}} = load <4 x float>, {{.*}} align 16
// CHECK-NEXT: [1] store 4B depth 0: store float
__kernel void read_fields(__global float* out, __global const quad* ps) {
  int i = get_global_id(0);
  quad s = ps[i];
  out[i] = s.a + s.b * s.c - s.d;
}

// CHECK: kernel write_fields: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 4B depth 0:
// CHECK-NEXT: [1] store 16B depth 0: store <4 x float> {{.*}} align 16
__kernel void write_fields(__global quad* pd, __global const float* x) {
  int i = get_global_id(0);
  float v = x[i];
  quad s = {v, v + 1.0f, v * 2.0f, v - 3.0f};
  pd[i] = s;
}

// CHECK: kernel pairs: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0:
// CHECK-NEXT: [1] load 4B depth 0:
// CHECK-NEXT: [2] store 4B depth 0:
__kernel void pairs(__global float* out, __global const float* a) {
  int i = get_global_id(0);
  out[i] = a[2 * i] + a[2 * i + 1];
}
