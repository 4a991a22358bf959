// Vector accesses keep their true byte size: float4 = 16 bytes, vload2 of floats = 8 bytes.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
__kernel void vec(__global const float4* in, __global float4* out, __global const float* s,
                  __global float* d) {
  size_t i = get_global_id(0);
  out[i] = in[i] * 2.0f;
  float2 v = vload2(i, s);
  vstore2(v, i + 1, d);
}

// CHECK: kernel vec: 0 loops (max depth 0), 4 sites
// CHECK-NEXT: [0] load 16B depth 0: {{.*}} load <4 x float>
// CHECK-NEXT: [1] store 16B depth 0: store <4 x float>
// CHECK-NEXT: [2] load 8B depth 0: {{.*}} @_Z6vload2
// CHECK-NEXT: [3] store 8B depth 0: {{.*}} @_Z7vstore2
