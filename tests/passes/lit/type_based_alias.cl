// Accesses of different types do not alias (C's type rules, which clang's type-based alias tags
// carry and a GPU compiler reasons with): a float is read once in a loop that stores only ints,
// and one load serves both mentions around an int store. Char stores and union members may
// alias anything (clang tags them so) and keep the loads.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare %t.bc -S -o - | FileCheck %s --check-prefix=IR
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s

// w[0] behind the read-once flag: the loop stores only ints.
// IR-LABEL: define {{.*}}spir_kernel void @float_over_ints(
// IR: br i1 %cltrace.fresh{{.*}}, label %[[READ:[0-9]+]], label
// IR: [[READ]]:
// IR-NEXT: load float, float addrspace(1)* %0
// A conditional overwrite merged into one store keeps the stores' int tag (Rodinia
// particlefilter's `ind[..] = ..; if (ind[..] >= max) ind[..] = 0;`).
// IR-LABEL: define {{.*}}spir_kernel void @float_over_overwrite(
// IR: br i1 %cltrace.fresh{{.*}}, label %[[READ2:[0-9]+]], label
// IR: [[READ2]]:
// IR-NEXT: load float, float addrspace(1)* %0
// IR: store i32 %{{.*}}, !tbaa
// IR-LABEL: define {{.*}}spir_kernel void @float_over_chars(
// IR-NOT: cltrace.fresh
// IR: ret void
// IR-LABEL: define {{.*}}spir_kernel void @union_members(
// IR-NOT: cltrace.fresh
// IR: ret void
__kernel void float_over_ints(__global const float* w, __global int* idx, int n) {
  int i = get_global_id(0);
  for (int j = 0; j < n; ++j) idx[i * n + j] = (int)(w[0] * j);
}
__kernel void float_over_overwrite(__global const float* w, __global int* idx, int n) {
  int i = get_global_id(0);
  for (int j = 0; j < n; ++j) {
    idx[i * n + j] = (int)(w[0] * j);
    if (idx[i * n + j] > 100) idx[i * n + j] = 0;
  }
}
__kernel void float_over_chars(__global const float* w, __global char* c, int n) {
  int i = get_global_id(0);
  for (int j = 0; j < n; ++j) c[i * n + j] = (char)(w[0] * j);
}
typedef union { float f; int i; } word;
__kernel void union_members(__global word* u, __global float* out, int n) {
  int i = get_global_id(0);
  float s = 0.0f;
  for (int j = 0; j < n; ++j) {
    u[i].i = j;
    s += u[i].f;
  }
  out[i] = s;
}

// a[i] once: the int store in between cannot change a float. Through a union, twice.
__kernel void reread_over_int(__global const float* a, __global int* flag, __global float* out) {
  size_t i = get_global_id(0);
  float x = a[i];
  flag[i] = 1;
  out[i] = x + a[i];
}
// CHECK-LABEL: kernel reread_over_int: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] store 4B depth 0: store i32 1
// CHECK-NEXT: [2] store 4B depth 0: store float
__kernel void reread_union(__global word* u, __global float* out) {
  size_t i = get_global_id(0);
  float x = u[i].f;
  u[i].i = 1;
  out[i] = x + u[i].f;
}
// CHECK-LABEL: kernel reread_union: 0 loops (max depth 0), 4 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] store 4B depth 0: store i32 1
// CHECK-NEXT: [2] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [3] store 4B depth 0: store float

// A later load of the address with a broader tag (a may_alias type; an element of an expanded
// vload4, which has none) may see what the int store wrote (g may be f): read again.
typedef float __attribute__((may_alias)) any_float;
__kernel void broader_tag(__global float* f, __global int* g, __global float* out) {
  int i = get_global_id(0);
  float a = f[i];
  g[i] = 0x40400000;
  float b = ((__global any_float*)f)[i];
  out[i] = a + 10.0f * b;
}
// CHECK-LABEL: kernel broader_tag: 0 loops (max depth 0), 4 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] store 4B depth 0: store i32 1077936128
// CHECK-NEXT: [2] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [3] store 4B depth 0: store float
__kernel void vload_after_int_store(__global float* f, __global int* g, __global float* out) {
  size_t o = get_global_id(0);
  float a = f[o * 4 + 1];
  g[o * 4 + 1] = 0x40400000;
  float b = vload4(o, f).y;
  out[o] = a + 10.0f * b;
}
// CHECK-LABEL: kernel vload_after_int_store: 0 loops (max depth 0), 4 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] store 4B depth 0: store i32 1077936128
// CHECK-NEXT: [2] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [3] store 4B depth 0: store float
