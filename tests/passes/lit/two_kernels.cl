// Only the requested kernel gets parameters; the other one is left as it was.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt '-passes=cltrace-prepare,cltrace-trace<kernel=second>' %t.bc -S -o - | FileCheck %s
// RUN: not %opt '-passes=cltrace-prepare,cltrace-count<kernel=third>' %t.bc -disable-output 2>&1 | FileCheck %s --check-prefix=MISSING
__kernel void first(__global int* a) { a[get_global_id(0)] = 1; }
__kernel void second(__global int* b) { b[get_global_id(0)] = 2; }

// CHECK: define {{.*}}spir_kernel void @first(i32 addrspace(1)* noundef align 4 %{{[a-z0-9]+}}) {{.*}}!kernel_arg_addr_space [[AS1:![0-9]+]]
// CHECK-NOT: cltrace
// CHECK: define {{.*}}spir_kernel void @second(i32 addrspace(1)* {{.*}}, i8 addrspace(1)* noalias %cltrace_records, i64 addrspace(1)* noalias %cltrace_control, i64 addrspace(1)* noalias %cltrace_args) {{.*}}!kernel_arg_addr_space [[AS4:![0-9]+]] !kernel_arg_access_qual [[AQ:![0-9]+]] !kernel_arg_type [[TY:![0-9]+]] !kernel_arg_base_type [[TY]] !kernel_arg_type_qual [[TQ:![0-9]+]] !kernel_arg_name [[NM:![0-9]+]]
// Every kernel_arg_* list of the instrumented kernel has one entry per parameter.
// CHECK-DAG: [[AS4]] = !{i32 1, i32 1, i32 1, i32 1}
// CHECK-DAG: [[AQ]] = !{!"none", !"none", !"none", !"none"}
// CHECK-DAG: [[TY]] = !{!"int*", !"uchar*", !"ulong*", !"ulong*"}
// CHECK-DAG: [[TQ]] = !{!"", !"", !"", !""}
// CHECK-DAG: [[NM]] = !{!"b", !"cltrace_records", !"cltrace_control", !"cltrace_args"}
// MISSING: error: cltrace: no kernel named 'third'; kernels in this program: first, second
