// A global atomic whose result decides a branch (a compare-and-swap loop, a spin on a lock) or
// gives an address (a slot taken with atomic_inc) gets a warning naming the atomic and what it
// steers, and its id in the report's lists; results that are only stored, atomics on addresses
// from data, and local atomics get none.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s

// The float add of many OpenCL 1.2 codes: the union stays a private variable in memory.
__kernel void cas_add(__global float* sum, __global const float* v) {
  union { unsigned int u; float f; } old, want, seen;
  seen.f = *sum;
  do {
    old.f = seen.f;
    want.f = old.f + v[get_global_id(0)];
    seen.u = atomic_cmpxchg((volatile __global unsigned int*)sum, old.u, want.u);
  } while (seen.u != old.u);
}
// CHECK-LABEL: kernel cas_add:
// CHECK: warning: kernel 'cas_add': what the atomic [2] ({{.*}}@_Z14atomic_cmpxchgPU3AS1Vjjj{{.*}}) returns decides a branch ({{.*}}br i1 {{.*}}): how often that code runs depends on how the device interleaves work-items of different workgroups (a compare-and-swap loop repeats when another got in between), so runs of the kernel can take different paths
// CHECK-NOT: warning

// Stream compaction: the slot, and so the store's address, comes from atomic_inc.
__kernel void compact(__global const float* in, __global float* out, __global int* n) {
  int i = get_global_id(0);
  if (in[i] > 0.5f) out[atomic_inc(n)] = in[i];
}
// CHECK-LABEL: kernel compact:
// CHECK: warning: kernel 'compact': what the atomic [1] ({{.*}}@_Z10atomic_incPU3AS1Vi{{.*}}) returns gives the address of [2] ({{.*}}store float {{.*}}): which address depends on how the device interleaves work-items of different workgroups, so runs of the kernel can access different addresses
// CHECK-NOT: warning

// A lock: the loop spins until atomic_xchg returns 0.
__kernel void locked(__global int* lock, __global int* total) {
  while (atomic_xchg(lock, 1) != 0) {
  }
  *total += 1;
  atomic_xchg(lock, 0);
}
// CHECK-LABEL: kernel locked:
// CHECK: warning: kernel 'locked': what the atomic [0] ({{.*}}@_Z11atomic_xchgPU3AS1Vii{{.*}}) returns decides a branch
// CHECK-NOT: warning

// Two-level compaction: one work-item takes the workgroup's base with atomic_add and shares it
// through __local memory; every work-item's store goes to base + its place.
__kernel void compact_shared(__global const float* in, __global float* out, __global int* n) {
  __local int base;
  __local int count;
  int l = get_local_id(0);
  if (l == 0) count = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  int mine = in[get_global_id(0)] > 0.5f ? atomic_inc(&count) : -1;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (l == 0) base = atomic_add(n, count);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (mine >= 0) out[base + mine] = 1.0f;
}
// CHECK-LABEL: kernel compact_shared:
// CHECK: warning: kernel 'compact_shared': what the atomic [{{[0-9]+}}] ({{.*}}@_Z10atomic_addPU3AS1Vii{{.*}}) returns gives the address of [{{[0-9]+}}] ({{.*}}store float 1.0{{.*}}): which address
// CHECK-NOT: warning

// The slot kept in a global buffer and read back after a barrier.
__kernel void via_global(__global int* tmp, __global float* out, __global int* n) {
  int i = get_global_id(0);
  tmp[i] = atomic_inc(n);
  barrier(CLK_GLOBAL_MEM_FENCE);
  out[tmp[i]] = 1.0f;
}
// CHECK-LABEL: kernel via_global:
// CHECK: warning: kernel 'via_global': what the atomic [{{[0-9]+}}] ({{.*}}@_Z10atomic_incPU3AS1Vi{{.*}}) returns gives the address of [{{[0-9]+}}] ({{.*}}store float 1.0{{.*}}): which address
// CHECK-NOT: warning

// Results that are only stored, atomics on addresses from data, a local atomic's result used as
// an index (one workgroup's work-items are not interleaved by other workgroups): no warning.
__kernel void quiet(__global const uint* data, __global uint* bins, __global uint* old, __local uint* slot,
                    __global float* out) {
  size_t g = get_global_id(0);
  old[g] = atomic_inc(&bins[data[g] % 16]);
  out[atomic_inc(slot) % 64] = 1.0f;
}
// CHECK-LABEL: kernel quiet:
// CHECK-NOT: warning
