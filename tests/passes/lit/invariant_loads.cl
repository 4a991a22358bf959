// Loop-invariant loads are read once per entry into their loop, as a GPU compiler hoists them:
// the load stays in place behind a flag set on the way into the loop and cleared once it has
// read; later iterations take the value it read. Only plain __global or __constant loads whose
// address comes from outside the loop (or from such loads), in a block every iteration runs, in a
// loop that writes no __global memory (no store, atomic or barrier) but to the load's own
// address or where alias analysis shows the load's address is not.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare %t.bc -S -o - | FileCheck %s

// w[1]: read behind the flag; in[k] every iteration.
// CHECK-LABEL: define {{.*}}spir_kernel void @hoisted(
// CHECK: [[KEPT:%cltrace.invariant.*]] = phi float [ undef, %{{.*}} ], [ [[AFTER:%cltrace.invariant.*]], %{{.*}} ]
// CHECK-NEXT: [[FRESH:%cltrace.fresh.*]] = phi i1 [ true, %{{.*}} ], [ [[CLEARED:%cltrace.fresh.*]], %{{.*}} ]
// CHECK: [[W:%.*]] = getelementptr inbounds float, float addrspace(1)* %0, i64 1
// CHECK-NEXT: br i1 [[FRESH]], label %[[READ:.*]], label %[[ON:.*]]
// CHECK: [[READ]]:
// CHECK-NEXT: [[V:%.*]] = load float, float addrspace(1)* [[W]]
// CHECK-NEXT: br label %[[ON]]
// CHECK: [[ON]]:
// CHECK-NEXT: [[AFTER]] = phi float [ [[V]], %[[READ]] ], [ [[KEPT]], %{{.*}} ]
// CHECK-NEXT: [[CLEARED]] = phi i1 [ false, %[[READ]] ], [ [[FRESH]], %{{.*}} ]
// CHECK: [[X:%.*]] = load float, float addrspace(1)*
// CHECK-NEXT: call float @llvm.fmuladd.f32(float [[AFTER]], float [[X]],
__kernel void hoisted(__global const float* w, __global const float* in, __global float* out, int n) {
  float s = 0;
  for (int k = 0; k < n; ++k) s += w[1] * in[k];
  out[get_global_id(0)] = s;
}

// An address from another load read once (w[idx[0]]): read once too, after it.
// CHECK-LABEL: define {{.*}}spir_kernel void @chained(
// CHECK: br i1 %cltrace.fresh{{.*}}, label %[[READ1:[0-9]+]], label
// CHECK: [[READ1]]:
// CHECK-NEXT: load i32, i32 addrspace(1)* %0
// CHECK: br i1 %cltrace.fresh{{.*}}, label %[[READ2:[0-9]+]], label
// CHECK: [[READ2]]:
// CHECK-NEXT: load float, float addrspace(1)* %{{.*}}
// x[i], every iteration:
// CHECK-NOT: br i1 %cltrace.fresh
// CHECK: load float, float addrspace(1)*
// CHECK-NOT: br i1 %cltrace.fresh
// CHECK: ret void
__kernel void chained(__global const int* idx, __global const float* w, __global const float* x,
                      __global float* out, int n) {
  float s = 0;
  for (int i = 0; i < n; i++) s += w[idx[0]] * x[i];
  out[get_global_id(0)] = s;
}

