; A helper that calls itself cannot be inlined: a clear error naming it, no crash.
; RUN: not %opt -passes=cltrace-prepare -disable-output %s 2>&1 | FileCheck %s
; CHECK: error: cltrace: cannot inline function 'walk' into kernel 'k' (recursive or indirect calls are not supported)
target datalayout = "e-i64:64-v16:16-v24:32-v32:32-v48:64-v96:128-v192:256-v256:256-v512:512-v1024:1024"
target triple = "spir64"

define spir_func i32 @walk(i32 addrspace(1)* %p, i32 %n) {
entry:
  %done = icmp eq i32 %n, 0
  br i1 %done, label %out, label %more
more:
  %m = sub i32 %n, 1
  %r = call spir_func i32 @walk(i32 addrspace(1)* %p, i32 %m)
  ret i32 %r
out:
  %v = load i32, i32 addrspace(1)* %p
  ret i32 %v
}

define spir_kernel void @k(i32 addrspace(1)* %p) {
entry:
  %v = call spir_func i32 @walk(i32 addrspace(1)* %p, i32 3)
  store i32 %v, i32 addrspace(1)* %p
  ret void
}
