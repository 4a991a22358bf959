// Conditionals whose ways only compute or read private variables are selects, as clang -O2's first
// SimplifyCFG makes them before SROA, so no load moves into one of their ways; so are those whose
// ways only compute once private variables are registers and loads used on one way only are in
// it, or once the stores both ways end with are one (its later SimplifyCFG runs); conditionals
// with a store, or with ways over SimplifyCFG's budget, keep their branch and the loads only one
// way uses are read on that way. Each kernel's ld.global, selp and branches checked against clang -O2 for
// nvptx64 (sm_20).
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s
// RUN: %opt -passes=cltrace-prepare %t.bc -S -o - | FileCheck %s --check-prefix=IR

// NVPTX: ld a[i], ld b[i], ld f[i], selp, st: both values are read by every work-item.
__kernel void ternary_of_loads(__global const float* a, __global const float* b, __global const int* f,
                               __global float* o) {
  int i = get_global_id(0);
  float v = a[i];
  float w = b[i];
  o[i] = f[i] > 0 ? v : w;
}
// CHECK-LABEL: kernel ternary_of_loads: 0 loops (max depth 0), 4 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [3] store 4B
// IR-LABEL: define {{.*}} @ternary_of_loads(
// IR-NOT: br i1
// IR: select i1 %{{[0-9]+}}, float
// IR-NOT: br i1
// IR: ret void

// The way stores to r: the branch stays (NVPTX: ld f[i], bra, ld a[i] in the way).
__kernel void assigned_in_branch(__global const float* a, __global const int* f, __global float* o) {
  int i = get_global_id(0);
  float v = a[i];
  float r = 0.0f;
  if (f[i] > 0) r = v;
  o[i] = r;
}
// CHECK-LABEL: kernel assigned_in_branch: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B
// IR-LABEL: define {{.*}} @assigned_in_branch(
// IR: br i1 %{{[0-9]+}}, label %[[THEN:[0-9]+]], label
// IR: [[THEN]]:
// IR-NEXT: load float

// A struct copied whole, then a field chosen: the fields used are read by every work-item
// (NVPTX: ld.s8, ld.f32, ld.u16, selp).
typedef struct { char tag; float val; short s; } Rec;
__kernel void struct_fields(__global const Rec* r, __global float* o) {
  int i = get_global_id(0);
  Rec x = r[i];
  o[i] = x.tag > 0 ? x.val : (float)x.s;
}
// CHECK-LABEL: kernel struct_fields: 0 loops (max depth 0), 4 sites
// CHECK-NEXT: [0] load 1B depth 0: {{.*}} = load i8
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] load 2B depth 0: {{.*}} = load i16
// CHECK-NEXT: [3] store 4B
// IR-LABEL: define {{.*}} @struct_fields(
// IR-NOT: br i1
// IR: select i1
// IR-NOT: br i1
// IR: ret void

// The inner conditional folds; the outer one's second way then holds five instructions, over the
// budget of four, so it stays a branch: u is read on the first way, v and w on the second
// (NVPTX: ld f[i], bra, ld a[i] | ld b[i], ld c[i], selp).
__kernel void nested(__global const float* a, __global const float* b, __global const float* c,
                     __global const int* f, __global float* o) {
  int i = get_global_id(0);
  float u = a[i];
  float v = b[i];
  float w = c[i];
  int g = f[i];
  o[i] = g > 0 ? u : (g < 0 ? v : w);
}
// CHECK-LABEL: kernel nested: 0 loops (max depth 0), 5 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load i32
// IR-LABEL: define {{.*}} @nested(
// IR: load i32
// IR: br i1 %{{[0-9]+}}, label %[[FIRST:[0-9]+]], label %[[SECOND:[0-9]+]]
// IR: [[FIRST]]:
// IR-NEXT: load float, float addrspace(1)* %
// IR-NEXT: br label
// IR: [[SECOND]]:
// IR-NEXT: load float, float addrspace(1)* %
// IR-NEXT: load float, float addrspace(1)* %
// IR: select i1