// An address from get_global_id (a call clang's -O0 code makes inside the loop, touching no
// memory), and a loop whose only writes are atomics on __local memory: read once.
// CHECK-LABEL: define {{.*}}spir_kernel void @by_id(
// CHECK: [[FRESH:%cltrace.fresh.*]] = phi i1 [ true,
// CHECK: call spir_func i64 @_Z13get_global_idj
// CHECK: br i1 [[FRESH]], label %[[READ:[0-9]+]], label
// CHECK: [[READ]]:
// CHECK-NEXT: load float, float addrspace(1)*
// CHECK-LABEL: define {{.*}}spir_kernel void @local_atomic(
// CHECK: [[FRESH:%cltrace.fresh.*]] = phi i1 [ true,
// CHECK: br i1 [[FRESH]], label %[[READ:[0-9]+]], label
// CHECK: [[READ]]:
// CHECK-NEXT: load i32, i32 addrspace(1)* %0
// CHECK: call spir_func i32 @_Z10atomic_addPU3AS3Vii(
__kernel void by_id(__global const float* w, __global const float* x, __global float* out, int n) {
  float s = 0;
  for (int i = 0; i < n; i++) s += w[get_global_id(0)] * x[i];
  out[get_global_id(0)] = s;
}
__kernel void local_atomic(__global const int* w, __global const int* x, __global int* out, __local int* l, int n) {
  int lid = get_local_id(0);
  l[lid] = 0;
  for (int i = 0; i < n; i++) atomic_add(&l[lid], w[0] * x[i]);
  out[get_global_id(0)] = l[lid];
}

// A loop whose only store is to the load's own address: out[n] is read once, and later
// iterations take the value last stored (the phi at the loop's header takes the sum stored);
// w[1] stays a load on every iteration (out may be w).
// CHECK-LABEL: define {{.*}}spir_kernel void @own_address(
// CHECK: [[KEPT:%cltrace.invariant.*]] = phi float [ undef, %{{.*}} ], [ [[SUM:%[0-9]+]], %{{.*}} ]
// CHECK: [[W:%.*]] = load float, float addrspace(1)*
// CHECK: [[OUT:%.*]] = getelementptr inbounds float, float addrspace(1)* %1,
// CHECK-NEXT: br i1 %cltrace.fresh{{.*}}, label %[[READ:[0-9]+]], label %[[ON:[0-9]+]]
// CHECK: [[READ]]:
// CHECK-NEXT: [[V:%.*]] = load float, float addrspace(1)* [[OUT]]
// CHECK: [[ON]]:
// CHECK-NEXT: [[AFTER:%cltrace.invariant.*]] = phi float [ [[V]], %[[READ]] ], [ [[KEPT]], %{{.*}} ]
// CHECK: [[SUM]] = fadd float [[AFTER]], [[W]]
// CHECK-NEXT: store float [[SUM]], float addrspace(1)* [[OUT]]
__kernel void own_address(__global const float* w, __global float* out, int n) {
  for (int k = 0; k < n; ++k) out[n] += w[1];
}

// A store to __global memory in the loop (out may be w), a barrier or a fence in it, a load only
// some iterations make: each stays a load on every iteration that runs it.
// CHECK-LABEL: define {{.*}}spir_kernel void @kept(
// CHECK-NOT: cltrace.fresh
// CHECK: ret void
__kernel void kept(__global const float* w, __global float* out, int n) {
  for (int k = 0; k < n; ++k) out[k] = w[0];
  float s = 0;
  for (int k = 0; k < n; ++k) {
    s += w[2];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  for (int k = 0; k < n; ++k)
    if (k & 1) s += w[3];
  for (int k = 0; k < n; ++k) {
    s += w[4];
    mem_fence(CLK_GLOBAL_MEM_FENCE);
  }
  out[get_global_id(0)] = s;
}

// __constant memory no store can change: read once even with stores in the loop. The inner
// loop's c[0] only out of the inner loop (it may run no iteration: j < m, entered where i < n).
// CHECK-LABEL: define {{.*}}spir_kernel void @constant_nested(
// The outer loop's body enters the inner loop with the flag set.
// CHECK: br i1 %{{.*}}, label %[[OUTER:[0-9]+]], label
// CHECK: [[OUTER]]:
// CHECK-NEXT: br label %[[INNER:[0-9]+]]
// CHECK: [[INNER]]:
// CHECK: [[FRESH:%cltrace.fresh.*]] = phi i1 [ true, %[[OUTER]] ], [ %{{.*}}, %{{.*}} ]
// CHECK: br i1 [[FRESH]], label %[[READ:[0-9]+]], label
// CHECK: [[READ]]:
// CHECK-NEXT: load float, float addrspace(2)* %0
// CHECK: store float
// CHECK-NOT: phi i1 [ true
// CHECK: ret void
__kernel void constant_nested(__constant float* c, __global float* out, int n, int m) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j) out[i * m + j] = c[0];
}

