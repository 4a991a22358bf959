; RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %s | FileCheck %s
; Global memcpy (a load of the source and a store to the destination) and memset (a store).
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024"
target triple = "spir64"

define spir_kernel void @copy(i8 addrspace(1)* %dst, i8 addrspace(1)* %src, i64 %n) {
entry:
  call void @llvm.memcpy.p1i8.p1i8.i64(i8 addrspace(1)* %dst, i8 addrspace(1)* %src, i64 32, i1 false)
  call void @llvm.memset.p1i8.i64(i8 addrspace(1)* %dst, i8 0, i64 %n, i1 false)
  ret void
}
declare void @llvm.memcpy.p1i8.p1i8.i64(i8 addrspace(1)*, i8 addrspace(1)*, i64, i1)
declare void @llvm.memset.p1i8.i64(i8 addrspace(1)*, i8, i64, i1)

; CHECK: kernel copy: 0 loops (max depth 0), 3 sites
; CHECK-NEXT: [0] load 32B depth 0: call void @llvm.memcpy
; CHECK-NEXT: [1] store 32B depth 0: call void @llvm.memcpy
; CHECK-NEXT: [2] store ?B depth 0: call void @llvm.memset
