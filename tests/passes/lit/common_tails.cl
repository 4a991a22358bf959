// Ways into one block that end alike but for an operand are one load or store there, through a
// phi of what differs (SimplifyCFG's sinking of common code; NVPTX then reads or writes through
// a selected address): a warp whose lanes go both ways makes one step. Each kernel's ld.global
// and st.global checked against clang -O2 for NVPTX.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
// RUN: %opt -passes=cltrace-prepare %t.bc -S -o - | FileCheck %s --check-prefix=IR

// One load of a[i] or b[i], through a phi of the two addresses (InstCombine's fold of a phi of
// loads, before SimplifyCFG would sink them).
__kernel void if_else(__global const float* a, __global const float* b, __global const int* f,
                      __global float* out) {
  int x = get_global_id(0);
  float v;
  if (f[x]) v = a[x]; else v = b[x];
  out[x] = v * 2.0f;
}
// CHECK-LABEL: kernel if_else: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B depth 0
// IR-LABEL: define {{.*}} @if_else(
// IR: [[A:%[0-9]+]] = getelementptr inbounds float, float addrspace(1)* %0
// IR: [[B:%[0-9]+]] = getelementptr inbounds float, float addrspace(1)* %1
// IR: [[P:%[0-9]+]] = select i1 %{{[0-9]+}}, float addrspace(1)* [[A]], float addrspace(1)* [[B]]
// IR-NEXT: load float, float addrspace(1)* [[P]]

// Clamped neighbours written as ternaries: one load each, of in[x - 1] or in[x].
__kernel void ternaries(__global const float* in, __global float* out, int w) {
  int x = get_global_id(0);
  float left = (x > 0) ? in[x - 1] : in[x];
  float right = (x < w - 1) ? in[x + 1] : in[x];
  out[x] = left + right;
}
// CHECK-LABEL: kernel ternaries: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0
// CHECK-NEXT: [1] load 4B depth 0
// CHECK-NEXT: [2] store 4B depth 0

// A border written on an early return, the rest at the end (Sobel): one store, of 0 or g.
__kernel void border(__global const uchar* in, __global uchar* out, int w, int h) {
  int x = get_global_id(0), y = get_global_id(1);
  if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1) { out[y * w + x] = 0; return; }
  int gx = in[y * w + x + 1] - in[y * w + x - 1];
  out[y * w + x] = convert_uchar_sat(gx);
}
// CHECK-LABEL: kernel border: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 1B depth 0
// CHECK-NEXT: [1] load 1B depth 0
// CHECK-NEXT: [2] store 1B depth 0: store i8 %.sunk

// To two buffers; and three ways of a switch.
__kernel void two_buffers(__global const int* c, __global float* o, __global float* p) {
  int i = get_global_id(0);
  if (c[i]) o[i] = 1.0f; else p[i] = 2.0f;
}
// CHECK-LABEL: kernel two_buffers: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 4B depth 0
// CHECK-NEXT: [1] store 4B depth 0: store float %.sunk
__kernel void three_ways(__global const int* c, __global const float* a, __global float* o) {
  int i = get_global_id(0);
  float v;
  switch (c[i]) { case 0: v = a[i]; break; case 1: v = a[i + 1]; break; default: v = a[i + 2]; break; }
  o[i] = v;
}
// CHECK-LABEL: kernel three_ways: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B depth 0

// Apart, as in NVPTX: addresses the same in every iteration of the loop (NVPTX computes them
// before the loop, so the stores differ in two operands); stores of two types; a way that ends
// with a fence; a loaded value also used on its way.
__kernel void in_loop_invariant(__global const int* c, __global float* o, int n) {
  int i = get_global_id(0);
  for (int k = 0; k < n; ++k) {
    if (c[k] > i) o[i] = 1.0f; else o[i + 1] = 2.0f;
  }
}
// CHECK-LABEL: kernel in_loop_invariant: 1 loops (max depth 1), 3 sites
// CHECK-NEXT: [0] load 4B depth 1 loop 0
// CHECK-NEXT: [1] store 4B depth 1 loop 0: store float 1.0
// CHECK-NEXT: [2] store 4B depth 1 loop 0: store float 2.0
__kernel void two_types(__global const int* c, __global float* o, __global int* p) {
  int i = get_global_id(0);
  if (c[i]) o[i] = 1.0f; else p[i] = 2;
}
// CHECK-LABEL: kernel two_types: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0
// CHECK-NEXT: [1] store 4B depth 0: store float 1.0
// CHECK-NEXT: [2] store 4B depth 0: store i32 2
__kernel void ends_with_fence(__global const int* c, __global float* o) {
  int i = get_global_id(0);
  if (c[i]) { o[i] = 1.0f; } else { o[i + 1] = 2.0f; mem_fence(CLK_GLOBAL_MEM_FENCE); }
}
// CHECK-LABEL: kernel ends_with_fence: 0 loops (max depth 0), 4 sites
// CHECK-NEXT: [0] load 4B depth 0
// CHECK-NEXT: [1] store 4B depth 0: store float 1.0
// CHECK-NEXT: [2] store 4B depth 0: store float 2.0
// CHECK-NEXT: [3] fence
__kernel void used_on_its_way(__global const int* c, __global const float* a, __global float* o) {
  int i = get_global_id(0);
  float v;
  if (c[i]) { v = a[i]; o[i + 64] = v; } else { v = a[i + 1]; }
  o[i] = v;
}
// CHECK-LABEL: kernel used_on_its_way: 0 loops (max depth 0), 5 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B depth 0
// CHECK-NEXT: [3] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [4] store 4B depth 0

// Operands of an addition in the other order on each way (`a[i] + t`, `t + b[i]`): the additions
// are one (a phi for each operand), the loads stay apart, as each feeds a phi of its own (NVPTX
// reads through a selected address here). Once sinking the loads verified nothing and broke the
// module.
__kernel void commuted(__global const int* c, __global const float* a, __global const float* b,
                       __global float* o) {
  int i = get_global_id(0);
  float t = a[i + 64] * 2.0f;
  if (c[i]) o[i] = a[i] + t; else o[i] = t + b[i];
}
// CHECK-LABEL: kernel commuted: 0 loops (max depth 0), 5 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [2] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [3] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [4] store 4B depth 0
// IR-LABEL: define {{.*}} @commuted(
// IR: phi float
// IR-NEXT: phi float
// IR-NEXT: fadd float

// Three cases of a switch load, the default does not: SimplifyCFG gives the three a block of
// their own to sink the load into (`.sink.split`), so one load of a[i], a[i + 1] or b[i] there
// (NVPTX: ld f[i], branches, one ld.global at a label the three reach, st).
__kernel void switch_three_load(__global const float* a, __global const float* b, __global const int* f,
                                __global float* o) {
  int i = get_global_id(0);
  float r;
  switch (f[i]) {
    case 0: r = a[i]; break;
    case 1: r = a[i + 1]; break;
    case 2: r = b[i]; break;
    default: r = 0.0f;
  }
  o[i] = r;
}
// CHECK-LABEL: kernel switch_three_load: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B depth 0
// IR-LABEL: define {{.*}} @switch_three_load(
// IR: .sink.split:
// IR-NEXT: [[P:%.sunk[0-9]*]] = phi float addrspace(1)*
// IR-NEXT: load float, float addrspace(1)* [[P]]
