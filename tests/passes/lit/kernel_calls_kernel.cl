// A kernel may call another kernel as an ordinary function: the opt plugin inlines a copy of the
// callee (which keeps its kernel calling convention, which the inliner does not cross), as
// `cltrace instrument` does, and the callee stays a kernel of its own.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
// RUN: %opt -passes=cltrace-prepare -S %t.bc -o - | FileCheck %s --check-prefix=INLINED
__kernel void inner(__global float* a) { a[get_global_id(0)] += 1.0f; }
__kernel void outer(__global float* a) {
  inner(a);
  a[0] = 2.0f;
}

// CHECK: kernel inner: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 4B depth 0:
// CHECK-NEXT: [1] store 4B depth 0:
// CHECK-NEXT: kernel outer: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0:
// CHECK-NEXT: [1] store 4B depth 0:
// CHECK-NEXT: [2] store 4B depth 0: store float 2.0
// INLINED: define {{.*}}spir_kernel void @inner(
// INLINED: define {{.*}}spir_kernel void @outer(
// INLINED-NEXT: call {{.*}}@_Z13get_global_idj
// INLINED-NOT: call {{.*}}@inner
// INLINED-NOT: as_function
// INLINED: ret void
