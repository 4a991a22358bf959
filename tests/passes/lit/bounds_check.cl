// The count pass checks each access against the buffer its pointer derives from, or against
// every buffer argument when the pointer may come from several.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-count %t.bc -S -o - | FileCheck %s

__kernel void pick(__global int* a, __global int* b, int which) {
  size_t i = get_global_id(0);
  __global int* p = which ? a : b;
  p[i] = 1;
}

// CHECK: define {{.*}}spir_kernel void @pick(i32 addrspace(1)* {{.*}}, i32 addrspace(1)* {{.*}}, i32 {{.*}}, i64 addrspace(1)* %cltrace_counts, i64 addrspace(1)* %cltrace_bounds)
// CHECK: [[B0:%.*]] = ptrtoint i32 addrspace(1)* %0 to i64
// CHECK: [[E0:%.*]] = add i64 [[B0]], %{{.*}}
// CHECK: [[B1:%.*]] = ptrtoint i32 addrspace(1)* %1 to i64
// CHECK: [[E1:%.*]] = add i64 [[B1]], %{{.*}}
// CHECK-NOT: getelementptr inbounds i64, i64 addrspace(1)* %cltrace_bounds, i64 2
// CHECK: [[A:%.*]] = ptrtoint i32 addrspace(1)* %{{.*}} to i64
// CHECK-NEXT: [[END:%.*]] = add i64 [[A]], 4
// CHECK-NEXT: icmp ule i64 [[END]], [[E0]]
// CHECK-NEXT: icmp uge i64 [[A]], [[B0]]
// CHECK-NEXT: [[IN0:%.*]] = and i1
// CHECK-NEXT: icmp ule i64 [[END]], [[E1]]
// CHECK-NEXT: icmp uge i64 [[A]], [[B1]]
// CHECK-NEXT: [[IN1:%.*]] = and i1
// CHECK-NEXT: [[IN:%.*]] = or i1 [[IN0]], [[IN1]]
// CHECK-NEXT: br i1 [[IN]], label %[[DO:.*]], label %{{.*}}
// CHECK: [[DO]]:
// CHECK-NEXT: store i32 1, i32 addrspace(1)*
