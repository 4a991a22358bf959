// Barriers and fences are recorded with their flags (1 local, 2 global; read/write fences 4/8).
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
__kernel void bar(__global float* a, __local float* tile, int n) {
  size_t l = get_local_id(0), g = get_global_id(0);
  for (int i = 0; i < n; ++i) {
    tile[l] = a[g + i];
    barrier(CLK_LOCAL_MEM_FENCE);
    a[g] = tile[(l + 1) % 8];
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  }
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  read_mem_fence(CLK_LOCAL_MEM_FENCE);
  write_mem_fence(CLK_GLOBAL_MEM_FENCE);
}

// CHECK: kernel bar: 1 loops (max depth 1), 7 sites
// CHECK-NEXT: [0] load 4B depth 1 loop 0:
// CHECK-NEXT: [1] barrier 0B depth 1 loop 0 flags 1: {{.*}}@_Z7barrierj(i32 noundef 1)
// CHECK-NEXT: [2] store 4B depth 1 loop 0:
// CHECK-NEXT: [3] barrier 0B depth 1 loop 0 flags 3: {{.*}}@_Z7barrierj(i32 noundef 3)
// CHECK-NEXT: [4] fence 0B depth 0 flags 2: {{.*}}@_Z9mem_fencej
// CHECK-NEXT: [5] fence 0B depth 0 flags 5: {{.*}}@_Z14read_mem_fencej
// CHECK-NEXT: [6] fence 0B depth 0 flags 10: {{.*}}@_Z15write_mem_fencej
