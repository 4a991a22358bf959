// A load of what another load of the loop read the previous iteration (`s += a[j] * a[j + 1];`:
// a[j + 1] read before is a[j] now) is read in the first iteration only, after the loop is
// entered; later iterations take the other load's value, kept at the end of each iteration,
// as clang -O2 for NVPTX (GVN's load PRE round the back edge) reads it once, before the loop.
// Only for addresses a[j + c], j the loop's counter, that GVN translates to the previous
// iteration. Each kernel was compiled with clang -O2 for nvptx64 (-fno-unroll-loops): one
// ld.global before the loop and one in it where carried, two in the loop where not.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare %t.bc -S -o - | FileCheck %s

// a[j] behind the read-once flag; a[j + 1]'s value kept for the next iteration, stored last.
// CHECK-LABEL: define {{.*}}spir_kernel void @pairs(
// CHECK: [[KEPT:%cltrace.invariant.*]] = phi float [ undef, %{{.*}} ], [ [[AHEAD:%[0-9]+]], %{{.*}} ]
// CHECK: br i1 %cltrace.fresh{{.*}}, label %[[READ:[0-9]+]], label
// CHECK: [[READ]]:
// CHECK-NEXT: load float, float addrspace(1)*
// CHECK: [[AHEAD]] = load float, float addrspace(1)*
// CHECK-NOT: br i1 %cltrace.fresh
// CHECK: ret void
__kernel void pairs(__global const float* a, __global float* o, int m) {
  float s = 0;
  for (int j = 0; j < m; j++) s += a[j] * a[j + 1];
  o[get_global_id(0)] = s;
}

// The load ahead first in the iteration (a[j + 1] - a[j]), a step of 2 (a[j] and a[j + 2]), a
// long counter with a[j - 1] (no widening to tell apart): each carried.
// CHECK-LABEL: define {{.*}}spir_kernel void @ahead_first(
// CHECK-COUNT-1: br i1 %cltrace.fresh
// CHECK-LABEL: define {{.*}}spir_kernel void @step_two(
// CHECK-COUNT-1: br i1 %cltrace.fresh
// CHECK-LABEL: define {{.*}}spir_kernel void @long_counter(
// CHECK-COUNT-1: br i1 %cltrace.fresh
// CHECK-LABEL: define {{.*}}spir_kernel void @three(
// CHECK-COUNT-1: br i1 %cltrace.fresh
// CHECK-NOT: br i1 %cltrace.fresh
// CHECK-LABEL: define {{.*}}spir_kernel void @chain(
// CHECK-COUNT-2: br i1 %cltrace.fresh
// CHECK-NOT: br i1 %cltrace.fresh
// CHECK: ret void
__kernel void ahead_first(__global const float* a, __global float* o, int m) {
  float s = 0;
  for (int j = 0; j < m; j++) s += a[j + 1] - a[j];
  o[get_global_id(0)] = s;
}
__kernel void step_two(__global const float* a, __global float* o, int m) {
  float s = 0;
  for (int j = 0; j < m; j += 2) s += a[j] * a[j + 2];
  o[get_global_id(0)] = s;
}
__kernel void long_counter(__global const float* a, __global float* o, long m) {
  float s = 0;
  for (long j = 1; j < m; j++) s += a[j - 1] * a[j];
  o[get_global_id(0)] = s;
}
// a[j - 1] + a[j] + a[j + 1] with an int counter: a[j] carried, a[j - 1] not (sign-extended).
__kernel void three(__global const float* a, __global float* o, int m) {
  float s = 0;
  for (int j = 1; j < m; j++) s += a[j - 1] + a[j] + a[j + 1];
  o[get_global_id(0)] = s;
}

// A chain: a[j] takes a[j + 1], itself carried from a[j + 2] (NVPTX: two loads before the
// loop, one in it).
__kernel void chain(__global const float* a, __global float* o, int m) {
  float s = 0;
  for (int j = 0; j < m; j++) s += a[j] * a[j + 1] * a[j + 2];
  o[get_global_id(0)] = s;
}

// Not carried (NVPTX reads both every iteration): a[j - 1] with an int counter, a[i + j], the
// load ahead in a branch, a store in the loop that may write a.
// CHECK-LABEL: define {{.*}}spir_kernel void @int_minus_one(
// CHECK-NOT: cltrace.fresh
// CHECK-LABEL: define {{.*}}spir_kernel void @offset_by_id(
// CHECK-NOT: cltrace.fresh
// CHECK-LABEL: define {{.*}}spir_kernel void @ahead_in_branch(
// CHECK-NOT: cltrace.fresh
// CHECK-LABEL: define {{.*}}spir_kernel void @stored_between(
// CHECK-NOT: cltrace.fresh
// CHECK: ret void
__kernel void int_minus_one(__global const float* a, __global float* o, int m) {
  float s = 0;
  for (int j = 1; j < m; j++) s += a[j - 1] * a[j];
  o[get_global_id(0)] = s;
}
__kernel void offset_by_id(__global const float* a, __global float* o, int m) {
  int i = get_global_id(0);
  float s = 0;
  for (int j = 0; j < m; j++) s += a[i + j] * a[i + j + 1];
  o[i] = s;
}
__kernel void ahead_in_branch(__global const float* a, __global float* o, int m) {
  float s = 0;
  for (int j = 0; j < m; j++) {
    float x = a[j];
    if (x > 0) s += x * a[j + 1];
  }
  o[get_global_id(0)] = s;
}
__kernel void stored_between(__global const float* a, __global float* o, int m) {
  int i = get_global_id(0);
  for (int j = 1; j < m; j++) o[i * m + j] = a[j] + a[j + 1];
}
