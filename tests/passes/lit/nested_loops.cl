// Three nested loops and a sibling loop: each access carries the counters of exactly the loops
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
// RUN: %opt -passes=cltrace-prepare,cltrace-trace %t.bc -S -o - | FileCheck %s --check-prefix=TRACE
// No atomic operation anywhere in either instrumented kernel: every work-item counts and
// records into slots of its own.
// RUN: %opt -passes=cltrace-prepare,cltrace-count %t.bc -S -o - | FileCheck %s --check-prefix=NOATOMIC
// RUN: %opt -passes=cltrace-prepare,cltrace-trace %t.bc -S -o - | FileCheck %s --check-prefix=NOATOMIC
// NOATOMIC-NOT: {{atomicrmw|cmpxchg|atomic_}}
// around it, outermost first.
__kernel void nest(__global float* a, int n) {
  size_t g = get_global_id(0);
  for (int i = 0; i < n; ++i) {
    a[g] += 1.0f;
    for (int j = 0; j < n; ++j)
      for (int k = 0; k < n; ++k)
        a[g + j + k] += 2.0f;
  }
  for (int i = 0; i < n; ++i) a[i] = 0.0f;
}

// CHECK: kernel nest: 4 loops (max depth 3), 5 sites
// CHECK-NEXT: [0] load 4B depth 1 loop 0:
// CHECK-NEXT: [1] store 4B depth 1 loop 0:
// CHECK-NEXT: [2] load 4B depth 3 loop 2:
// CHECK-NEXT: [3] store 4B depth 3 loop 2:
// CHECK-NEXT: [4] store 4B depth 1 loop 3:
// One private counter per loop, each set to -1 on entry and incremented at its header, up to
// 2^32 - 2 (-2 as i32), where it stays (wrapped to 0 it would read as the loop entered again).
// TRACE-COUNT-4: %cltrace.iter{{[0-9]*}} = alloca i32
// TRACE: store i32 -1, i32* %cltrace.iter
// TRACE: [[C:%.*]] = load i32, i32* %cltrace.iter
// TRACE-NEXT: [[MAX:%.*]] = icmp eq i32 [[C]], -2
// TRACE-NEXT: [[C1:%.*]] = add i32 [[C]], 1
// TRACE-NEXT: [[C2:%.*]] = select i1 [[MAX]], i32 [[C]], i32 [[C1]]
// TRACE-NEXT: store i32 [[C2]], i32* %cltrace.iter
// The depth-3 load (id 2): 2 + 3 words in 3 packed units, stored as 16 and 8 bytes:
// (2, offset, c0, c1) (c2, 0).
// TRACE: add i64 %{{.*}}, 3
// TRACE: insertelement <4 x i32> <i32 2, i32 undef, i32 undef, i32 undef>, i32 %{{.*}}, i32 1
// TRACE-NEXT: insertelement <4 x i32> %{{.*}}, i32 %{{.*}}, i32 2
// TRACE-NEXT: insertelement <4 x i32> %{{.*}}, i32 %{{.*}}, i32 3
// TRACE: store <4 x i32>
// TRACE-NEXT: insertelement <2 x i32> undef, i32 %{{.*}}, i32 0
// TRACE-NEXT: insertelement <2 x i32> %{{.*}}, i32 0, i32 1
// TRACE-NEXT: getelementptr inbounds i32, i32 addrspace(1)* %{{.*}}, i64 4
// TRACE: store <2 x i32>