// A way that computes more than the budget keeps the branch: v and w each on their way
// (NVPTX: ld f[i], bra, ld a[i] | ld b[i]).
__kernel void costly_way(__global const float* a, __global const float* b, __global const int* f,
                         __global float* o, float s, float t) {
  int i = get_global_id(0);
  float v = a[i];
  float w = b[i];
  o[i] = f[i] > 0 ? v : (w * s + t) * (w - s) * t;
}
// CHECK-LABEL: kernel costly_way: 0 loops (max depth 0), 4 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load i32
// IR-LABEL: define {{.*}} @costly_way(
// IR: br i1 %{{[0-9]+}}, label %[[FIRST:[0-9]+]], label %[[SECOND:[0-9]+]]
// IR: [[FIRST]]:
// IR-NEXT: load float, float addrspace(1)* %
// IR-NEXT: br label
// IR: [[SECOND]]:
// IR-NEXT: load float, float addrspace(1)* %
// IR-NOT: select
// IR: ret void

// An `if` on `&&` is branches, not a phi: nothing to fold; g[i] is read after the first test and
// a[i] in the inner way (NVPTX: ld f[i], bra, ld g[i], bra, ld a[i], st).
__kernel void and_then(__global const float* a, __global const int* f, __global const int* g,
                       __global float* o, int n) {
  int i = get_global_id(0);
  float v = a[i];
  int x = f[i];
  int y = g[i];
  if (x < n && y < n) o[i] = v;
}
// CHECK-LABEL: kernel and_then: 0 loops (max depth 0), 4 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [2] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [3] store 4B
// IR-LABEL: define {{.*}} @and_then(
// IR: br i1 %{{[0-9]+}}, label %[[SECOND:[0-9]+]], label
// IR: [[SECOND]]:
// IR-NEXT: load i32
// IR: br i1 %{{[0-9]+}}, label %[[THEN:[0-9]+]], label
// IR: [[THEN]]:
// IR-NEXT: load float

// Components of a vector read before a conditional, chosen by it: once SROA has made the vector a
// register the ways only extract, and clang -O2's later SimplifyCFG makes them a select (the
// vector load has two uses, in two ways, so InstCombine sinks it nowhere). Both components are
// read by every work-item (NVPTX: ld f[i], ld v[i].x, ld v[i].w, selp), not the chosen one.
__kernel void components_chosen(__global const float4* v, __global float* o, __global const int* f) {
  int i = get_global_id(0);
  float4 t = v[i];
  o[i] = f[i] ? t.x : t.w;
}
// CHECK-LABEL: kernel components_chosen: 0 loops (max depth 0), 4 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [3] store 4B
// IR-LABEL: define {{.*}} @components_chosen(
// IR-NOT: br i1
// IR: select i1
// IR-NOT: br i1
// IR: ret void

// The same with the test on a component (NVPTX: ld.v2 of x and y, ld z, selp).
__kernel void component_tested(__global const float4* v, __global float* o) {
  int i = get_global_id(0);
  float4 t = v[i];
  o[i] = t.x > 0.5f ? t.y : t.z;
}
// CHECK-LABEL: kernel component_tested: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 8B depth 0: {{.*}} = load <2 x float>
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] store 4B
// IR-LABEL: define {{.*}} @component_tested(
// IR-NOT: br i1
// IR: ret void

// Each way stores its own value to one address: the stores are one where the ways meet, and the
// ways, left computing only, a select, as clang -O2's later SimplifyCFG makes them; so t.z is read
// by every work-item (NVPTX: ld.v2 of t.x and t.y, ld t.z, selp, one st, the loads in another
// order), not on one way only.
__kernel void stored_either_way(__global const float4* v, __global float* o, __global const int* f) {
  int i = get_global_id(0);
  float4 t = v[i];
  if (f[i])
    o[i] = t.x + t.y;
  else
    o[i] = t.z;
}
// CHECK-LABEL: kernel stored_either_way: 0 loops (max depth 0), 4 sites
// CHECK-NEXT: [0] load 8B depth 0: {{.*}} = load <2 x float>
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [2] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [3] store 4B
// IR-LABEL: define {{.*}} @stored_either_way(
// IR-NOT: br i1
// IR: select i1
// IR-NOT: br i1
// IR: ret void