// An inner loop whose first test the outer loop's implies (k < m, entered where j < m and
// j >= 0) runs in every iteration of the outer loop: w[0] is read once per entry into the outer
// loop (clang -O2 nvptx64 loads it once, before both loops), the flag set on the way into it.
// CHECK-LABEL: define {{.*}}spir_kernel void @implied_guard(
// CHECK-NEXT: br label %[[OUTER:[0-9]+]]
// CHECK: [[OUTER]]:
// CHECK: [[FRESH:%cltrace.fresh.*]] = phi i1 [ true, %{{[0-9]+}} ], [ %{{.*}}, %{{[0-9]+}} ]
// CHECK: phi i1 [ [[FRESH]], %{{[0-9]+}} ], [ %{{.*}}, %{{[0-9]+}} ]
// CHECK: br i1 %cltrace.fresh{{.*}}, label %[[READI:[0-9]+]], label
// CHECK: [[READI]]:
// CHECK-NEXT: load float, float addrspace(1)* %0
// CHECK-NOT: phi i1 [ true
// CHECK: ret void
__kernel void implied_guard(__global const float* w, __global const float* a, __global float* out, int m) {
  float s = 0;
  for (int j = 0; j < m; ++j)
    for (int k = 0; k < m; ++k) s += w[0] * a[j * m + k];
  out[0] = s;
}

// With k < n nothing says the inner loop runs: w[0] is read once per entry into the inner loop
// (NVPTX: in the inner loop's guard), the flag set in the outer loop's body.
// CHECK-LABEL: define {{.*}}spir_kernel void @other_guard(
// CHECK-NEXT: br label %[[OUTERO:[0-9]+]]
// CHECK: [[OUTERO]]:
// CHECK-NOT: %cltrace.fresh
// CHECK: br i1 %{{.*}}, label %[[BODYO:[0-9]+]], label
// CHECK: [[BODYO]]:
// CHECK-NEXT: br label %[[INNERO:[0-9]+]]
// CHECK: [[INNERO]]:
// CHECK: %cltrace.fresh{{.*}} = phi i1 [ true, %[[BODYO]] ]
// CHECK: br i1 %cltrace.fresh{{.*}}, label %[[READO:[0-9]+]], label
// CHECK: [[READO]]:
// CHECK-NEXT: load float, float addrspace(1)* %0
__kernel void other_guard(__global const float* w, __global const float* a, __global float* out, int m, int n) {
  float s = 0;
  for (int j = 0; j < m; ++j)
    for (int k = 0; k < n; ++k) s += w[0] * a[j * n + k];
  out[0] = s;
}

// A break before the load whose test reads memory: clang -O2 keeps that exit apart, so the load
// does not run in every iteration entered and LICM leaves it in the loop: NVPTX reads w[0] in
// every iteration that gets there (ld a[k], ld w[0] in the loop, -fno-unroll-loops), in the inner
// loop as in a single one. No flag: the load stays where it is.
// CHECK-LABEL: define {{.*}}spir_kernel void @break_first(
// CHECK-NOT: %cltrace.fresh
// CHECK: ret void
__kernel void break_first(__global const float* w, __global const float* a, __global float* out, int m) {
  float s = 0;
  for (int j = 0; j < m; ++j)
    for (int k = 0; k < m; ++k) {
      if (a[k] < 0) break;
      s += w[0];
    }
  out[0] = s;
}
// CHECK-LABEL: define {{.*}}spir_kernel void @single_break_first(
// CHECK-NOT: %cltrace.fresh
// CHECK: ret void
__kernel void single_break_first(__global const float* w, __global const float* a, __global float* out, int m) {
  float s = 0;
  for (int k = 0; k < m; ++k) {
    if (a[k] < 0) break;
    s += w[0];
  }
  out[0] = s;
}

