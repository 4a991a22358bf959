; RUN: %opt -passes=cltrace-prepare,cltrace-count %s -S -o - | FileCheck %s
; Count slicing (count_slicing.cl) in what OpenCL C 1.2 source cannot write: a store through a
; generic pointer cast from a buffer is a store to that buffer once prepare has inferred its
; address space (no generic access is left), so it goes like any other that no count depends
; on; a memcpy (of a length not known, which stays a call) writes memory the count kernel cannot tell apart, so every store is kept.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024"
target triple = "spir64"

; CHECK-LABEL: define spir_kernel void @generic(
; CHECK-NOT: load i32, i32 addrspace(1)*
; CHECK-NOT: store i32 {{.*}}, i32 addrspace(
; CHECK-NOT: addrspace(4)
; CHECK: ret void
define spir_kernel void @generic(i32 addrspace(1)* %in, i32 addrspace(1)* %out) {
entry:
  %v = load i32, i32 addrspace(1)* %in
  store i32 %v, i32 addrspace(1)* %out
  %g = addrspacecast i32 addrspace(1)* %in to i32 addrspace(4)*
  store i32 1, i32 addrspace(4)* %g
  ret void
}

; CHECK-LABEL: define spir_kernel void @copy(
; CHECK: load i32, i32 addrspace(1)*
; CHECK: store i32 {{.*}}, i32 addrspace(1)*
; CHECK: call void @llvm.memcpy
; CHECK: ret void
define spir_kernel void @copy(i32 addrspace(1)* %in, i32 addrspace(1)* %out, i8 addrspace(1)* %dst, i8 addrspace(1)* %src, i64 %n) {
entry:
  %v = load i32, i32 addrspace(1)* %in
  store i32 %v, i32 addrspace(1)* %out
  call void @llvm.memcpy.p1i8.p1i8.i64(i8 addrspace(1)* %dst, i8 addrspace(1)* %src, i64 %n, i1 false)
  ret void
}

; Nothing else: the store goes, and with it the load.
; CHECK-LABEL: define spir_kernel void @plain(
; CHECK-NOT: load i32, i32 addrspace(1)*
; CHECK-NOT: store i32 {{.*}}, i32 addrspace(1)*
; CHECK: ret void
define spir_kernel void @plain(i32 addrspace(1)* %in, i32 addrspace(1)* %out) {
entry:
  %v = load i32, i32 addrspace(1)* %in
  store i32 %v, i32 addrspace(1)* %out
  ret void
}
declare void @llvm.memcpy.p1i8.p1i8.i64(i8 addrspace(1)*, i8 addrspace(1)*, i64, i1)
