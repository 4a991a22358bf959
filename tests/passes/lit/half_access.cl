// The half-precision builtins are the loads and stores of halves a GPU compiler makes of them
// (prepare): through a half pointer, only 2-byte aligned, one 2-byte access per half, and only
// for the halves whose values are used (also through a swizzle); vloada_halfN/vstorea_halfN,
// whose pointer has the vector's alignment, one access of the vector (6 bytes for 3 halves,
// at a stride of 4). A half read twice is one load; a store's halves come from the builtin run
// on private memory, so its rounding mode is the library's.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
// RUN: %opt -passes=cltrace-prepare %t.bc -S -o - | FileCheck %s --check-prefix=IR
__kernel void halves(__global const half* a, __global half* b, __global float* out) {
  size_t i = get_global_id(0);
  float f = vload_half(i, a) + vload_half(i, a);
  float4 g = vload_half4(i, a);
  vstore_half3_rtz(g.xyz, i, b);
  float4 h = vloada_half4(i, a);
  vstorea_half3(h.xyz, i, b);
  out[i] = f + vload_half8(1, a).s7;
}
// CHECK: kernel halves: 0 loops (max depth 0), 11 sites
// CHECK-NEXT: [0] load 2B depth 0: {{.*}} = load i16, i16 addrspace(1)* {{.*}}, align 2
// CHECK-NEXT: [1] load 2B depth 0: {{.*}} = load i16, i16 addrspace(1)* {{.*}}, align 2
// CHECK-NEXT: [2] load 2B depth 0: {{.*}} = load i16, i16 addrspace(1)* {{.*}}, align 2
// CHECK-NEXT: [3] load 2B depth 0: {{.*}} = load i16, i16 addrspace(1)* {{.*}}, align 2
// CHECK-NEXT: [4] store 2B depth 0: store i16 {{.*}}, i16 addrspace(1)* {{.*}}, align 2
// CHECK-NEXT: [5] store 2B depth 0: store i16 {{.*}}, i16 addrspace(1)* {{.*}}, align 2
// CHECK-NEXT: [6] store 2B depth 0: store i16 {{.*}}, i16 addrspace(1)* {{.*}}, align 2
// CHECK-NEXT: [7] load 8B depth 0: {{.*}} = load <4 x i16>, <4 x i16> addrspace(1)* {{.*}}, align 8
// CHECK-NEXT: [8] store 6B depth 0: store <3 x i16> {{.*}}, <3 x i16> addrspace(1)* {{.*}}, align 8
// CHECK-NEXT: [9] load 2B depth 0: {{.*}} = load i16, i16 addrspace(1)* {{.*}}, align 2
// CHECK-NEXT: [10] store 4B depth 0: store float

// The rounding store runs on private memory; the halves read: i, 4i, 4i + 1, 4i + 2, 8 + 7.
// IR-LABEL: define {{.*}}spir_kernel void @halves(
// IR: getelementptr i16, i16 addrspace(1)* %{{.*}}, i64 %{{.*}}
// IR: call spir_func void @_Z16vstore_half3_rtzDv3_fmPDh(<3 x float> %{{.*}}, i64 0, half* %{{.*}})
// IR: call spir_func void @_Z12vstore_half3Dv3_fmPDh(<3 x float> %{{.*}}, i64 0, half* %{{.*}})
// IR: getelementptr i16, i16 addrspace(1)* %{{.*}}, i64 15
