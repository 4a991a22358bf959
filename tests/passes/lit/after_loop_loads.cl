// A load of a read-once address just after its loop (at the start of a block only the loop
// branches to, before anything that may write memory) reads only when the loop did not: once
// the loop has read, the value kept is what memory holds (`for (k) c[i] += a[k]; o[i] = c[i];`
// reads c[i] once, as a GPU compiler's GVN takes the value the loop stored).
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare %t.bc -S -o - | FileCheck %s

// CHECK-LABEL: define {{.*}}spir_kernel void @after_store_loop(
// CHECK: [[KEPT:%cltrace.invariant.*]] = phi float [ undef, %{{.*}} ], [ [[SUM:%[0-9]+]], %{{.*}} ]
// CHECK-NEXT: [[FRESH:%cltrace.fresh.*]] = phi i1 [ true, %{{.*}} ],
// CHECK: br i1 %{{[0-9]+}}, label %{{[0-9]+}}, label %[[EXIT:[0-9]+]]
// CHECK: [[SUM]] = fadd float
// CHECK: [[EXIT]]:
// CHECK: [[C:%[0-9]+]] = getelementptr inbounds float, float addrspace(1)* %0,
// CHECK-NEXT: br i1 [[FRESH]], label %[[READ:[0-9]+]], label %[[ON:[0-9]+]]
// CHECK: [[READ]]:
// CHECK-NEXT: [[V:%.*]] = load float, float addrspace(1)* [[C]]
// CHECK-NEXT: br label %[[ON]]
// CHECK: [[ON]]:
// CHECK-NEXT: [[AFTER:%cltrace.invariant.*]] = phi float [ [[V]], %[[READ]] ], [ [[KEPT]], %[[EXIT]] ]
// CHECK-NEXT: [[O:%[0-9]+]] = getelementptr inbounds float, float addrspace(1)* %2,
// CHECK-NEXT: store float [[AFTER]], float addrspace(1)* [[O]]
__kernel void after_store_loop(__global float* c, __global const float* a, __global float* o, int n) {
  int i = get_global_id(0);
  for (int k = 0; k < n; ++k) c[i] += a[k];
  o[i] = c[i];
}

// A loop-invariant load read again after the loop: w[1] once.
// CHECK-LABEL: define {{.*}}spir_kernel void @after_invariant(
// CHECK: [[KEPT:%cltrace.invariant.*]] = phi float [ undef, %{{.*}} ], [ %cltrace.invariant.1, %{{.*}} ]
// CHECK-NEXT: [[FRESH:%cltrace.fresh.*]] = phi i1 [ true, %{{.*}} ],
// (The address of w[1], computed first on both ways out of the header, is computed before the
// branch: branch_motion.)
// CHECK-NEXT: phi
// CHECK-NEXT: phi
// CHECK-NEXT: icmp
// CHECK-NEXT: [[W:%[0-9]+]] = getelementptr inbounds float, float addrspace(1)* %0, i64 1
// CHECK: call float @llvm.fmuladd.f32
// CHECK: br i1 [[FRESH]], label %[[READ:[0-9]+]], label
// CHECK: [[READ]]:
// CHECK-NEXT: [[V:%.*]] = load float, float addrspace(1)* [[W]]
// CHECK: [[AFTER:%cltrace.invariant.*]] = phi float [ [[V]], %[[READ]] ], [ [[KEPT]], %{{.*}} ]
// CHECK-NEXT: fadd float %{{.*}}, [[AFTER]]
__kernel void after_invariant(__global const float* w, __global const float* in, __global float* out, int n) {
  float s = 0;
  for (int k = 0; k < n; ++k) s += w[1] * in[k];
  out[get_global_id(0)] = s + w[1];
}

// A store (d may be c) before the load after the loop, or a block that the way around the loop
// reaches too: read as written.
// CHECK-LABEL: define {{.*}}spir_kernel void @written_before(
// CHECK: store float 1.000000e+00, float addrspace(1)* %2
// CHECK-NEXT: [[I:%[0-9]+]] = sext i32
// CHECK-NEXT: [[C:%[0-9]+]] = getelementptr inbounds float, float addrspace(1)* %0, i64 [[I]]
// CHECK-NEXT: [[V:%[0-9]+]] = load float, float addrspace(1)* [[C]]
// CHECK-NEXT: [[O:%[0-9]+]] = getelementptr inbounds float, float addrspace(1)* %3,
// CHECK-NEXT: store float [[V]], float addrspace(1)* [[O]]
__kernel void written_before(__global float* c, __global const float* a, __global float* d, __global float* o, int n) {
  int i = get_global_id(0);
  for (int k = 0; k < n; ++k) c[i] += a[k];
  d[0] = 1.0f;
  o[i] = c[i];
}
// CHECK-LABEL: define {{.*}}spir_kernel void @bypassed(
// CHECK: store float
// CHECK: [[C:%[0-9]+]] = getelementptr inbounds float, float addrspace(1)* %0,
// CHECK-NEXT: [[V:%[0-9]+]] = load float, float addrspace(1)* [[C]]
// CHECK-NEXT: [[O:%[0-9]+]] = getelementptr inbounds float, float addrspace(1)* %2,
// CHECK-NEXT: store float [[V]], float addrspace(1)* [[O]]
// CHECK-NEXT: ret void
__kernel void bypassed(__global float* c, __global const float* a, __global float* o, int n) {
  int i = get_global_id(0);
  if (n > 2)
    for (int k = 0; k < n; ++k) c[i] += a[k];
  o[i] = c[i];
}
