// A value loaded on every way into a join, each way's load the last access of its block and used
// only there, is one load at the join through a phi of the addresses, as InstCombine folds a phi
// of loads in clang -O2 (NVPTX: selp of the addresses, one ld.global). Each kernel's ld.global,
// selp and st.global checked against clang -O2 for nvptx64 (sm_20).
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
// RUN: %opt -passes=cltrace-prepare %t.bc -S -o - | FileCheck %s --check-prefix=IR

// Loaded before an if that may overwrite it (NVPTX: ld f[i], selp, ld, st): one load of a[i] or
// b[i], not a[i] always and b[i] too where f[i] is set.
__kernel void overwritten(__global const float* a, __global const float* b, __global const int* f,
                          __global float* o) {
  int i = get_global_id(0);
  float r = a[i];
  if (f[i]) r = b[i];
  o[i] = r;
}
// CHECK-LABEL: kernel overwritten: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B
// IR-LABEL: define {{.*}} @overwritten(
// IR: [[P:%[0-9]+]] = select i1 %{{[0-9]+}}, float addrspace(1)* %{{[0-9]+}}, float addrspace(1)* %{{[0-9]+}}
// IR-NEXT: load float, float addrspace(1)* [[P]]

// The same in a loop: one load an iteration (NVPTX, unrolled: ld f, selp, ld per iteration).
__kernel void overwritten_in_loop(__global const float* a, __global const float* b, __global const int* f,
                                  __global float* o, int n) {
  int i = get_global_id(0);
  float s = 0.0f;
  for (int k = 0; k < n; k++) {
    float r = a[i * n + k];
    if (f[i * n + k]) r = b[i * n + k];
    s += r;
  }
  o[i] = s;
}
// CHECK-LABEL: kernel overwritten_in_loop: 1 loops (max depth 1), 3 sites
// CHECK-NEXT: [0] load 4B depth 1 loop 0: {{.*}} = load i32
// CHECK-NEXT: [1] load 4B depth 1 loop 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B depth 0

// A ternary that keeps the value loaded before it (its other way an empty block once private
// variables are registers): one load (NVPTX: ld f[i], selp, ld, st).
__kernel void kept_or_replaced(__global const float* a, __global const float* b, __global const int* f,
                               __global float* o) {
  int i = get_global_id(0);
  float v = a[i];
  v = f[i] ? b[i] : v;
  o[i] = v;
}
// CHECK-LABEL: kernel kept_or_replaced: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B

// Folded before a later load of the same address could take one way's load (GVN): every
// work-item reads its left neighbour (or itself) and then itself, two loads (NVPTX: two ld).
__kernel void neighbour_then_centre(__global const float* a, __global float* o) {
  int i = get_global_id(0);
  float l = (i > 0) ? a[i - 1] : a[i];
  float c = a[i];
  o[i] = l + c;
}
// CHECK-LABEL: kernel neighbour_then_centre: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B
// IR-LABEL: define {{.*}} @neighbour_then_centre(
// IR: [[P:%[0-9]+]] = {{phi|select}} {{.*}}float addrspace(1)*
// IR-NEXT: load float, float addrspace(1)* [[P]]
// IR: load float
// IR: store float

// Not folded: the first load has another use (the test), so it stays; b[i] is read on its way
// (NVPTX: ld a[i], bra, ld b[i]).
__kernel void used_twice(__global const float* a, __global const float* b, __global float* o) {
  int i = get_global_id(0);
  float r = a[i];
  if (r < 0.0f) r = b[i];
  o[i] = r;
}
// CHECK-LABEL: kernel used_twice: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B
// IR-LABEL: define {{.*}} @used_twice(
// IR-NOT: {{phi|select i1 %[0-9]+,}} float addrspace(1)*
// IR: ret void

