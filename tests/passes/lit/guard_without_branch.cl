// In a kernel that waits for its workgroup (a barrier here), the count pass checks plain global
// loads and stores without a branch: one outside its buffer goes to scratch memory instead (the
// bounds buffer from word boundsScratchWord(3) = 16), a load then yields zero, and the lowest
// outside id is kept by selects: the kernel's own branches are the only ones. PoCL hung or
// miscounted when a check's if/else followed a barrier in a branch. Kernels without a barrier
// keep the branch, and so do accesses made on every iteration of their loop (PoCL runs those;
// the branch keeps the count run fast) and __local stores (bounds_check_local.cl).
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-count %t.bc -S -o - | FileCheck %s

// CHECK-LABEL: define {{.*}}spir_kernel void @after_barrier(
// CHECK: [[SCRATCH:%.*]] = getelementptr inbounds i64, i64 addrspace(1)* %cltrace_bounds, i64 16
// The load n[5] (id 0): its address or the scratch, its value or zero.
// CHECK: [[IN0:%.*]] = icmp ult i64 %{{.*}}, %{{.*}}
// CHECK-NEXT: [[S0:%.*]] = bitcast i64 addrspace(1)* [[SCRATCH]] to i32 addrspace(1)*
// CHECK-NEXT: [[P0:%.*]] = select i1 [[IN0]], i32 addrspace(1)* %{{.*}}, i32 addrspace(1)* [[S0]]
// CHECK-NEXT: [[W0:%.*]] = load i32, i32* %cltrace.outside
// CHECK-NEXT: [[C0:%.*]] = icmp ult i32 0, [[W0]]
// CHECK-NEXT: [[L0:%.*]] = select i1 [[C0]], i32 0, i32 [[W0]]
// CHECK-NEXT: [[O0:%.*]] = select i1 [[IN0]], i32 [[W0]], i32 [[L0]]
// CHECK-NEXT: store i32 [[O0]], i32* %cltrace.outside
// CHECK-NEXT: [[V0:%.*]] = load i32, i32 addrspace(1)* [[P0]]
// CHECK-NEXT: [[Z0:%.*]] = select i1 [[IN0]], i32 [[V0]], i32 0
// CHECK-NEXT: icmp slt i32 [[Z0]], 7
// CHECK-NEXT: br i1
// CHECK: call spir_func void @_Z7barrierj
// CHECK: icmp eq i32 %{{.*}}, 0
// CHECK-NEXT: br i1
// The store out[t] = 1 (id 2, after the barrier's id 1).
// CHECK: [[IN2:%.*]] = icmp ult i64 %{{.*}}, %{{.*}}
// CHECK-NEXT: [[S2:%.*]] = bitcast i64 addrspace(1)* [[SCRATCH]] to float addrspace(1)*
// CHECK-NEXT: [[P2:%.*]] = select i1 [[IN2]], float addrspace(1)* %{{.*}}, float addrspace(1)* [[S2]]
// CHECK: icmp ult i32 2,
// CHECK-NOT: br i1
// CHECK: store float 1.000000e+00, float addrspace(1)* [[P2]]
// The kernel's own `if (dim > t)`, and no branch after it.
// CHECK: br i1
// CHECK-NOT: br i1
// CHECK: icmp ult i32 3,
// CHECK-NOT: br i1
// CHECK: store float 3.000000e+00, float addrspace(1)*
// CHECK-NOT: br i1
// CHECK: ret void
__kernel void after_barrier(__global const int* n, __global float* out, int dim) {
  int t = get_local_id(0);
  if (n[5] < 7) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t == 0) out[t] = 1;
  }
  if (dim > t) out[t + 1] = 3;
}

// in[i] is read on every iteration (the loop's test): branched around, its value a phi; in[i + 1]
// only in work-item 0: redirected, and so is the store it steers.
// CHECK-LABEL: define {{.*}}spir_kernel void @in_loop(
// CHECK-NOT: select i1 %{{.*}}, float addrspace(1)*
// CHECK: phi float [ %{{.*}}, %{{.*}} ], [ 0.000000e+00, %{{.*}} ]
// CHECK: call spir_func void @_Z7barrierj
// CHECK: select i1 %{{.*}}, float addrspace(1)* %{{.*}}, float addrspace(1)* %{{.*}}
// CHECK-NOT: br i1
// CHECK: select i1 %{{.*}}, float %{{.*}}, float 0.000000e+00
// CHECK: br i1
// CHECK: [[P:%.*]] = select i1 %{{.*}}, float addrspace(1)* %{{.*}}, float addrspace(1)* %{{.*}}
// CHECK-NOT: br i1
// CHECK: store float 2.000000e+00, float addrspace(1)* [[P]]
__kernel void in_loop(__global const float* in, __global float* out, int n) {
  for (int i = 0; in[i] > 0 && i < n; ++i) {
    barrier(CLK_GLOBAL_MEM_FENCE);
    if (get_local_id(0) == 0 && in[i + 1] > 0) out[i] = 2;
  }
}

// CHECK-LABEL: define {{.*}}spir_kernel void @no_barrier(
// CHECK: br i1
// CHECK: ret void
__kernel void no_barrier(__global float* out) { out[get_local_id(0)] = 1; }
