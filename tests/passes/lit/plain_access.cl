// One load and one store per work-item, no loop.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s --check-prefix=ACC
// RUN: %opt -passes=cltrace-prepare,cltrace-trace %t.bc -S -o - | FileCheck %s --check-prefix=TRACE
// RUN: %opt -passes=cltrace-prepare,cltrace-count %t.bc -S -o - | FileCheck %s --check-prefix=COUNT

__kernel void copy(__global const int* in, __global int* out) {
  size_t i = get_global_id(0);
  out[i] = in[i] + 1;
}

// ACC: kernel copy: 0 loops (max depth 0), 2 sites
// ACC-NEXT: [0] load 4B depth 0: {{.*}} = load i32, i32 addrspace(1)*
// ACC-NEXT: [1] store 4B depth 0: store i32

// TRACE: define {{.*}}spir_kernel void @copy(i32 addrspace(1)* {{.*}}, i32 addrspace(1)* {{.*}}, i8 addrspace(1)* %cltrace_records, i64 addrspace(1)* %cltrace_control, i64 addrspace(1)* %cltrace_args)
// TRACE: %cltrace.linear_id = add i64
// The record of access 0: instruction id 0, size 4, kind 0 (load), depth 0.
// TRACE: mul i64 %{{.*}}, 48
// TRACE: store i32 0, i32 addrspace(1)*
// TRACE-NEXT: getelementptr inbounds i8, i8 addrspace(1)* %{{.*}}, i64 12
// TRACE-NEXT: bitcast
// TRACE-NEXT: store i32 4, i32 addrspace(1)*
// TRACE: load i32, i32 addrspace(1)*
// TRACE: store i32 1, i32 addrspace(1)*
// TRACE: store i32 %{{.*}}, i32 addrspace(1)*
// At the return the work-item's record total goes back to the control buffer.
// TRACE: [[N:%.*]] = load i64, i64* %cltrace.n
// TRACE-NEXT: store i64 [[N]], i64 addrspace(1)*
// TRACE-NEXT: ret void

// COUNT: define {{.*}}spir_kernel void @copy(i32 addrspace(1)* {{.*}}, i32 addrspace(1)* {{.*}}, i64 addrspace(1)* %cltrace_counts)
// COUNT-NOT: atomicrmw
// COUNT: add i64 %{{.*}}, 1
// COUNT: add i64 %{{.*}}, 1
// COUNT: store i64 %{{.*}}, i64 addrspace(1)*
// COUNT: ret void
