// The count pass checks each store and atomic through a __local pointer argument against the
// bytes the host gave it (the argument's bounds slot); one outside is branched around and the
// lowest such argument noted, then put in bits 4..15 of the diagnostics word (1 + its index).
// Loads, and accesses to a __local variable of the kernel, are not checked.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-count %t.bc -S -o - | FileCheck %s

__kernel void fill(__global int* a, __local int* s) {
  __local int own[4];
  size_t l = get_local_id(0);
  s[l] = 1;
  own[l & 3] = 2;
  a[l] = s[l ^ 1] + own[0];
}

// CHECK: define {{.*}}spir_kernel void @fill(i32 addrspace(1)* {{.*}}, i32 addrspace(3)* {{.*}}, i64 addrspace(1)* noalias %cltrace_counts, i64 addrspace(1)* noalias %cltrace_bounds)
// CHECK: [[BASE:%.*]] = ptrtoint i32 addrspace(3)* %1 to i64
// CHECK-NEXT: getelementptr inbounds i64, i64 addrspace(1)* %cltrace_bounds, i64 1
// CHECK-NEXT: [[SIZE:%.*]] = load i64
// CHECK: store i32 -1, i32* %cltrace.local_outside
// The store s[l] (4 bytes): offset < size - 4 + 1.
// CHECK: [[FITS:%.*]] = icmp uge i64 [[SIZE]], 4
// CHECK-NEXT: [[M:%.*]] = sub i64 [[SIZE]], 4
// CHECK-NEXT: [[N:%.*]] = add i64 [[M]], 1
// CHECK-NEXT: [[BOUND:%.*]] = select i1 [[FITS]], i64 [[N]], i64 0
// CHECK-NEXT: [[A:%.*]] = ptrtoint i32 addrspace(3)* [[P:%.*]] to i64
// CHECK-NEXT: [[OFF:%.*]] = sub i64 [[A]], [[BASE]]
// CHECK-NEXT: [[IN:%.*]] = icmp ult i64 [[OFF]], [[BOUND]]
// CHECK-NEXT: br i1 [[IN]], label %[[THEN:.*]], label %[[ELSE:.*]]
// CHECK: [[THEN]]:
// CHECK-NEXT: store i32 1, i32 addrspace(3)* [[P]]
// CHECK: [[ELSE]]:
// CHECK-NEXT: [[LOW:%.*]] = load i32, i32* %cltrace.local_outside
// CHECK-NEXT: [[LESS:%.*]] = icmp ult i32 1, [[LOW]]
// CHECK-NEXT: [[NEW:%.*]] = select i1 [[LESS]], i32 1, i32 [[LOW]]
// CHECK-NEXT: store i32 [[NEW]], i32* %cltrace.local_outside
// The variable `own` is not checked: its store stays where it was.
// CHECK-NOT: icmp ult i64 {{.*}}own
// The load s[l ^ 1] is not checked (the count kernel drops it with the store to a it feeds):
// only the global store's check follows.
// CHECK-NOT: store i32 {{.*}}, i32* %cltrace.local_outside
// CHECK: icmp ult i32 0, {{.*}}
// CHECK-NEXT: select i1 {{.*}}, i32 0,
// CHECK-NEXT: store i32 {{.*}}, i32* %cltrace.outside
// At the return: 1 + the argument, shifted to bit 4, joins the diagnostics word.
// CHECK: [[ARG:%.*]] = load i32, i32* %cltrace.local_outside
// CHECK-NEXT: [[WIDE:%.*]] = zext i32 [[ARG]] to i64
// CHECK-NEXT: [[ONE:%.*]] = add i64 [[WIDE]], 1
// CHECK-NEXT: [[SHIFTED:%.*]] = shl i64 [[ONE]], 4
// CHECK-NEXT: [[NONE:%.*]] = icmp eq i32 [[ARG]], -1
// CHECK-NEXT: [[BITS:%.*]] = select i1 [[NONE]], i64 0, i64 [[SHIFTED]]
// CHECK-NEXT: or i64 {{.*}}, [[BITS]]
