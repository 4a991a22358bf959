// A load before a loop whose value only the loop's iterations use is made below the loop's first
// test, as clang -O2 for NVPTX reads it (LoopRotate's guard, then the load sunk below it): a
// loop that runs no iteration reads nothing (each kernel's ld.global checked against it).
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
// RUN: %opt -passes=cltrace-prepare %t.bc -S -o - | FileCheck %s --check-prefix=IR

// a[i] after n[i], only when n[i] > 0; the loop takes the value from the block where both meet.
__kernel void in_loop(__global const float* a, __global const int* n, __global float* out) {
  int i = get_global_id(0);
  float v = a[i];
  float s = 0.0f;
  int m = n[i];
  for (int j = 0; j < m; ++j) s += v * j;
  out[i] = s;
}
// CHECK-LABEL: kernel in_loop: 1 loops (max depth 1), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B depth 0
// IR-LABEL: define {{.*}} @in_loop(
// IR: [[M:%[0-9]+]] = load i32
// IR-NEXT: [[FIRST:%[0-9]+]] = icmp slt i32 0, [[M]]
// IR-NEXT: br i1 [[FIRST]], label %cltrace.first.iteration, label %cltrace.loop.entry
// IR: cltrace.first.iteration:
// IR-NEXT: [[V:%[0-9]+]] = load float
// IR-NEXT: br label %cltrace.loop.entry
// IR: cltrace.loop.entry:
// IR-NEXT: [[KEPT:%[0-9]+]] = phi float [ [[V]], %cltrace.first.iteration ], [ poison, %{{[0-9]+}} ]
// IR-NEXT: br label %[[HEADER:[0-9]+]]
// IR: [[HEADER]]:
// IR: call float @llvm.fmuladd.f32(float [[KEPT]]

// With the arithmetic on it, for the outer of two loops; the float4's components the loop reads.
__kernel void nested(__global const float* a, __global const float4* p, __global const int* n,
                     __global float* out) {
  int i = get_global_id(0);
  float v = a[i] * 3.0f;
  float4 q = p[i];
  float s = 0.0f;
  int m = n[i];
  for (int j = 0; j < m; ++j)
    for (int k = 0; k < j; ++k) s += v * k + q.x + q.z;
  out[i] = s;
}
// CHECK-LABEL: kernel nested: 2 loops (max depth 2), 5 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [3] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [4] store 4B depth 0
// IR-LABEL: define {{.*}} @nested(
// IR: load i32
// IR: cltrace.first.iteration:
// IR-NEXT: [[A:%[0-9]+]] = load float
// IR-NEXT: fmul float [[A]], 3.0
// IR-NEXT: load float
// IR-NEXT: load float
// IR-NEXT: br label %cltrace.loop.entry

// A while loop on a kernel argument: the test redone before it reads nothing.
__kernel void while_loop(__global float4* force, __global const float4* position, const int count,
                         __global const int* list, int stride) {
  uint idx = get_global_id(0);
  float4 ipos = position[idx];
  float4 f = (float4)(0.0f);
  int j = 0;
  while (j < count) {
    float4 jpos = position[list[j * stride + idx]];
    f.x += ipos.x - jpos.x;
    f.y += ipos.y - jpos.y;
    f.z += ipos.z - jpos.z;
    j++;
  }
  force[idx] = f;
}
// CHECK-LABEL: kernel while_loop: 1 loops (max depth 1), 6 sites
// CHECK-NEXT: [0] load 8B depth 0: {{.*}} = load <2 x float>
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] load 4B depth 1 loop 0
// CHECK-NEXT: [3] load 8B depth 1 loop 0
// CHECK-NEXT: [4] load 4B depth 1 loop 0
// CHECK-NEXT: [5] store 16B depth 0
// IR-LABEL: define {{.*}} @while_loop(
// IR-NOT: load
// IR: br i1 %{{[0-9]+}}, label %cltrace.first.iteration, label %cltrace.loop.entry
// IR: cltrace.first.iteration:
// IR-NEXT: load <2 x float>
// IR-NEXT: extractelement
// IR-NEXT: extractelement
// IR-NEXT: load float

// Stay where they are, as in NVPTX: a value used after the loop too; a store after the load (out
// may be a); a do-while loop (its body runs at least once). And, unlike NVPTX: a loop whose test
// reads memory (NVPTX reads n[0] once more for its guard, then a[i] below it); a kernel with a
// barrier inside a branch (PoCL counts an access moved there wrongly: branch_motion.h).
__kernel void used_after(__global const float* a, __global const int* n, __global float* out) {
  int i = get_global_id(0);
  float v = a[i];
  float s = 0.0f;
  for (int j = 0; j < n[0]; ++j) s += v;
  out[i] = s + v;
}
__kernel void written_after(__global const float* a, __global const int* n, __global float* out) {
  int i = get_global_id(0);
  float v = a[i];
  out[i + 1] = 0.0f;
  float s = 0.0f;
  int m = n[i];
  for (int j = 0; j < m; ++j) s += v;
  out[i] = s;
}
__kernel void test_reads(__global const float* a, __global const int* n, __global float* out) {
  int i = get_global_id(0);
  float v = a[i];
  float s = 0.0f;
  for (int j = 0; n[j] != 0; ++j) s += v;
  out[i] = s;
}
__kernel void do_while(__global const float* a, __global const int* n, __global float* out) {
  int i = get_global_id(0);
  float v = a[i];
  float s = 0.0f;
  int j = 0;
  int m = n[i];
  do { s += v; } while (++j < m);
  out[i] = s;
}
__kernel void barrier_in_branch(__global const float* a, __global const int* n, __global float* out) {
  int i = get_global_id(0);
  if (n[0] > 1) barrier(CLK_GLOBAL_MEM_FENCE);
  float v = a[i];
  float s = 0.0f;
  int m = n[i];
  for (int j = 0; j < m; ++j) s += v;
  out[i] = s;
}
// IR-LABEL: define {{.*}} @used_after(
// IR-NOT: cltrace.first.iteration
// IR-LABEL: define {{.*}} @written_after(
// IR-NOT: cltrace.first.iteration
// IR-LABEL: define {{.*}} @test_reads(
// IR-NOT: cltrace.first.iteration
// IR-LABEL: define {{.*}} @do_while(
// IR-NOT: cltrace.first.iteration
// IR-LABEL: define {{.*}} @barrier_in_branch(
// IR-NOT: cltrace.first.iteration
// IR: ret void
