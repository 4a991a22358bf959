// The count pass checks each access against the buffer its pointer derives from, or against
// every buffer argument when the pointer may come from several; an access outside is branched
// around and its id noted.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-count %t.bc -S -o - | FileCheck %s

__kernel void pick(__global int* a, __global int* b, int which) {
  size_t i = get_global_id(0);
  __global int* p = which ? a : b;
  p[i] = 1;
  atomic_inc(a + i);
}

// CHECK: define {{.*}}spir_kernel void @pick(i32 addrspace(1)* {{.*}}, i32 addrspace(1)* {{.*}}, i32 {{.*}}, i64 addrspace(1)* noalias %cltrace_counts, i64 addrspace(1)* noalias %cltrace_bounds)
// CHECK: store i32 -1, i32* %cltrace.outside
// CHECK: [[B0:%.*]] = ptrtoint i32 addrspace(1)* %0 to i64
// CHECK-NEXT: getelementptr inbounds i64, i64 addrspace(1)* %cltrace_bounds, i64 0
// CHECK-NEXT: [[S0:%.*]] = load i64
// CHECK-NEXT: [[B1:%.*]] = ptrtoint i32 addrspace(1)* %1 to i64
// CHECK-NEXT: getelementptr inbounds i64, i64 addrspace(1)* %cltrace_bounds, i64 1
// CHECK-NEXT: [[S1:%.*]] = load i64
// CHECK-NOT: %cltrace_bounds, i64 2
// The store through p (4 bytes): offset < size - 4 + 1 in a, or in b.
// CHECK: [[A:%.*]] = ptrtoint i32 addrspace(1)* [[P:%.*]] to i64
// CHECK-NEXT: [[FITS0:%.*]] = icmp uge i64 [[S0]], 4
// CHECK-NEXT: [[M0:%.*]] = sub i64 [[S0]], 4
// CHECK-NEXT: [[N0:%.*]] = add i64 [[M0]], 1
// CHECK-NEXT: [[BOUND0:%.*]] = select i1 [[FITS0]], i64 [[N0]], i64 0
// CHECK-NEXT: [[OFF0:%.*]] = sub i64 [[A]], [[B0]]
// CHECK-NEXT: [[IN0:%.*]] = icmp ult i64 [[OFF0]], [[BOUND0]]
// CHECK: [[OFF1:%.*]] = sub i64 [[A]], [[B1]]
// CHECK-NEXT: [[IN1:%.*]] = icmp ult i64 [[OFF1]]
// CHECK-NEXT: [[IN:%.*]] = or i1 [[IN0]], [[IN1]]
// CHECK-NEXT: br i1 [[IN]], label %[[DO:.*]], label %[[SKIP:.*]]
// CHECK: [[DO]]:
// CHECK-NEXT: store i32 1, i32 addrspace(1)* [[P]]
// Outside: id 0 becomes the work-item's lowest outside id when it is lower.
// CHECK: [[SKIP]]:
// CHECK-NEXT: [[LOW:%.*]] = load i32, i32* %cltrace.outside
// CHECK-NEXT: [[LT:%.*]] = icmp ult i32 0, [[LOW]]
// CHECK-NEXT: [[MIN:%.*]] = select i1 [[LT]], i32 0, i32 [[LOW]]
// CHECK-NEXT: store i32 [[MIN]], i32* %cltrace.outside
// The atomic on a + i (id 1): checked against a only; its result is 0 when skipped.
// CHECK: sub i64 %{{.*}}, [[B0]]
// CHECK-NEXT: [[INA:%.*]] = icmp ult i64
// CHECK-NEXT: br i1 [[INA]], label %[[DOA:.*]], label %[[SKIPA:.*]]
// CHECK: [[DOA]]:
// CHECK-NEXT: [[OLD:%.*]] = call spir_func i32 @_Z10atomic_incPU3AS1Vi
// CHECK: [[SKIPA]]:
// CHECK: icmp ult i32 1,
// CHECK: phi i32 [ [[OLD]], %[[DOA]] ], [ 0, %[[SKIPA]] ]
// At the return: bit 1 and (lowest id + 1) << 32 when some access was outside.
// CHECK: [[L:%.*]] = load i32, i32* %cltrace.outside
// CHECK-NEXT: [[Z:%.*]] = zext i32 [[L]] to i64
// CHECK-NEXT: [[Z1:%.*]] = add i64 [[Z]], 1
// CHECK-NEXT: [[HI:%.*]] = shl i64 [[Z1]], 32
// CHECK-NEXT: [[BITS:%.*]] = or i64 2, [[HI]]
// CHECK-NEXT: [[NONE:%.*]] = icmp eq i32 [[L]], -1
// CHECK-NEXT: select i1 [[NONE]], i64 0, i64 [[BITS]]
