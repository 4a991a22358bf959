// Loads and stores across branches as clang -O2 for NVPTX places them (each kernel's ld.global
// and st.global checked against it): a load only one way uses is made on that way (MachineSink),
// one both ways start with is made once before the branch (SimplifyCFG's hoisting), and stores
// both ways end with to one address are one where they meet (MergedLoadStoreMotion).
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
// RUN: %opt -passes=cltrace-prepare %t.bc -S -o - | FileCheck %s --check-prefix=IR

// a[i] is read only where f[i] is set: after f[i], in the branch, and further down a second one.
__kernel void sink_if(__global const float* a, __global const int* f, __global float* o) {
  int i = get_global_id(0);
  float v = a[i];
  if (f[i]) o[i] = v * 2.0f;
}
// CHECK-LABEL: kernel sink_if: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B
// IR-LABEL: define {{.*}} @sink_if(
// IR: [[A:%[0-9]+]] = getelementptr inbounds float, float addrspace(1)* %0
// IR: br i1 %{{[0-9]+}}, label %[[THEN:[0-9]+]], label
// IR: [[THEN]]:
// IR-NEXT: load float, float addrspace(1)* [[A]]
__kernel void sink_deeper(__global const float* a, __global const int* f, __global const int* g,
                          __global float* o) {
  int i = get_global_id(0);
  float v = a[i];
  if (f[i]) {
    if (g[i]) o[i] = v;
  }
}
// CHECK-LABEL: kernel sink_deeper: 0 loops (max depth 0), 4 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [2] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [3] store 4B
// IR-LABEL: define {{.*}} @sink_deeper(
// IR: [[A:%[0-9]+]] = getelementptr inbounds float, float addrspace(1)* %0
// IR: load i32
// IR: load i32
// IR-NEXT: icmp
// IR-NEXT: br i1 %{{[0-9]+}}, label %[[THEN:[0-9]+]], label
// IR: [[THEN]]:
// IR-NEXT: load float, float addrspace(1)* [[A]]

// Builtins that only compute, called on the way (convergent, as every OpenCL C call), are no
// barriers: a[i] is still read where f[i] is set.
__kernel void builtin_in_branch(__global const float* a, __global const int* f, __global float* o) {
  int i = get_global_id(0);
  float v = a[i];
  if (f[i]) o[i] = native_sin(v) + get_local_id(0);
}
// CHECK-LABEL: kernel builtin_in_branch: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B

// Stays: a write after the load (o may be a), a value both ways use.
__kernel void written_between(__global const float* a, __global const int* f, __global float* o) {
  int i = get_global_id(0);
  float v = a[i];
  o[0] = 1.0f;
  if (f[i]) o[i] = v * 2.0f;
}
// CHECK-LABEL: kernel written_between: 0 loops (max depth 0), 4 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] store 4B
// CHECK-NEXT: [2] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [3] store 4B
__kernel void used_both_ways(__global const float* a, __global const int* f, __global float* o) {
  int i = get_global_id(0);
  float v = a[i];
  if (f[i]) o[i] = v * 2.0f; else o[i + 1] = v;
}
// (The stores both ways end with are one, through a chosen address: see two_addresses.)
// CHECK-LABEL: kernel used_both_ways: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [2] store 4B depth 0: store float %.sunk

// a[i] both ways: one load, before the branch; in a loop's body likewise (one a[k] a step).
__kernel void hoist_both(__global const float* a, __global const int* f, __global float* o) {
  int i = get_global_id(0);
  float x;
  if (f[i]) x = a[i] * 2.0f; else x = a[i] + 1.0f;
  o[i] = x;
}
// CHECK-LABEL: kernel hoist_both: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B
// IR-LABEL: define {{.*}} @hoist_both(
// IR: load i32
// IR: [[V:%[0-9]+]] = load float
// IR-NEXT: fmul float [[V]], 2.0
// IR-NEXT: fadd float [[V]], 1.0
// IR-NEXT: select i1
__kernel void hoist_in_loop(__global const float* a, __global const int* f, __global float* o, int n) {
  int i = get_global_id(0);
  float x = 0.0f;
  for (int k = 0; k < n; ++k) {
    if (f[k]) x += a[k] * 2.0f; else x += a[k] + 1.0f;
  }
  o[i] = x;
}
// CHECK-LABEL: kernel hoist_in_loop: 1 loops (max depth 1), 3 sites
// CHECK-NEXT: [0] load 4B depth 1 loop 0: {{.*}} = load i32
// CHECK-NEXT: [1] load 4B depth 1 loop 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B depth 0

// Both ways ending with a store to one address: one store where they meet, of the value each way
// chose (NVPTX: one st.global.f32 and no branch left). To two addresses, with the same address
// arithmetic but for one operand, one store too, through a phi of that operand (SimplifyCFG's
// sinking; NVPTX selects the address): a warp whose lanes go both ways writes in one step.
__kernel void relu(__global const float* a, __global float* o) {
  int i = get_global_id(0);
  float x = a[i];
  if (x > 0.0f) o[i] = x; else o[i] = 0.0f;
}
// CHECK-LABEL: kernel relu: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] store 4B depth 0: store float %cltrace.stored,
// IR-LABEL: define {{.*}} @relu(
// IR: [[X:%[0-9]+]] = load float
// IR: [[O:%[0-9]+]] = getelementptr inbounds float, float addrspace(1)* %1
// IR-NEXT: %cltrace.stored = select i1 %{{[0-9]+}}, float [[X]], float 0.000000e+00
// IR-NEXT: store float %cltrace.stored, float addrspace(1)* [[O]]
__kernel void one_way_loads(__global const float* a, __global float* o, int n) {
  int i = get_global_id(0);
  if (n > 2) o[i] = a[i]; else o[i] = 1.0f;
}
// CHECK-LABEL: kernel one_way_loads: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] store 4B depth 0: store float %cltrace.stored,
__kernel void two_addresses(__global const float* a, __global float* o) {
  int i = get_global_id(0);
  float x = a[i];
  if (x > 0.0f) o[i] = x; else o[i + 1] = 0.0f;
}
// CHECK-LABEL: kernel two_addresses: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] store 4B depth 0: store float %.sunk, float addrspace(1)* [[P:%[0-9]+]]
// IR-LABEL: define {{.*}} @two_addresses(
// IR: [[X:%[0-9]+]] = load float
// IR: [[I:%[0-9]+]] = add nsw i32 %{{[0-9]+}}, 1
// IR-NEXT: [[J:%[0-9]+]] = sext i32 [[I]] to i64
// IR: [[K:%.sunk[0-9]*]] = phi i64 [ [[J]], %{{[0-9]+}} ], [ %{{[0-9]+}}, %{{[0-9]+}} ]
// IR-NEXT: %.sunk = phi float [ 0.000000e+00, %{{[0-9]+}} ], [ [[X]], %{{[0-9]+}} ]
// IR-NEXT: [[P:%[0-9]+]] = getelementptr inbounds float, float addrspace(1)* %1, i64 [[K]]
// IR-NEXT: store float %.sunk, float addrspace(1)* [[P]]

// In an enclosing if too (MergedLoadStoreMotion takes the two ways of the inner if).
__kernel void relu_guarded(__global const float* a, __global float* o, int n) {
  int i = get_global_id(0);
  if (i < n) {
    float x = a[i];
    if (x > 0.0f) o[i] = x; else o[i] = 0.0f;
  }
}
// CHECK-LABEL: kernel relu_guarded: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] store 4B depth 0: store float %cltrace.stored,
