; A generic pointer that may point to local or global memory, chosen at run time: no address
; space can be inferred, so prepare refuses with a clear error instead of leaving the access
; unrecorded.
; RUN: not %opt -passes=cltrace-prepare -disable-output %s 2>&1 | FileCheck %s
; CHECK: error: cltrace: kernel 'pick' accesses memory through a generic pointer whose address space cannot be told from the code ({{.*}}load i32, i32 addrspace(4)*{{.*}}): cltrace cannot know whether it reaches global memory; give the pointer a named address space (__global, __local)
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024"
target triple = "spir64"

define spir_kernel void @pick(i32 addrspace(1)* %in, i32 addrspace(3)* %tile, i32 addrspace(1)* %out, i32 %c) {
entry:
  %g = addrspacecast i32 addrspace(1)* %in to i32 addrspace(4)*
  %l = addrspacecast i32 addrspace(3)* %tile to i32 addrspace(4)*
  %which = icmp ne i32 %c, 0
  %p = select i1 %which, i32 addrspace(4)* %g, i32 addrspace(4)* %l
  %v = load i32, i32 addrspace(4)* %p
  store i32 %v, i32 addrspace(1)* %out
  ret void
}
