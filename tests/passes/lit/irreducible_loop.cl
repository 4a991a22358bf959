// A cycle entered in two places (a goto into a loop) is no natural loop: its accesses get no
// iteration counter, which a warning says; a kernel with natural loops only gets none.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-trace %t.bc -S -o /dev/null 2>%t.err
// RUN: FileCheck %s < %t.err
// RUN: %clang-spir -DNATURAL %s -o %t2.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-trace %t2.bc -S -o /dev/null 2>%t2.err
// RUN: FileCheck %s --check-prefix=NATURAL --allow-empty < %t2.err

__kernel void iters(__global int* a) {
  int i = get_global_id(0);
  int m = i & 1;
#ifndef NATURAL
  if (m) goto inside;
#endif
top:
  a[20 + m] = i;
#ifndef NATURAL
inside:
#endif
  m++;
  if (m < 4) goto top;
  a[30] = m;
}

// CHECK: cltrace: warning: kernel 'iters': a loop is entered in more than one place (a goto into it); its accesses carry no iteration counters, so the warp scheduler may put different iterations of the work-items into one step
// NATURAL-NOT: warning
