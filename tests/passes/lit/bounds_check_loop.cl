// A work-item that went outside a buffer returns at the top of its next loop iteration: each
// loop header first tests the lowest outside id and goes to one shared return block, where the
// counts and diagnostics are stored as at the kernel's own return. Without it, a loop waiting
// for a value past the buffer's end (each skipped load yields 0) never ends. Not a loop from
// which a barrier can be reached: PoCL takes a barrier's branches as the same for every
// work-item, so one leaving alone would make the others skip their checks.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-count %t.bc -S -o - | FileCheck %s

__kernel void find(__global const int* a, __global int* out) {
  int i = get_global_id(0);
  for (int k = 0; k < 4; ++k) {
    int j = 0;
    while (a[j] != i + k) j++;
    out[i * 4 + k] = j;
  }
}

__kernel void waits(__global const int* a, __global int* out, __local int* s) {
  int l = get_local_id(0), acc = 0;
  for (int j = 0; j < 4; j++) acc += a[j];
  s[l] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  out[get_global_id(0)] = s[(l + 1) % 8];
}

// CHECK-LABEL: define {{.*}} @find(
// Both headers, the outer loop's first (it is laid out first), then the inner's: after the
// phis, the test, and the header's own code in the block it branches to otherwise.
// CHECK: phi i32 [ 0, %2 ]
// CHECK-NEXT: [[L1:%.*]] = load i32, i32* %cltrace.outside
// CHECK-NEXT: [[OUT1:%.*]] = icmp ne i32 [[L1]], -1
// CHECK-NEXT: br i1 [[OUT1]], label %cltrace.leave, label %[[IN1:.*]]
// CHECK: [[IN1]]:
// CHECK-NEXT: icmp slt i32 %{{.*}}, 4
// CHECK: phi i32 [ 0, %{{.*}} ]
// CHECK-NEXT: [[L2:%.*]] = load i32, i32* %cltrace.outside
// CHECK-NEXT: [[OUT2:%.*]] = icmp ne i32 [[L2]], -1
// CHECK-NEXT: br i1 [[OUT2]], label %cltrace.leave, label %[[IN2:.*]]
// CHECK: [[IN2]]:
// CHECK-NEXT: sext i32
// CHECK-NOT: label %cltrace.leave
// The shared return block stores the count and the diagnostics word, as at the kernel's return.
// CHECK: cltrace.leave:
// CHECK-NEXT: mul i64 %cltrace.linear_id, 2
// CHECK: store i64 {{.*}}, i64 addrspace(1)* {{.*}}
// CHECK: load i32, i32* %cltrace.outside
// CHECK: store i64 {{.*}}, i64 addrspace(1)* {{.*}}
// CHECK-NEXT: ret void
// CHECK-LABEL: define {{.*}} @waits(
// CHECK-NOT: cltrace.leave
// CHECK: call spir_func void @_Z7barrierj
// CHECK-NOT: cltrace.leave
// CHECK: ret void
// CHECK-NEXT: }
