// The count run drops a kernel's global stores (and the loads and arithmetic that only fed
// them) when nothing loaded from global memory steers a branch or an address, also through
// local or private memory; every access is still counted and checked. Otherwise, and with
// atomics, the count kernel keeps every access.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-count %t.bc -S -o - | FileCheck %s

// A branch on a loaded value: the load and the store stay.
// CHECK-LABEL: define {{.*}}spir_kernel void @steer(
// CHECK: load i32, i32 addrspace(1)*
// CHECK: store i32 1, i32 addrspace(1)*
// CHECK: ret void
__kernel void steer(__global const int* in, __global int* out) {
  size_t i = get_global_id(0);
  if (in[i] > 0) out[i] = 1;
}
// A store indexed by a loaded value stays.
// CHECK-LABEL: define {{.*}}spir_kernel void @indexed(
// CHECK: load i32, i32 addrspace(1)*
// CHECK: store i32 2, i32 addrspace(1)*
// CHECK: ret void
__kernel void indexed(__global const int* idx, __global int* out) {
  size_t i = get_global_id(0);
  out[idx[i]] = 2;
}
// The loaded value steers the branch through local memory: everything stays.
// CHECK-LABEL: define {{.*}}spir_kernel void @through_local(
// CHECK: load i32, i32 addrspace(1)*
// CHECK: store i32 {{.*}}, i32 addrspace(3)*
// CHECK: call spir_func void @_Z7barrierj
// CHECK: store i32 3, i32 addrspace(1)*
// CHECK: ret void
__kernel void through_local(__global const int* in, __global int* out, __local int* tile) {
  size_t i = get_global_id(0);
  tile[get_local_id(0)] = in[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  if (tile[0] > 0) out[i] = 3;
}
// Loaded data only flows through local memory into a global store: the store and the local
// load that fed it go; the global load stays, since the local store it feeds stays. The
// store's check remains (id 2, after the barrier's id 1).
// CHECK-LABEL: define {{.*}}spir_kernel void @tiled(
// (With a barrier the checks add no branch: guard_without_branch.cl.)
// CHECK: [[V:%.*]] = load i32, i32 addrspace(1)*
// CHECK: [[M:%.*]] = select i1 %{{.*}}, i32 [[V]], i32 0
// CHECK: store i32 [[M]], i32 addrspace(3)*
// CHECK: load i64, i64* %cltrace.n
// CHECK: call spir_func void @_Z7barrierj
// CHECK-NOT: load i32, i32 addrspace(3)*
// CHECK-NOT: store i32 {{.*}}, i32 addrspace(1)*
// CHECK: icmp ult i32 2,
// CHECK-NOT: store i32 {{.*}}, i32 addrspace(1)*
// CHECK: ret void
__kernel void tiled(__global const int* in, __global int* out, __local int* tile) {
  size_t i = get_global_id(0);
  tile[get_local_id(0)] = in[i];
  barrier(CLK_LOCAL_MEM_FENCE);
  out[i] = tile[get_local_id(0) ^ 1] * 4;
}
// A loop bound read back from a private array of loaded values: everything stays.
// CHECK-LABEL: define {{.*}}spir_kernel void @through_private(
// CHECK: load i32, i32 addrspace(1)*
// CHECK: load i32, i32 addrspace(1)*
// CHECK: store i32 {{.*}}, i32 addrspace(1)*
// CHECK: ret void
__kernel void through_private(__global const int* in, __global int* out, int k) {
  size_t i = get_global_id(0);
  int p[4];
  for (int j = 0; j < 4; ++j) p[j] = in[4 * i + j];
  for (int j = 0; j < p[k & 3]; ++j) out[i] += j;
}
// An atomic writes memory the count run would have to model: the plain store stays.
// CHECK-LABEL: define {{.*}}spir_kernel void @with_atomic(
// CHECK: load i32, i32 addrspace(1)*
// CHECK: store i32 {{.*}}, i32 addrspace(1)*
// CHECK: call spir_func i32 @_Z10atomic_inc
// CHECK: ret void
__kernel void with_atomic(__global const int* in, __global int* out) {
  size_t i = get_global_id(0);
  out[i] = in[i];
  atomic_inc(out);
}
// A loop bound from __constant memory (which no kernel writes) steers nothing the stores could
// change: the global load and store in the loop go, their counts and checks stay.
// CHECK-LABEL: define {{.*}}spir_kernel void @constant_steer(
// CHECK: load i32, i32 addrspace(2)*
// CHECK: add i64 %{{.*}}, 1
// CHECK-NOT: load float, float addrspace(1)*
// CHECK-NOT: store float {{.*}}, float addrspace(1)*
// CHECK: ret void
__kernel void constant_steer(__constant int* limits, __global const float* in, __global float* out) {
  size_t i = get_global_id(0);
  for (int j = 0; j < limits[0]; ++j) out[i] += in[j];
}