// A break whose test only computes is merged into the loop's own test (SimplifyCFG), and w[0]
// is read once per entry (NVPTX: ld w[0] before the loop); so is one after the load, and one in
// the outer loop around an inner loop that reads w[0] (once per outer iteration: NVPTX reads it
// after the break, before the inner loop).
// CHECK-LABEL: define {{.*}}spir_kernel void @cheap_break_first(
// CHECK: br i1 %cltrace.fresh{{.*}}, label %[[READC:[0-9]+]], label
// CHECK: [[READC]]:
// CHECK-NEXT: load float, float addrspace(1)* %0
__kernel void cheap_break_first(__global const float* w, __global const float* a, __global float* out, int m,
                                int lim) {
  float s = 0;
  for (int k = 0; k < m; ++k) {
    if (k * k > lim) break;
    s += w[0] * a[k];
  }
  out[0] = s;
}
// CHECK-LABEL: define {{.*}}spir_kernel void @break_after(
// CHECK: br i1 %cltrace.fresh{{.*}}, label %[[READA:[0-9]+]], label
// CHECK: [[READA]]:
// CHECK-NEXT: load float, float addrspace(1)* %0
__kernel void break_after(__global const float* w, __global const float* a, __global float* out, int m) {
  float s = 0;
  for (int k = 0; k < m; ++k) {
    s += w[0];
    if (a[k] < 0) break;
  }
  out[0] = s;
}
// CHECK-LABEL: define {{.*}}spir_kernel void @outer_break(
// CHECK: load float
// CHECK: br i1 %{{.*}}, label %{{[0-9]+}}, label %[[ONB:[0-9]+]]
// CHECK: [[ONB]]:
// CHECK-NEXT: br label %[[INNERX:[0-9]+]]
// CHECK: [[INNERX]]:
// CHECK: %cltrace.fresh{{.*}} = phi i1 [ true, %[[ONB]] ]
__kernel void outer_break(__global const float* w, __global const float* a, __global const float* b,
                          __global float* out, int m) {
  float s = 0;
  for (int j = 0; j < m; ++j) {
    if (b[j] < 0) break;
    for (int k = 0; k < m; ++k) s += w[0] * a[j * m + k];
  }
  out[0] = s;
}

// A vload's elements are loads like any other (prepare makes them): vload2(0, w + 2).y, w[3],
// is read once, behind the flag.
// CHECK-LABEL: define {{.*}}spir_kernel void @vector_element(
// CHECK: br i1 %cltrace.fresh{{.*}}, label %[[READV:[0-9]+]], label
// CHECK: [[READV]]:
// CHECK-NEXT: load float, float addrspace(1)* %{{.*}}, align 4
// CHECK-NOT: br i1 %cltrace.fresh
// CHECK: ret void
__kernel void vector_element(__global const float* w, __global const float* in, __global float* out, int n) {
  float s = 0;
  for (int k = 0; k < n; ++k) s += vload2(0, w + 2).y * in[k];
  out[get_global_id(0)] = s;
}

