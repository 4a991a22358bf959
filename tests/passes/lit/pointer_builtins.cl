// Builtins that take a pointer are recorded as the accesses they make: the math builtins that
// store a second result through it (sincos, fract, modf, frexp, lgamma_r, remquo) as stores of
// that result's size when it points to global memory, and under OpenCL C 2.0, whose overloads
// take generic pointers, vloadN and the C11 atomics as the named-space calls they become.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
// RUN: %clang-spir -cl-std=CL2.0 -DCL20 %s -o %t20.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t20.bc | FileCheck %s --check-prefixes=CHECK,CL20

__kernel void out_params(__global float* in, __global float4* c, __global int* e, __global float* f) {
  int i = get_global_id(0);
  float x = in[i];
  float4 s = sincos((float4)(x), &c[i]);
  float local_part;
  in[i] = s.x + frexp(x, &e[i]) + fract(x, &f[i]) + modf(x, &local_part) + remquo(x, 0.7f, &e[8 + i]);
}
// CHECK-LABEL: kernel out_params: 0 loops (max depth 0), 6 sites
// CHECK-NEXT: [0] load 4B depth 0:
// CHECK-NEXT: [1] store 16B depth 0: {{.*}}@_Z6sincosDv4_fPU3AS1S_(
// CHECK-NEXT: [2] store 4B depth 0: {{.*}}@_Z5frexpfPU3AS1i(
// CHECK-NEXT: [3] store 4B depth 0: {{.*}}@_Z5fractfPU3AS1f(
// CHECK-NEXT: [4] store 4B depth 0: {{.*}}@_Z6remquoffPU3AS1i(
// CHECK-NEXT: [5] store 4B depth 0: store float

#ifdef CL20
__kernel void generic_overloads(__global float* in, __global atomic_int* counter) {
  int i = get_global_id(0);
  float4 v = vload4(i, in);
  atomic_fetch_add(&counter[0], (int)v.x);  // only .x is used: its load alone
  atomic_work_item_fence(CLK_GLOBAL_MEM_FENCE, memory_order_seq_cst, memory_scope_device);
}
#endif
// CL20-LABEL: kernel generic_overloads: 0 loops (max depth 0), 3 sites
// CL20-NEXT: [0] load 4B depth 0: {{.*}} = load float, float addrspace(1)*
// CL20-NEXT: [1] atomic 4B depth 0: {{.*}}@_Z16atomic_fetch_addPU3AS1VU7_Atomicii(
// CL20-NEXT: [2] fence 0B depth 0 flags 2: {{.*}}@_Z22atomic_work_item_fence
