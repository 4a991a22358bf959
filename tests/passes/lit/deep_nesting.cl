// Loops nested deeper than the 7 counters a record holds: a warning, and packed records inside
// carry the 7 outermost counters (the host adds the true depth and the truncated flag, which are
// static); nothing is wrong.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-trace %t.bc -S -o - 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=WARN < %t.err
// RUN: %opt -passes=cltrace-prepare,cltrace-count %t.bc -S -o - 2>/dev/null | FileCheck %s --check-prefix=COUNT

__kernel void deep(__global int* a, int n) {
  for (int i0 = 0; i0 < n; ++i0)
   for (int i1 = 0; i1 < n; ++i1)
    for (int i2 = 0; i2 < n; ++i2)
     for (int i3 = 0; i3 < n; ++i3)
      for (int i4 = 0; i4 < n; ++i4)
       for (int i5 = 0; i5 < n; ++i5)
        for (int i6 = 0; i6 < n; ++i6)
         for (int i7 = 0; i7 < n; ++i7)
          a[i0 + i7] += 1;
}

// WARN: cltrace: warning: kernel 'deep': loops nested 8 deep; records keep the 7 outermost iteration counters and are flagged truncated
// The depth-8 load (id 0): 2 + 7 words in 5 packed units, stored as 16, 16 and 8 bytes:
// (0, offset, c0, c1) (c2..c5) (c6, 0).
// CHECK: add i64 %{{.*}}, 5
// CHECK: insertelement <4 x i32> <i32 0, i32 undef, i32 undef, i32 undef>, i32 %{{.*}}, i32 1
// CHECK-NEXT: insertelement <4 x i32> %{{.*}}, i32 %{{.*}}, i32 2
// CHECK-NEXT: insertelement <4 x i32> %{{.*}}, i32 %{{.*}}, i32 3
// CHECK-NEXT: getelementptr inbounds i32, i32 addrspace(1)* %{{.*}}, i64 0
// CHECK: store <4 x i32> %{{.*}}, <4 x i32> addrspace(1)* %{{.*}}, align 8
// CHECK: insertelement <4 x i32> %{{.*}}, i32 %{{.*}}, i32 3
// CHECK-NEXT: getelementptr inbounds i32, i32 addrspace(1)* %{{.*}}, i64 4
// CHECK: store <4 x i32>
// CHECK-NEXT: insertelement <2 x i32> undef, i32 %{{.*}}, i32 0
// CHECK-NEXT: insertelement <2 x i32> %{{.*}}, i32 0, i32 1
// CHECK-NEXT: getelementptr inbounds i32, i32 addrspace(1)* %{{.*}}, i64 8
// CHECK: store <2 x i32>
// COUNT: or i64 %{{.*}}, 1
