// OpenCL 2.0 work-group functions whose result the whole group shares (reduce, broadcast, any,
// all) make no divergence; a branch on the id still does, also around work_group_barrier.
// RUN: %clang-spir -cl-std=CL2.0 %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s

__kernel void collective(__global int* a, int n) {
  int total = work_group_reduce_add(a[get_global_id(0)]);
  for (int r = 0; r < total; ++r) {
    a[r] = 0;
    work_group_barrier(CLK_GLOBAL_MEM_FENCE);
  }
  if (work_group_any(a[get_global_id(0)] > n)) work_group_barrier(CLK_GLOBAL_MEM_FENCE);
}
// CHECK-LABEL: kernel collective:
// CHECK-NOT: warning
// CHECK-LABEL: kernel scanned:

__kernel void scanned(__global int* a) {
  int before = work_group_scan_exclusive_add(1);  // differs between work-items
  if (before < 4) work_group_barrier(CLK_GLOBAL_MEM_FENCE);
}
// CHECK: warning: kernel 'scanned': the barrier [0] may not be reached
