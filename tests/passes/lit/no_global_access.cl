// A kernel with no global access still gets its parameters and writes a zero count.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-count %t.bc -S -o - | FileCheck %s
__kernel void nothing(int x, __local int* l) { l[0] = x; }

// CHECK: define {{.*}}spir_kernel void @nothing(i32 noundef %{{.*}}, i32 addrspace(3)* {{.*}}, i64 addrspace(1)* noalias %cltrace_counts, i64 addrspace(1)* noalias %cltrace_bounds) {{.*}}!kernel_arg_addr_space [[AS:![0-9]+]]
// CHECK-NOT: add i64 %{{.*}}, 1{{$}}
// CHECK: store i64 0, i64* %cltrace.n
// CHECK: store i64 %{{.*}}, i64 addrspace(1)*
// CHECK: ret void
// CHECK: [[AS]] = !{i32 0, i32 3, i32 1, i32 1}
