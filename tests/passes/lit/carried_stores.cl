// A load of what the loop's previous iteration stored (`c[x] = w[x] + c[x - 1]`) is read in the
// first iteration only, after the loop is entered, and later iterations take the value stored,
// as a GPU compiler's loop load elimination keeps it in a register. Only when the store runs
// every iteration after the load, exactly one iteration's step ahead of it, and nothing else in
// the loop may write there.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare %t.bc -S -o - | FileCheck %s

// c[x - 1] behind the read-once flag; the value stored to c[x] is kept for the next iteration.
// CHECK-LABEL: define {{.*}}spir_kernel void @prefix(
// CHECK: [[KEPT:%cltrace.invariant.*]] = phi float [ undef, %{{.*}} ], [ [[NEXT:%.*]], %{{.*}} ]
// CHECK: br i1 %cltrace.fresh{{.*}}, label %[[READ:[0-9]+]], label
// CHECK: [[READ]]:
// CHECK-NEXT: load float, float addrspace(1)*
// CHECK: [[NEXT]] = fadd float
// CHECK-NEXT: getelementptr
// CHECK-NEXT: store float [[NEXT]]
__kernel void prefix(__global const float* w, __global float* c, int n) {
  for (int x = 1; x < n; x++) c[x] = w[x] + c[x - 1];
}

// An int store elsewhere does not stop it (type rules).
// CHECK-LABEL: define {{.*}}spir_kernel void @prefix_visited(
// CHECK-COUNT-1: br i1 %cltrace.fresh
// CHECK-NOT: br i1 %cltrace.fresh
// CHECK: ret void
__kernel void prefix_visited(__global float* a, __global int* visits, int n) {
  for (int x = 1; x < n; x++) {
    a[x] = a[x - 1] * 0.5f;
    visits[x] = x;
  }
}

// One step ahead, but not element x - 1 of x counting up by one: a row after row recurrence,
// (r - 1) * n + col against r * n + col; i * m + j - 1; a[x - 2] with x += 2; a[x + 1] with x--.
// NVPTX reads each every iteration (clang -O2 nvptx64, also without unrolling: ld, ld, st an
// iteration), and so does cltrace.
// CHECK-LABEL: define {{.*}}spir_kernel void @rows(
// CHECK-NOT: cltrace.fresh
// CHECK: ret void
__kernel void rows(__global float* a, __global int* visits, int n, int m) {
  int col = get_global_id(0);
  for (int r = 1; r < m; r++) {
    a[r * n + col] += 0.5f * a[(r - 1) * n + col];
    visits[r] = col;
  }
}
// CHECK-LABEL: define {{.*}}spir_kernel void @row_prefix(
// CHECK-NOT: cltrace.fresh
// CHECK: ret void
__kernel void row_prefix(__global float* c, __global const float* a, int m) {
  int i = get_global_id(0);
  for (int j = 1; j < m; j++) c[i * m + j] = c[i * m + j - 1] + a[j];
}
// CHECK-LABEL: define {{.*}}spir_kernel void @two_apart(
// CHECK-NOT: cltrace.fresh
// CHECK-LABEL: define {{.*}}spir_kernel void @down(
// CHECK-NOT: cltrace.fresh
// CHECK: ret void
__kernel void two_apart(__global float* a, int n) {
  for (int x = 2; x < n; x += 2) a[x] = a[x - 2] * 0.5f;
}
__kernel void down(__global float* a, int n) {
  for (int x = n - 2; x >= 0; x--) a[x] = a[x + 1] * 0.5f;
}

// Kept, read every iteration: another float store (b may be a), two steps back, the store
// before the load in the iteration, the store on one path only, a barrier in the loop.
// CHECK-LABEL: define {{.*}}spir_kernel void @other_store(
// CHECK-NOT: cltrace.fresh
// CHECK-LABEL: define {{.*}}spir_kernel void @two_back(
// CHECK-NOT: cltrace.fresh
// CHECK-LABEL: define {{.*}}spir_kernel void @store_first(
// CHECK-NOT: cltrace.fresh
// CHECK-LABEL: define {{.*}}spir_kernel void @some_paths(
// CHECK-NOT: cltrace.fresh
// CHECK-LABEL: define {{.*}}spir_kernel void @with_barrier(
// CHECK-NOT: cltrace.fresh
// CHECK-LABEL: define {{.*}}spir_kernel void @through_integer(
// CHECK-NOT: cltrace.fresh
// CHECK-LABEL: define {{.*}}spir_kernel void @invariant_through_integer(
// CHECK-NOT: cltrace.fresh
// CHECK: ret void
__kernel void other_store(__global float* a, __global float* b, int n) {
  for (int x = 1; x < n; x++) { a[x] = a[x - 1] + 1.0f; b[x] = 2.0f; }
}
__kernel void two_back(__global float* a, int n) {
  for (int x = 2; x < n; x++) a[x] = a[x - 2] + 1.0f;
}
__kernel void store_first(__global float* a, __global float* out, int n) {
  float s = 0.0f;
  for (int x = 1; x < n; x++) { a[x] = 1.0f; s += a[x - 1]; }
  out[0] = s;
}
__kernel void some_paths(__global float* a, int n) {
  for (int x = 1; x < n; x++) {
    float v = a[x - 1];
    if (v > 0.0f) a[x] = v * 2.0f;
  }
}
__kernel void with_barrier(__global float* a, int n) {
  for (int x = 1; x < n; x++) {
    a[x] = a[x - 1] + 1.0f;
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
}
// A private pointer made from a global address through an integer writes global memory on
// PoCL: such a store, not into a private variable, may reach the address (here it does), for a
// carried load and for a loop-invariant one alike.
__kernel void through_integer(__global float* a, __global int* o, int n) {
  for (int x = 1; x < n; x++) {
    float v = a[x - 1];
    o[x] = (int)v;
    a[x] = v + 1.0f;
    *(float*)(ulong)&a[x] = 42.0f + x;
  }
}
__kernel void invariant_through_integer(__global float* a, __global int* o, int n, int m) {
  for (int x = 0; x < n; x++) {
    o[x] = (int)a[m];
    *(float*)(ulong)&a[m] = 42.0f + x;
  }
}
