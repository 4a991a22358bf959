// OpenCL C 2.0: a builtin given a generic pointer chosen at run time between global and local
// memory has no named-space overload to call, and its access could not be recorded: refused,
// like a load through such a pointer. to_global only looks at the pointer: no access.
// RUN: %clang-spir -cl-std=CL2.0 %s -o %t.bc
// RUN: not %opt -passes=cltrace-prepare -disable-output %t.bc 2>&1 | FileCheck %s
// RUN: %clang-spir -cl-std=CL2.0 -DONLY_CAST %s -o %t2.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t2.bc | FileCheck %s --check-prefix=CAST

__kernel void k(__global float* a, __local float* l, int c) {
  float* p = c ? (float*)a : (float*)l;
#ifndef ONLY_CAST
  a[0] = fract(a[1], p);
#endif
  a[get_global_id(0)] = (to_global(p) != 0);
}
// CHECK: error: cltrace: kernel 'k' accesses memory through a generic pointer whose address space cannot be told from the code ({{.*}}@_Z5fractfPU3AS4f(
// CAST: kernel k: 0 loops (max depth 0), 1 sites