// Stores that alias analysis shows never touch the load's address are no obstacle either:
// several accumulators in one loop (f[2i] and f[2i+1]; two fields of one struct) are each read
// once, behind a flag of their own, and stored every iteration. a[j] is read every iteration,
// after the store to f[2i] too (f may be a).
// CHECK-LABEL: define {{.*}}spir_kernel void @accumulators(
// CHECK: [[A:%.*]] = getelementptr inbounds float, float addrspace(1)* %1,
// CHECK-NEXT: load float, float addrspace(1)* [[A]]
// CHECK: [[F0:%.*]] = getelementptr inbounds float, float addrspace(1)* %0,
// CHECK-NEXT: br i1 %cltrace.fresh{{.*}}, label %[[READ0:[0-9]+]], label
// CHECK: [[READ0]]:
// CHECK-NEXT: load float, float addrspace(1)* [[F0]]
// CHECK: store float %{{.*}}, float addrspace(1)* [[F0]]
// CHECK-NEXT: load float, float addrspace(1)* [[A]]
// CHECK: [[F1:%.*]] = getelementptr inbounds float, float addrspace(1)* %0,
// CHECK-NEXT: br i1 %cltrace.fresh{{.*}}, label %[[READ1:[0-9]+]], label
// CHECK: [[READ1]]:
// CHECK-NEXT: load float, float addrspace(1)* [[F1]]
// CHECK: store float %{{.*}}, float addrspace(1)* [[F1]]
// CHECK-LABEL: define {{.*}}spir_kernel void @fields(
// CHECK-COUNT-2: br i1 %cltrace.fresh
// CHECK-NOT: br i1 %cltrace.fresh
// CHECK: ret void
// Arguments declared restrict do not overlap, as the kernel's author says: w[i] read once.
// Without restrict, y may be w: read every iteration.
// CHECK-LABEL: define {{.*}}spir_kernel void @restricted(
// CHECK-COUNT-1: br i1 %cltrace.fresh
// CHECK-NOT: br i1 %cltrace.fresh
// CHECK: ret void
// CHECK-LABEL: define {{.*}}spir_kernel void @unrestricted(
// CHECK-NOT: cltrace.fresh
// CHECK: ret void
// A store that may reach the address (f[i + j] is f[i] when j is 0; p may be f): read every
// iteration.
// CHECK-LABEL: define {{.*}}spir_kernel void @may_overlap(
// CHECK-NOT: cltrace.fresh
// CHECK: ret void
typedef struct { float v, x; } pair;
__kernel void accumulators(__global float* f, __global const float* a, int n) {
  int i = get_global_id(0);
  for (int j = 0; j < n; j++) {
    f[2 * i] += a[j];
    f[2 * i + 1] -= a[j];
  }
}
__kernel void fields(__global pair* p, int n) {
  int i = get_global_id(0);
  for (int j = 0; j < n; j++) {
    p[i].v += j;
    p[i].x *= 2.0f;
  }
}
__kernel void restricted(__global const float* restrict w, __global const float* restrict x,
                         __global float* restrict y, int n) {
  int i = get_global_id(0);
  for (int k = 0; k < n; k++) y[k] += w[i] * x[k];
}
__kernel void unrestricted(__global const float* w, __global const float* x, __global float* y, int n) {
  int i = get_global_id(0);
  for (int k = 0; k < n; k++) y[k] += w[i] * x[k];
}
__kernel void may_overlap(__global float* f, __global pair* p, int n) {
  int i = get_global_id(0);
  for (int j = 0; j < n; j++) { f[i] += j; f[i + j] = 1; }
  for (int j = 0; j < n; j++) { f[i] += j; p[i].x = 1; }
}

// An address from a load read once whose value the loop changes (it stores to the load's own
// address): f[0] is read once, behind its flag, but d[p] and c[p] are other addresses every
// iteration, read every iteration (a __constant load included).
// CHECK-LABEL: define {{.*}}spir_kernel void @moving_index(
// CHECK-COUNT-1: br i1 %cltrace.fresh
// CHECK-NOT: br i1 %cltrace.fresh
// CHECK: ret void
// CHECK-LABEL: define {{.*}}spir_kernel void @moving_constant_index(
// CHECK-COUNT-1: br i1 %cltrace.fresh
// CHECK-NOT: br i1 %cltrace.fresh
// CHECK: ret void
__kernel void moving_index(__global uint* f, __global uint* out, int n) {
  __global uint* d = f + 1;
  uint s = 0;
  for (int j = 0; j < n; j++) {
    uint p = f[0];
    f[0] = p + 1;
    s += d[p];
  }
  out[0] = s;
}
__kernel void moving_constant_index(__global int* f, __constant int* c, __global int* out, int n) {
  int s = 0;
  for (int j = 0; j < n; j++) {
    int p = f[0];
    f[0] = p + 1;
    s += c[p];
  }
  out[0] = s;
}
