// Structs copied whole through a private variable: the fields the kernel uses are loaded, the
// padding of one stored to global memory is not stored (its bytes hold no value), as a GPU
// compiler copies them.
// RUN: %clang-spir %s -o %t.bc
// RUN: %opt -passes=cltrace-prepare,cltrace-print-accesses -disable-output %t.bc | FileCheck %s

typedef struct { char a; int b; } padded;  // bytes 1-3 padding
// CHECK: kernel store_padded: 0 loops (max depth 0), 3 sites
// CHECK-NEXT: [0] load 4B depth 0:
// CHECK-NEXT: [1] store 1B depth 0: store i8
// CHECK-NEXT: [2] store 4B depth 0: store i32
__kernel void store_padded(__global padded* pd, __global const int* x) {
  int i = get_global_id(0);
  padded s;
  s.a = (char)i;
  s.b = x[i];
  pd[i] = s;
}

typedef struct { float a; int rest[3]; } wide;
// CHECK: kernel load_one_field: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] store 4B depth 0: store float
__kernel void load_one_field(__global float* out, __global const wide* ps) {
  int i = get_global_id(0);
  wide s = ps[i];
  out[i] = s.a;
}

// A 16-aligned struct copied between global buffers: two 8-byte loads and stores, each piece
// stored once loaded, as NVPTX lowers the copy (ld.global.u64, st.global.u64 twice); the
// load-store vectorizer does not join the two loads across the store between them.
typedef struct { float x, y, z, w; } __attribute__((aligned(16))) aligned16;
// CHECK: kernel copy_aligned16: 0 loops (max depth 0), 4 sites
// CHECK-NEXT: [0] load 8B depth 0: {{.*}} = load i64
// CHECK-NEXT: [1] store 8B depth 0: store i64
// CHECK-NEXT: [2] load 8B depth 0: {{.*}} = load i64
// CHECK-NEXT: [3] store 8B depth 0: store i64
__kernel void copy_aligned16(__global const aligned16* in, __global aligned16* out) {
  int i = get_global_id(0);
  out[i] = in[i];
}

// A 16-aligned struct copied through a private variable and changed: SROA keeps the field
// changed and leaves a 12-byte memcpy for the rest, which NVPTX lowers after its load-store
// vectorizer, so nothing joins those pieces with each other or with the field: four 4-byte
// loads and four 4-byte stores (NVPTX: ld.global.f32, three ld.global.u32, and as many st), not
// one 16-byte load and store.
// CHECK-LABEL: kernel changed_aligned16: 0 loops (max depth 0), 8 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [2] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [3] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [4] store 4B depth 0: store float
// CHECK-NEXT: [5] store 4B depth 0: store i32
// CHECK-NEXT: [6] store 4B depth 0: store i32
// CHECK-NEXT: [7] store 4B depth 0: store i32
__kernel void changed_aligned16(__global const aligned16* in, __global aligned16* out) {
  int i = get_global_id(0);
  aligned16 p = in[i];
  p.x += 1.0f;
  out[i] = p;
}

// The same, two fields changed: the 8 bytes between them are one memcpy of two 4-byte pieces
// (its source 4-aligned), kept apart too (NVPTX: f32, two u32, f32, loaded and stored).
// CHECK-LABEL: kernel two_changed_aligned16: 0 loops (max depth 0), 8 sites
// CHECK-NEXT: [0] load 4B depth 0: {{.*}} = load float
// CHECK-NEXT: [1] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [2] load 4B depth 0: {{.*}} = load i32
// CHECK-NEXT: [3] load 4B depth 0: {{.*}} = load float
__kernel void two_changed_aligned16(__global const aligned16* in, __global aligned16* out) {
  int i = get_global_id(0);
  aligned16 p = in[i];
  p.x += 1.0f;
  p.w += 2.0f;
  out[i] = p;
}

// Copied through a private variable unchanged: the copy's two 8-byte pieces each way (NVPTX:
// ld.global.u64 and st.global.u64 twice), not one 16-byte load and store.
// CHECK-LABEL: kernel through_private_aligned16: 0 loops (max depth 0), 4 sites
// CHECK-NEXT: [0] load 8B depth 0: {{.*}} = load i64
// CHECK-NEXT: [1] load 8B depth 0: {{.*}} = load i64
// CHECK-NEXT: [2] store 8B depth 0: store i64
// CHECK-NEXT: [3] store 8B depth 0: store i64
__kernel void through_private_aligned16(__global const aligned16* in, __global aligned16* out) {
  int i = get_global_id(0);
  aligned16 p = in[i];
  out[i] = p;
}

// Still joined: the fields read one by one (no copy left: SROA loads them), one 16-byte load
// (NVPTX: ld.global.v4.f32); and an 8-aligned pair with one field changed, whose other field is
// a 4-byte memcpy, which instcombine makes a plain load and store early, joined with the
// field's (NVPTX: ld.global.v2.f32, st.global.v2.f32).
// CHECK-LABEL: kernel fields_of_aligned16: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 16B depth 0: {{.*}} = load <4 x float>
__kernel void fields_of_aligned16(__global const aligned16* in, __global float* out) {
  int i = get_global_id(0);
  aligned16 p = in[i];
  out[i] = p.x + p.y + p.z + p.w;
}
typedef struct { float x, y; } __attribute__((aligned(8))) pair8;
// CHECK-LABEL: kernel changed_pair8: 0 loops (max depth 0), 2 sites
// CHECK-NEXT: [0] load 8B depth 0: {{.*}} = load <2 x float>
// CHECK-NEXT: [1] store 8B depth 0: store <2 x float>
__kernel void changed_pair8(__global const pair8* in, __global pair8* out) {
  int i = get_global_id(0);
  pair8 p = in[i];
  p.y *= 2.0f;
  out[i] = p;
}
