; RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %s | FileCheck %s
; A global memcpy, memmove or memset of a constant length under 128 bytes becomes the loads and
; stores a GPU compiler makes of it (NVPTX: as wide as the pointers' alignment allows, up to 8
; bytes; a memcpy's pieces each stored once loaded, so that the load-store vectorizer joins no
; loads across the stores, a memmove's all loaded before the first store); a longer or variable
; one stays one access, a load of the source and a store to the destination.
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024"
target triple = "spir64"

; CHECK: kernel copy: 0 loops (max depth 0), 6 sites
; CHECK-NEXT: [0] load 4B depth 0: [[A:%[0-9]+]] = load i32, i32 addrspace(1)* %{{[0-9]+}}, align 4
; CHECK-NEXT: [1] store 4B depth 0: store i32 [[A]], i32 addrspace(1)* %{{[0-9]+}}, align 4
; CHECK-NEXT: [2] load 4B depth 0: [[B:%[0-9]+]] = load i32, i32 addrspace(1)* %{{[0-9]+}}, align 4
; CHECK-NEXT: [3] store 4B depth 0: store i32 [[B]], i32 addrspace(1)* %{{[0-9]+}}, align 4
; CHECK-NEXT: [4] load 4B depth 0: [[C:%[0-9]+]] = load i32, i32 addrspace(1)* %{{[0-9]+}}, align 4
; CHECK-NEXT: [5] store 4B depth 0: store i32 [[C]], i32 addrspace(1)* %{{[0-9]+}}, align 4
define spir_kernel void @copy(i8 addrspace(1)* align 4 %dst, i8 addrspace(1)* align 4 %src) {
entry:
  call void @llvm.memcpy.p1i8.p1i8.i64(i8 addrspace(1)* align 4 %dst, i8 addrspace(1)* align 4 %src, i64 12, i1 false)
  ret void
}

; A copy of 1, 2, 4 or 8 bytes is one word loaded and stored in pieces of each pointer's own
; alignment (4 bytes from 2-aligned to 16-aligned: two 2-byte loads, one 4-byte store); other
; lengths take the narrower alignment for both, the tail in halves (14 = 8 + 4 + 2).
; CHECK: kernel widths: 0 loops (max depth 0), 9 sites
; CHECK-NEXT: [0] load 2B depth 0: {{.*}} = load i16
; CHECK-NEXT: [1] load 2B depth 0: {{.*}} = load i16
; CHECK-NEXT: [2] store 4B depth 0: store i32
; CHECK-NEXT: [3] load 8B depth 0: {{.*}} = load i64
; CHECK-NEXT: [4] store 8B depth 0: store i64
; CHECK-NEXT: [5] load 4B depth 0: {{.*}} = load i32
; CHECK-NEXT: [6] store 4B depth 0: store i32
; CHECK-NEXT: [7] load 2B depth 0: {{.*}} = load i16
; CHECK-NEXT: [8] store 2B depth 0: store i16
define spir_kernel void @widths(i8 addrspace(1)* %dst, i8 addrspace(1)* %src) {
entry:
  call void @llvm.memmove.p1i8.p1i8.i64(i8 addrspace(1)* align 16 %dst, i8 addrspace(1)* align 2 %src, i64 4, i1 false)
  call void @llvm.memcpy.p1i8.p1i8.i64(i8 addrspace(1)* align 16 %dst, i8 addrspace(1)* align 16 %src, i64 14, i1 false)
  ret void
}

; The word put together from the loads' pieces and taken apart for the stores' (little-endian):
; 8 bytes from 8-aligned to 4-aligned.
; CHECK: kernel word: 0 loops (max depth 0), 3 sites
; CHECK-NEXT: [0] load 8B depth 0: [[W:%[0-9]+]] = load i64, i64 addrspace(1)* %{{[0-9]+}}, align 8
; CHECK-NEXT: [1] store 4B depth 0: store i32 %{{[0-9]+}}, i32 addrspace(1)* %{{[0-9]+}}, align 4
; CHECK-NEXT: [2] store 4B depth 0: store i32 %{{[0-9]+}}, i32 addrspace(1)* %{{[0-9]+}}, align 4
define spir_kernel void @word(i8 addrspace(1)* %dst, i8 addrspace(1)* %src) {
entry:
  call void @llvm.memcpy.p1i8.p1i8.i64(i8 addrspace(1)* align 4 %dst, i8 addrspace(1)* align 8 %src, i64 8, i1 false)
  ret void
}

; A fill: the byte in every byte of each piece (7 * 0x0101 = 0x0707 = 1799). Blocks of no
; bytes are no access.
; CHECK: kernel fill: 0 loops (max depth 0), 3 sites
; CHECK-NEXT: [0] store 2B depth 0: store i16 1799, i16 addrspace(1)* %{{[0-9]+}}, align 2
; CHECK-NEXT: [1] store 2B depth 0: store i16 1799
; CHECK-NEXT: [2] store 1B depth 0: store i8 7, i8 addrspace(1)* %{{[0-9]+}}, align 2
define spir_kernel void @fill(i8 addrspace(1)* %dst) {
entry:
  call void @llvm.memset.p1i8.i64(i8 addrspace(1)* align 2 %dst, i8 7, i64 5, i1 false)
  call void @llvm.memset.p1i8.i64(i8 addrspace(1)* align 2 %dst, i8 7, i64 0, i1 false)
  call void @llvm.memcpy.p1i8.p1i8.i64(i8 addrspace(1)* %dst, i8 addrspace(1)* %dst, i64 0, i1 true)
  ret void
}

; 128 bytes and more: NVPTX copies them in a loop; one access here.
; CHECK: kernel stays: 0 loops (max depth 0), 5 sites
; CHECK-NEXT: [0] load 128B depth 0: call void @llvm.memcpy
; CHECK-NEXT: [1] store 128B depth 0: call void @llvm.memcpy
; CHECK-NEXT: [2] load ?B depth 0: call void @llvm.memcpy
; CHECK-NEXT: [3] store ?B depth 0: call void @llvm.memcpy
; CHECK-NEXT: [4] store ?B depth 0: call void @llvm.memset
define spir_kernel void @stays(i8 addrspace(1)* %dst, i8 addrspace(1)* %src, i64 %n) {
entry:
  call void @llvm.memcpy.p1i8.p1i8.i64(i8 addrspace(1)* align 4 %dst, i8 addrspace(1)* align 4 %src, i64 128, i1 false)
  call void @llvm.memcpy.p1i8.p1i8.i64(i8 addrspace(1)* align 4 %dst, i8 addrspace(1)* align 4 %src, i64 %n, i1 false)
  call void @llvm.memset.p1i8.i64(i8 addrspace(1)* %dst, i8 0, i64 %n, i1 false)
  ret void
}

; Private and local blocks are not traced: left alone, only the global side is recorded.
; CHECK: kernel local_to_global: 0 loops (max depth 0), 2 sites
; CHECK-NEXT: [0] store 4B depth 0: store i32
; CHECK-NEXT: [1] store 4B depth 0: store i32
; CHECK-NOT: kernel
define spir_kernel void @local_to_global(i8 addrspace(1)* %dst, i8 addrspace(3)* %src, i8 addrspace(3)* %other) {
entry:
  call void @llvm.memcpy.p1i8.p3i8.i64(i8 addrspace(1)* align 4 %dst, i8 addrspace(3)* align 4 %src, i64 8, i1 false)
  call void @llvm.memcpy.p3i8.p3i8.i64(i8 addrspace(3)* align 4 %other, i8 addrspace(3)* align 4 %src, i64 8, i1 false)
  ret void
}
declare void @llvm.memcpy.p1i8.p1i8.i64(i8 addrspace(1)*, i8 addrspace(1)*, i64, i1)
declare void @llvm.memcpy.p1i8.p3i8.i64(i8 addrspace(1)*, i8 addrspace(3)*, i64, i1)
declare void @llvm.memcpy.p3i8.p3i8.i64(i8 addrspace(3)*, i8 addrspace(3)*, i64, i1)
declare void @llvm.memmove.p1i8.p1i8.i64(i8 addrspace(1)*, i8 addrspace(1)*, i64, i1)
declare void @llvm.memset.p1i8.i64(i8 addrspace(1)*, i8, i64, i1)