// Not folded: a store follows the first load in its block (o may be a), so the value could change
// before the join (NVPTX: ld a[i], st o[i], ld f[i], bra, ld b[i]).
__kernel void store_after(__global const float* a, __global const float* b, __global const int* f,
                          __global float* o, __global float* c) {
  int i = get_global_id(0);
  float r = a[i];
  o[i] = 0.0f;
  if (f[i]) r = b[i];
  c[i] = r;
}
// CHECK-LABEL: kernel store_after: 0 loops (max depth 0), 5 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] store 4B
// CHECK-NEXT: [2] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [3] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [4] store 4B
// IR-LABEL: define {{.*}} @store_after(
// IR-NOT: {{phi|select i1 %[0-9]+,}} float addrspace(1)*
// IR: ret void

// An if/else-if chain replacing a value loaded before it: InstCombine first sinks a[i]'s load into
// the else way (its one use is the inner join's phi, on the edge from there), then folds both
// joins' phis of loads: one load on every way (NVPTX: two selp of the addresses, one ld), not
// a[i] and then c[i] where m < 0.
__kernel void else_if_chain(__global const float* a, __global const float* b, __global const float* c,
                            __global float* o, int m) {
  int i = get_global_id(0);
  float r = a[i];
  if (m > 0)
    r = b[i];
  else if (m < 0)
    r = c[i];
  o[i] = r;
}
// CHECK-LABEL: kernel else_if_chain: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] store 4B
// IR-LABEL: define {{.*}} @else_if_chain(
// IR: [[INNER:%[0-9]+]] = select i1 %{{[0-9]+}}, float addrspace(1)*
// IR-NEXT: [[OUTER:%[0-9]+]] = select i1 %{{[0-9]+}}, float addrspace(1)* %{{[0-9]+}}, float addrspace(1)* [[INNER]]
// IR-NEXT: load float, float addrspace(1)* [[OUTER]]

// Not folded: the else way stores before its inner if, so the value a[i] had may change before
// the join. a[i] is read where m <= 0, c[i] too where m < 0 (NVPTX: ld a[i], st p[i], bra,
// ld c[i] on that way; b[i] on the other).
__kernel void store_on_the_way(__global const float* a, __global const float* b, __global const float* c,
                               __global float* o, __global float* p, int m) {
  int i = get_global_id(0);
  float r = a[i];
  if (m > 0) {
    r = b[i];
  } else {
    p[i] = 1.0f;
    if (m < 0) r = c[i];
  }
  o[i] = r;
}
// CHECK-LABEL: kernel store_on_the_way: 0 loops (max depth 0), 5 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B
// CHECK-NEXT: [3] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [4] store 4B
// IR-LABEL: define {{.*}} @store_on_the_way(
// IR-NOT: {{phi|select i1 %[0-9]+,}} float addrspace(1)*
// IR: ret void

// A value loaded before an if whose way stores another value and returns: the two stores are one
// where the ways meet (SimplifyCFG), and InstCombine has sunk a[i]'s load into the other way
// (its one use is there), so the phi of the two loads is one load through the selected address
// (NVPTX: ld f[i], selp of the addresses, ld, st).
__kernel void kept_unless_returned(__global const float* a, __global const float* b, __global const int* f,
                                   __global float* o) {
  int i = get_global_id(0);
  float v = a[i];
  if (f[i]) {
    o[i] = b[i];
    return;
  }
  o[i] = v;
}
// CHECK-LABEL: kernel kept_unless_returned: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B
// IR-LABEL: define {{.*}} @kept_unless_returned(
// IR: [[P:%[A-Za-z0-9._]+]] = phi float addrspace(1)* [
// IR-NEXT: load float, float addrspace(1)* [[P]]

// Two values loaded before the branch, each stored on one way: one load (NVPTX: ld f[i], selp,
// ld, st).
__kernel void stored_on_either_way(__global const float* a, __global const float* b, __global float* o,
                                   __global const int* f) {
  int i = get_global_id(0);
  float x = a[i];
  float y = b[i];
  if (f[i])
    o[i] = y;
  else
    o[i] = x;
}
// CHECK-LABEL: kernel stored_on_either_way: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B
